package controller

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	myappv1 "example.com/redis-operator/api/v1"
)

// podReady reports whether a pod's Ready condition is True.
func podReady(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// computeStatus is the status that pods (as the cache showed them at the
// start of the reconcile) give the Redis. It reads nothing else and writes
// nothing; now is the transition time of a condition that changes.
func computeStatus(redis *myappv1.Redis, pods []corev1.Pod, now metav1.Time) myappv1.RedisStatus {
	desired := redis.Spec.Replicas
	// ready counts all Ready pods, for status.readyReplicas; readyDesired
	// only those below spec.replicas, which are the ones Available is about
	// (a pod a scale-down is about to delete does not make up for one that
	// is not Ready).
	var existing, ready, readyDesired int32
	for _, p := range pods {
		if !p.DeletionTimestamp.IsZero() {
			continue
		}
		existing++
		if podReady(&p) {
			ready++
			if ordinal(redis, p.Name) < desired {
				readyDesired++
			}
		}
	}
	status := *redis.Status.DeepCopy()
	status.Replicas = existing
	status.ReadyReplicas = ready
	status.ObservedGeneration = redis.Generation
	status.Selector = labels.SelectorFromSet(selectorLabels(redis)).String()

	available := metav1.Condition{Type: ConditionAvailable, Status: metav1.ConditionTrue, Reason: ReasonAllPodsReady,
		Message: fmt.Sprintf("All %d pods are ready", desired)}
	if readyDesired < desired {
		available.Status, available.Reason = metav1.ConditionFalse, ReasonPodsNotReady
		available.Message = fmt.Sprintf("%d of %d pods are ready; `kubectl describe redis %s` shows the events", readyDesired, desired, redis.Name)
	}
	progressing := metav1.Condition{Type: ConditionProgressing, Status: metav1.ConditionTrue}
	switch {
	case existing < desired:
		progressing.Reason = ReasonCreatingPods
		progressing.Message = fmt.Sprintf("%d of %d pods exist", existing, desired)
	case existing > desired:
		progressing.Reason = ReasonDeletingPods
		progressing.Message = fmt.Sprintf("%d pods exist, %d desired", existing, desired)
	case readyDesired < desired:
		progressing.Reason = ReasonWaitingForReadiness
		progressing.Message = fmt.Sprintf("%d of %d pods are ready", readyDesired, desired)
	default:
		progressing.Status, progressing.Reason = metav1.ConditionFalse, ReasonComplete
		progressing.Message = fmt.Sprintf("All %d pods exist and are ready", desired)
	}
	for _, c := range []metav1.Condition{available, progressing} {
		c.ObservedGeneration = redis.Generation
		c.LastTransitionTime = now
		meta.SetStatusCondition(&status.Conditions, c)
	}
	return status
}

// updateStatus patches the Redis' status to status, only when that
// changes it: a Redis whose pods do not change causes no write. The
// patch comes back as an update event of the Redis, and so as one more
// reconcile, which computes the same status and writes nothing. That
// reconcile is also what corrects a status computed from a Redis that the
