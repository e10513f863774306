// Package controller is the Redis operator as of chapter 2, "finalizer
// tracking": every pod the operator creates is recorded as a finalizer on
// its Redis, and deleting the Redis deletes those pods before the
// finalizers are removed and the Redis goes.
//
// Every chapter directory holds a complete copy of the controller package,
// so that `diff` between two chapters shows exactly one lesson.
package controller
