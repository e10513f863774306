package controller

import (
	"context"
	"maps"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	myappv1 "example.com/redis-operator/api/v1"
)

// podHandler enqueues the Redis that controls a pod, as Owns does, and
// puts it ahead of the others when the pod was deleted.
func podHandler(scheme *runtime.Scheme, mapper meta.RESTMapper) handler.EventHandler {
	return rebuildFirst(handler.EnqueueRequestForOwner(scheme, mapper, &myappv1.Redis{}, handler.OnlyControllerOwner()))
}

// RebuildPriority is the priority in the workqueue of a Redis whose pod
// was deleted. controller-runtime's queue hands out the highest priority
// first, and in the order of arrival within one priority. A new Redis, a
// pod's create or update, a spec change have priority 0; the objects of
// the cache's first list and its resyncs have handler.LowPriority.
const RebuildPriority = 10

// rebuildFirst passes the events of pods to h, the delete events with
// RebuildPriority: a pod that is gone is a Redis short of a replica, which
// should not wait behind a thousand new Redis objects to get it back.
// Without a priority queue (controller.Options.UsePriorityQueue set to
// false), it changes nothing.
func rebuildFirst(h handler.EventHandler) handler.EventHandler {
	return handler.Funcs{
		CreateFunc:  h.Create,
		UpdateFunc:  h.Update,
		GenericFunc: h.Generic,
		DeleteFunc: func(ctx context.Context, e event.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			if pq, ok := q.(priorityqueue.PriorityQueue[reconcile.Request]); ok {
				q = withPriority{pq, RebuildPriority}
			}
			h.Delete(ctx, e, q)
		},
	}
}

// withPriority is a priority queue whose Add adds with the given priority.
type withPriority struct {
	priorityqueue.PriorityQueue[reconcile.Request]
	priority int
}

func (q withPriority) Add(item reconcile.Request) {
	q.AddWithOpts(priorityqueue.AddOpts{Priority: &q.priority}, item)
}

// PodStatusChanged passes a pod's create and delete events, and its update
// events when its readiness, its phase, whether it is being deleted, or
// its labels changed (a pod whose labels were edited drops out of the
// Redis' status, or out of the cache). Most pod updates (the kubelet's
// condition timestamps, an annotation) change nothing that the Redis
// reports or acts on.
//
// An update that starts a deletion without a grace period
// (`--grace-period=0 --force`) is dropped too: see goneAtOnce.
func PodStatusChanged() predicate.Predicate {
	return predicate.Funcs{
		UpdateFunc: func(e event.UpdateEvent) bool {
			oldPod, ok1 := e.ObjectOld.(*corev1.Pod)
			newPod, ok2 := e.ObjectNew.(*corev1.Pod)
			if !ok1 || !ok2 || goneAtOnce(newPod) {
				return false
			}
			return podReady(oldPod) != podReady(newPod) || oldPod.Status.Phase != newPod.Status.Phase ||
				oldPod.DeletionTimestamp.IsZero() != newPod.DeletionTimestamp.IsZero() ||
				!maps.Equal(oldPod.Labels, newPod.Labels)
		},
	}
}

// goneAtOnce reports whether a pod is deleted in the very request that
// set its deletion timestamp: no grace period and no finalizer. The API
// server sends an update event with the timestamp, then the delete event
// right after it. The delete event alone brings the Redis back, first in
// the queue; the update would bring it back at priority 0 and, by the
// reconcile it asks for, hold up the create that the delete asks for (the
// workqueue hands a Redis to one worker at a time).
func goneAtOnce(pod *corev1.Pod) bool {
	return !pod.DeletionTimestamp.IsZero() && pod.DeletionGracePeriodSeconds != nil &&
		*pod.DeletionGracePeriodSeconds == 0 && len(pod.Finalizers) == 0
}
