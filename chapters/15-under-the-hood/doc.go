// Package controller is the Redis operator as of chapter 15, "under the
// hood": the behaviour of chapter 9 on client-go alone, in the shape of
// Kubernetes' sample-controller.
package controller

// The operator's role: the same rights as chapter 9's, whose behaviour it
// has. Like chapter 9, it runs on your machine (make run 15): the rights
// of a Lease, for --leader-elect, come with chapter 10's role.
// +kubebuilder:rbac:groups=myapp.example.com,resources=redis,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=myapp.example.com,resources=redis/status,verbs=patch
// +kubebuilder:rbac:groups=myapp.example.com,resources=redis/finalizers,verbs=update
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
