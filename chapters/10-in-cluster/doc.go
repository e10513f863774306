// Package controller is the Redis operator as of chapter 10, "in the
// cluster": chapter 9's controller, run as a Deployment of two replicas.
// What changes here is how it runs: a leader that stops hands its Lease
// over at once, metrics are served over HTTPS to authorized callers only,
// and the RBAC role grants the Lease, the events and the reviews these
// need, in the operator's namespace where it can. The manifests are in
// config/.
//
// Every chapter directory holds a complete copy of the controller package,
// so that `diff` between two chapters shows exactly one lesson.
package controller
