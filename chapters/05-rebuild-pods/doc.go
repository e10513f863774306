// Package controller is the Redis operator as of chapter 5, "rebuild pods":
// creation checks the cluster instead of trusting the finalizers, so a pod
// deleted with `kubectl delete pod` comes back under the same name.
//
// Every chapter directory holds a complete copy of the controller package,
// so that `diff` between two chapters shows exactly one lesson.
package controller
