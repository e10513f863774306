package controller

import (
	"context"
	"errors"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	myappv1 "example.com/redis-operator/api/v1"
)

// RedisReconciler makes the pods of a Redis exist.
type RedisReconciler struct {
	client.Client
	// APIReader reads from the API server, not the cache. It is used only
	// when the cache is known to be behind.
	APIReader client.Reader
	Scheme    *runtime.Scheme
	Recorder  events.EventRecorder
}

// +kubebuilder:rbac:groups=myapp.example.com,resources=redis,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=myapp.example.com,resources=redis/finalizers,verbs=update
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconcile reads a Redis and creates whichever of its pods are missing, or,
// once the Redis is being deleted, deletes the pods it recorded. It is
// level-based: it never asks what happened, only what is.
func (r *RedisReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	redis := &myappv1.Redis{}
	if err := r.Get(ctx, req.NamespacedName, redis); err != nil {
		// Not found means the Redis is gone and there is nothing left to do;
		// any other error is returned so the request is retried with backoff.
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !redis.DeletionTimestamp.IsZero() {
		return r.reconcileDelete(ctx, redis)
	}
	return r.reconcileNormal(ctx, redis)
}

// reconcileNormal creates the pods <name>-0 to <name>-(replicas-1) that are
// not recorded in the finalizers yet, then records them. A recorded pod is
// trusted to exist and never looked at again: that is the design this
// chapter teaches, and its flaw.
func (r *RedisReconciler) reconcileNormal(ctx context.Context, redis *myappv1.Redis) (ctrl.Result, error) {
	var created []string
	var errs []error
	for i := int32(0); i < redis.Spec.Replicas; i++ {
		name := PodName(redis, i)
		if controllerutil.ContainsFinalizer(redis, PodFinalizer(name)) {
			continue
		}
		// One pod that cannot be created does not hold up the others.
		if err := r.ensurePod(ctx, redis, name); err != nil {
			errs = append(errs, err)
			continue
		}
		created = append(created, name)
	}
	// Record what exists even when another pod failed, so the retry does
	// not lose track of it.
	if err := r.trackPods(ctx, redis, created); err != nil {
		errs = append(errs, err)
	}
	return ctrl.Result{}, errors.Join(errs...)
}
