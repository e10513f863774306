// Package controller is the Redis operator as of chapter 4, "watch pod
// deletes": the controller also watches pods, and a deleted pod that a Redis
// controls makes that Redis be reconciled.
//
// Every chapter directory holds a complete copy of the controller package,
// so that `diff` between two chapters shows exactly one lesson.
package controller
