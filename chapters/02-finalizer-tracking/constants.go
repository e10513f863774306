package controller

// Event reasons. They are part of the operator's interface: users filter
// `kubectl get events` by them, so they never change once published.
const (
	// ReasonSuccessfulCreate is a Normal event: a pod was created.
	ReasonSuccessfulCreate = "SuccessfulCreate"
	// ReasonFailedCreate is a Warning event: the API server refused a pod.
	ReasonFailedCreate = "FailedCreate"
	// ReasonSuccessfulDelete is a Normal event: a pod was deleted because its
	// Redis is being deleted.
	ReasonSuccessfulDelete = "SuccessfulDelete"
)

// Labels put on every pod, so that `kubectl get pods -l` finds a Redis' pods.
const (
	// LabelName is the well-known label for the application's name.
	LabelName = "app.kubernetes.io/name"
	// LabelInstance names the Redis a pod belongs to.
	LabelInstance = "app.kubernetes.io/instance"
	// LabelManagedBy names the operator, so people know who creates these pods.
	LabelManagedBy = "app.kubernetes.io/managed-by"
)
