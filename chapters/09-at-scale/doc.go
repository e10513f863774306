// Package controller is the Redis operator as of chapter 9, "at scale":
// chapter 8's controller, whose workqueue serves a cluster with a thousand
// Redis objects. Several Redis objects reconciled at once, a rebuild that
// goes ahead of the queue, one reconcile less for a forced delete, and a
// namespace being deleted that stops the creates.
//
// Every chapter directory holds a complete copy of the controller package,
// so that `diff` between two chapters shows exactly one lesson.
package controller
