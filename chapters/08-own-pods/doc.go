// Package controller is the Redis operator as of chapter 8, "own pods":
// chapter 7's controller, whose cache holds only the pods it created, the
// ones labelled as managed by it, and not every pod of the cluster. A pod
// of its own that lost the label gets it back.
//
// Every chapter directory holds a complete copy of the controller package,
// so that `diff` between two chapters shows exactly one lesson.
package controller
