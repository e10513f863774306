// Package controller is the Redis operator as of chapter 1, "create pods":
// a Redis asks for spec.replicas pods and the reconciler creates the ones
// that are missing, under deterministic names <redis>-0 to <redis>-(N-1).
//
// Every chapter directory holds a complete copy of the controller package,
// so that `diff` between two chapters shows exactly one lesson.
package controller
