package controller

import (
	"context"
	"errors"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

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

// The finalizers subresource is not for finalizers of the Redis' own: with
// the OwnerReferencesPermissionEnforcement admission plugin (on in the
// course's clusters, as in hardened ones), the API server requires update
// on it to set blockOwnerDeletion in a pod's owner reference to a Redis.
// Patching pods restores the labels of a pod that lost them (see
// restoreLabels).
// +kubebuilder:rbac:groups=myapp.example.com,resources=redis,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=myapp.example.com,resources=redis/status,verbs=patch
// +kubebuilder:rbac:groups=myapp.example.com,resources=redis/finalizers,verbs=update
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconcile reads a Redis and makes its pods match the spec: it creates the
// missing ones, deletes those above spec.replicas and replaces those that
// ended, then writes what it saw into the status. It keeps no record of
// the pods: what it needs to know, it reads from them. Deleting a Redis
// needs nothing from it: the garbage collector deletes the pods that the
// Redis owns.
func (r *RedisReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	redis := &myappv1.Redis{}
	if err := r.Get(ctx, req.NamespacedName, redis); err != nil {
		// Not found means the Redis is gone and there is nothing left to do;
		// any other error is returned so the request is retried with backoff.
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if err := r.removeLegacyFinalizers(ctx, redis); err != nil {
		return ctrl.Result{}, err
	}
	if !redis.DeletionTimestamp.IsZero() {
		// The garbage collector deletes the pods once the Redis is gone; a
		// pod created now would only be deleted with them.
		return ctrl.Result{}, nil
	}

	pods, err := r.ownPods(ctx, redis)
	if err != nil {
		return ctrl.Result{}, err
	}
	var errs []error
	for _, name := range excessPods(redis, pods) {
		errs = append(errs, r.deletePod(ctx, redis, name, fmt.Sprintf("scaled down to %d", redis.Spec.Replicas)))
	}
	for _, pod := range pods {
		if ordinal(redis, pod.Name) < redis.Spec.Replicas && podEnded(&pod) && pod.DeletionTimestamp.IsZero() {
			// Its delete event brings us back to create it again, as the
			// StatefulSet controller replaces a failed pod.
			errs = append(errs, r.deletePod(ctx, redis, pod.Name, fmt.Sprintf("it ended (phase %s)", pod.Status.Phase)))
		}
	}
	for i := range redis.Spec.Replicas {
		err := r.ensurePod(ctx, redis, PodName(redis, i))
		if errors.Is(err, errNamespaceTerminating) {
			// The namespace is going, and the Redis with it: the API
			// server would refuse every other pod too, and there is
			// nothing to retry.
			return ctrl.Result{}, errors.Join(errs...)
		}
		// One pod that cannot be created does not hold up the others.
		errs = append(errs, err)
	}
	errs = append(errs, r.updateStatus(ctx, redis, computeStatus(redis, pods, metav1.Now())))
	return ctrl.Result{}, errors.Join(errs...)
}
