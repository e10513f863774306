package controller

// Event reasons. They are part of the operator's interface: users filter
// `kubectl get events` by them, so they never change once published.
const (
	// ReasonSuccessfulCreate is a Normal event: a pod was created, for the
	// first time or again (the operator keeps no record that would tell).
	ReasonSuccessfulCreate = "SuccessfulCreate"
	// ReasonFailedCreate is a Warning event: the API server refused a pod.
	ReasonFailedCreate = "FailedCreate"
	// ReasonSuccessfulDelete is a Normal event: a pod was deleted, because
	// its Redis was scaled down or the pod ended.
	ReasonSuccessfulDelete = "SuccessfulDelete"
	// ReasonErrResourceExists is a Warning event: a pod with the name the
	// Redis needs exists but is not controlled by it, so it is left alone.
	ReasonErrResourceExists = "ErrResourceExists"
)

// Condition types of a Redis' status, and their reasons. Like event
// reasons, they are an interface: people and tools wait on them.
const (
	// ConditionAvailable is True when every desired pod exists and is Ready.
	ConditionAvailable = "Available"
	// ConditionProgressing is True while pods are being created, deleted or
	// waited for.
	ConditionProgressing = "Progressing"

	// ReasonAllPodsReady: Available, every desired pod is Ready.
	ReasonAllPodsReady = "AllPodsReady"
	// ReasonPodsNotReady: not Available, some desired pods are missing or not Ready.
	ReasonPodsNotReady = "PodsNotReady"
	// ReasonCreatingPods: Progressing, fewer pods exist than desired.
	ReasonCreatingPods = "CreatingPods"
	// ReasonDeletingPods: Progressing, more pods exist than desired.
	ReasonDeletingPods = "DeletingPods"
	// ReasonWaitingForReadiness: Progressing, the pods exist, some are not Ready yet.
	ReasonWaitingForReadiness = "WaitingForReadiness"
	// ReasonComplete: not Progressing, the pods match the spec.
	ReasonComplete = "Complete"
)

// Labels put on every pod, so that `kubectl get pods -l` finds a Redis' pods.
const (
	// LabelName is the well-known label for the application's name.
	LabelName = "app.kubernetes.io/name"
	// LabelInstance names the Redis a pod belongs to.
	LabelInstance = "app.kubernetes.io/instance"
	// LabelManagedBy names the operator, so people know who creates these
	// pods; the operator's cache holds only the pods that carry it.
	LabelManagedBy = "app.kubernetes.io/managed-by"
	// ManagedBy is LabelManagedBy's value.
	ManagedBy = "redis-operator"
)
