package controller

import (
	"maps"

	corev1 "k8s.io/api/core/v1"
)

// podChanged is chapter 9's PodStatusChanged, as a plain function that the
// pod informer's update handler calls: a change of readiness, phase,
// deletion or labels, but not the update of a pod deleted at once.
func podChanged(oldPod, newPod *corev1.Pod) bool {
	if goneAtOnce(newPod) {
		return false
	}
	return podReady(oldPod) != podReady(newPod) || oldPod.Status.Phase != newPod.Status.Phase ||
		oldPod.DeletionTimestamp.IsZero() != newPod.DeletionTimestamp.IsZero() ||
		!maps.Equal(oldPod.Labels, newPod.Labels)
}

// goneAtOnce reports whether a pod is deleted in the very request that
// set its deletion timestamp: no grace period and no finalizer. The API
// server sends an update event with the timestamp, then the delete event
// right after it. The delete event alone brings the Redis back; the update
// would bring it back too and, by the reconcile it asks for, could hold up
// the create that the delete asks for (the workqueue hands a Redis to one
// worker at a time).
func goneAtOnce(pod *corev1.Pod) bool {
	return !pod.DeletionTimestamp.IsZero() && pod.DeletionGracePeriodSeconds != nil &&
		*pod.DeletionGracePeriodSeconds == 0 && len(pod.Finalizers) == 0
}
