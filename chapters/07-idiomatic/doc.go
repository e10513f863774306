// Package controller is the Redis operator as of chapter 7, "idiomatic":
// the behaviour of chapter 6, written the way controller authors write it
// today. No finalizer per pod (owner references and the garbage collector
// clean up, and the per-pod finalizers of chapter 6 are removed), Owns
// with predicates instead of a hand-written handler, reconciles of several
// Redis objects at once, and a cache that holds only the operator's pods.
//
// Every chapter directory holds a complete copy of the controller package,
// so that `diff` between two chapters shows exactly one lesson.
package controller
