// Package controller is the Redis operator as of chapter 11, "faults":
// chapter 10's operator, with faults that environment variables switch
// on (faults.go) so that a test can crash it after any one of its writes,
// refuse its writes with 409 Conflict, and hold its view of the pods.
// Production never sets them; the chapter's suite uses them to show that
// the reconciler converges to the same pods whatever fault it meets.
//
// Every chapter directory holds a complete copy of the controller package,
// so that `diff` between two chapters shows exactly one lesson.
//
// +kubebuilder:webhookconfiguration:mutating=false,name=redis-operator-validating-webhook
package controller
