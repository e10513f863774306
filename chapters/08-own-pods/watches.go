package controller

import (
	"maps"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
)

// PodStatusChanged passes a pod's create and delete events, and its update
// events when its readiness, its phase, whether it is being deleted, or
// its labels changed (a pod whose labels were edited drops out of the
// Redis' status, or out of the cache). Most pod updates (the kubelet's
// condition timestamps, an annotation) change nothing that the Redis
// reports or acts on.
func PodStatusChanged() predicate.Predicate {
	return predicate.Funcs{
		UpdateFunc: func(e event.UpdateEvent) bool {
			oldPod, ok1 := e.ObjectOld.(*corev1.Pod)
			newPod, ok2 := e.ObjectNew.(*corev1.Pod)
			if !ok1 || !ok2 {
				return false
			}
			return podReady(oldPod) != podReady(newPod) || oldPod.Status.Phase != newPod.Status.Phase ||
				oldPod.DeletionTimestamp.IsZero() != newPod.DeletionTimestamp.IsZero() ||
				!maps.Equal(oldPod.Labels, newPod.Labels)
		},
	}
}
