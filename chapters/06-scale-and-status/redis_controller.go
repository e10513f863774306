package controller

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	myappv1 "example.com/redis-operator/api/v1"
)

// RedisReconciler makes the pods of a Redis match its spec and reports
// what it sees in the Redis' status.
type RedisReconciler struct {
	client.Client
	// APIReader reads from the API server, not the cache. It is used only
	// when the cache is known to be behind.
	APIReader client.Reader
	Scheme    *runtime.Scheme
	Recorder  events.EventRecorder
}

// +kubebuilder:rbac:groups=myapp.example.com,resources=redis,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=myapp.example.com,resources=redis/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=myapp.example.com,resources=redis/finalizers,verbs=update
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconcile reads a Redis and makes its pods match the spec: it creates the
// missing ones, deletes those above spec.replicas and replaces those that
// ended, then writes what it saw into the status; or, once the Redis is
// being deleted, it deletes the pods it recorded. It is level-based: it
// never asks what happened, only what is.
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

// reconcileNormal makes the pods <name>-0 to <name>-(replicas-1) exist,
// asking the cluster rather than the finalizers, deletes the pods and
// forgets the records above spec.replicas (the highest first), deletes
// pods that ended so that they are created again, and updates the
// tracking and the status.
func (r *RedisReconciler) reconcileNormal(ctx context.Context, redis *myappv1.Redis) (ctrl.Result, error) {
	pods, err := r.ownPods(ctx, redis)
	if err != nil {
		return ctrl.Result{}, err
	}
	var errs []error

	var forget []string
	for _, name := range excessPods(redis, pods) {
		if err := r.deletePod(ctx, redis, name, fmt.Sprintf("scaled down to %d", redis.Spec.Replicas)); err != nil {
			errs = append(errs, err)
			continue
		}
		forget = append(forget, name)
	}

	for _, pod := range pods {
		if ordinal(redis, pod.Name) < redis.Spec.Replicas && podEnded(&pod) && pod.DeletionTimestamp.IsZero() {
			// Its delete event brings us back to create it again, as the
			// StatefulSet controller replaces a failed pod.
			if err := r.deletePod(ctx, redis, pod.Name, fmt.Sprintf("it ended (phase %s)", pod.Status.Phase)); err != nil {
				errs = append(errs, err)
			}
		}
	}

	var created []string
	for i := int32(0); i < redis.Spec.Replicas; i++ {
		name := PodName(redis, i)
		// One pod that cannot be created does not hold up the others.
		there, err := r.ensurePod(ctx, redis, name)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if there && !controllerutil.ContainsFinalizer(redis, PodFinalizer(name)) {
			created = append(created, name)
		}
	}
	// Record what exists even when another pod failed, so the retry does
	// not lose track of it.
	if err := r.trackPods(ctx, redis, created, forget); err != nil {
		errs = append(errs, err)
	}
	if err := r.updateStatus(ctx, redis, pods); err != nil {
		errs = append(errs, err)
	}
	return ctrl.Result{}, errors.Join(errs...)
}
