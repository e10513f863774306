// Package controller is the Redis operator as of chapter 6, "scale and
// status": spec.replicas works both ways, a pod that ended is replaced, and
// the Redis' status (replicas, ready replicas, conditions) says what is
// there, so `kubectl get redis` and `kubectl scale` work.
//
// Every chapter directory holds a complete copy of the controller package,
// so that `diff` between two chapters shows exactly one lesson.
package controller
