// Package controller is the Redis operator as of chapter 12, "faults":
// chapter 11's operator, unchanged. The chapter's lesson is a method of
// testing: crash the operator after each of its writes, refuse its writes
// with 409 Conflict, hold its view of the pods, and check that it
// converges to the same pods whatever fault it meets. The faults are in
// the operator's test build (operator/faults, the build tag faults), never
// in this package or in the operator that ships.
//
// Every chapter directory holds a complete copy of the controller package,
// so that `diff` between two chapters shows exactly one lesson.
//
// +kubebuilder:webhookconfiguration:mutating=false,name=redis-operator-validating-webhook
package controller
