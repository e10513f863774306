// Package controller is the Redis operator as of chapter 7, "idiomatic":
// the behaviour of chapter 6, written the way controller authors write it
// today. No finalizer per pod (owner references and the garbage collector
// clean up, and migrate.go removes the per-pod finalizers an earlier
// version left), Owns with a predicate instead of a hand-written handler,
// and the status as a pure function of the Redis and its pods.
//
// Every chapter directory holds a complete copy of the controller package,
// so that `diff` between two chapters shows exactly one lesson.
package controller
