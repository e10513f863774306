// Package controller is the Redis operator as of chapter 3, "owner
// references": every pod carries a controller owner reference to its Redis,
// so Kubernetes knows who owns it, the garbage collector can clean up after
// a Redis, and the operator refuses to take over a pod it does not control.
//
// Every chapter directory holds a complete copy of the controller package,
// so that `diff` between two chapters shows exactly one lesson.
package controller
