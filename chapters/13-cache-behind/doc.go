// Package controller is the Redis operator as of chapter 13, "a cache
// behind and writes refused": chapter 11's operator, unchanged. The
// chapter's lesson is two faults the operator's test build injects: a pod
// watch held, so that the cache is behind the cluster, and each write
// refused once with 409 Conflict. The operator must delete no pod it did
// not make (the UID precondition of its deletes) and make a refused write
// again.
//
// Every chapter directory holds a complete copy of the controller package,
// so that `diff` between two chapters shows exactly one lesson.
//
// +kubebuilder:webhookconfiguration:mutating=false,name=redis-operator-validating-webhook
package controller
