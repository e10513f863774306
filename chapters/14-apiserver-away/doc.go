// Package controller is the Redis operator as of chapter 14, "the API
// server goes away": chapter 11's operator, unchanged. The chapter's
// lesson is the cluster's fault: the API server stopped and started
// again. Without leader election the operator must live through it, its
// watches back and its liveness probe answering; with it, it must give
// its Lease up, exit, and, started again, take the Lease over.
//
// Every chapter directory holds a complete copy of the controller package,
// so that `diff` between two chapters shows exactly one lesson.
//
// +kubebuilder:webhookconfiguration:mutating=false,name=redis-operator-validating-webhook
package controller
