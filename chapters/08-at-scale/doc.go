// Package controller is the Redis operator as of chapter 8, "at scale":
// chapter 7's controller, made for a cluster with a thousand Redis objects
// and many more pods than its own. Several Redis objects reconciled at
// once, a cache that holds only the operator's pods (and the labels of a
// pod that lost them put back), a rebuild that goes ahead of the queue, a
// namespace being deleted that stops the creates, and one reconcile less
// for a forced delete.
//
// Every chapter directory holds a complete copy of the controller package,
// so that `diff` between two chapters shows exactly one lesson.
package controller
