package controller

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	myappv1 "example.com/redis-operator/api/v1"
)

// podHandler returns the pod event handler that SetupWithManager
// registers. The unit tests call it too, so that they test the handler the
// controller runs, not a copy of it.
func podHandler() handler.EventHandler {
	return handler.Funcs{DeleteFunc: enqueueOwningRedis}
}

// enqueueOwningRedis is the pod delete handler. Like every handler it only
// enqueues a request; deciding what to do is Reconcile's job.
func enqueueOwningRedis(_ context.Context, e event.TypedDeleteEvent[client.Object],
	q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	if req, ok := OwningRedis(e.Object); ok {
		q.Add(req)
	}
}

// OwningRedis returns the request for the Redis that controls obj. Owners of
// another kind, or of a kind named Redis in another API group, are not ours.
func OwningRedis(obj client.Object) (reconcile.Request, bool) {
	owner := metav1.GetControllerOf(obj)
	if owner == nil || owner.Kind != "Redis" {
		return reconcile.Request{}, false
	}
	gv, err := schema.ParseGroupVersion(owner.APIVersion)
	if err != nil || gv.Group != myappv1.GroupVersion.Group {
		return reconcile.Request{}, false
	}
	return reconcile.Request{NamespacedName: types.NamespacedName{Namespace: obj.GetNamespace(), Name: owner.Name}}, true
}
