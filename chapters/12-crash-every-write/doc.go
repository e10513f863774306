// Package controller is the Redis operator as of chapter 12, "crash after
// every write": chapter 11's operator, unchanged. The chapter's lesson is
// a way of testing: crash the operator right after each of its writes in
// turn, start it again, and check that each step of a scenario ends as it
// does without a crash. The crashes are in the operator's test build
// (operator/faults, the build tag faults), never in this package or in
// the operator that ships.
//
// Every chapter directory holds a complete copy of the controller package,
// so that `diff` between two chapters shows exactly one lesson.
//
// +kubebuilder:webhookconfiguration:mutating=false,name=redis-operator-validating-webhook
package controller
