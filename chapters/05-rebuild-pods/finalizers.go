package controller

import (
	"context"
	"fmt"
	"slices"
	"strings"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	myappv1 "example.com/redis-operator/api/v1"
)

// FinalizerPrefix starts every finalizer this operator puts on a Redis: one
// per pod, "myapp.example.com/<pod name>". Finalizers must be qualified
// names; an unqualified one makes the API server warn on every write.
const FinalizerPrefix = myappv1.GroupName + "/"

// trackPods records pods as finalizers on the Redis with one patch. The
// optimistic lock makes the patch fail on a stale Redis instead of
// overwriting finalizers someone else added meanwhile; the retry reads again.
func (r *RedisReconciler) trackPods(ctx context.Context, redis *myappv1.Redis, names []string) error {
	if len(names) == 0 {
		return nil
	}
	base := redis.DeepCopy()
	for _, name := range names {
		controllerutil.AddFinalizer(redis, PodFinalizer(name))
	}
	if err := r.Patch(ctx, redis, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("recording pods %v in finalizers: %w", names, err)
	}
	return nil
}

// reconcileDelete deletes every recorded pod that the Redis controls, then
// removes the operator's finalizers so the API server can delete the Redis.
// A pod that is already gone counts as deleted: a Redis must never hang in
// Terminating because someone deleted a pod first.
func (r *RedisReconciler) reconcileDelete(ctx context.Context, redis *myappv1.Redis) (ctrl.Result, error) {
	log := ctrl.LoggerFrom(ctx)
	tracked := TrackedPods(redis)
	if len(tracked) == 0 {
		// Done already; what holds the Redis now is someone else's finalizer.
		return ctrl.Result{}, nil
	}
	for _, name := range tracked {
		if err := r.deletePod(ctx, redis, name); err != nil {
			return ctrl.Result{}, err
		}
	}

	// Build the list that is kept instead of removing entries while ranging
	// over the slice being shortened, which skips every other entry.
	base := redis.DeepCopy()
	redis.Finalizers = slices.DeleteFunc(slices.Clone(redis.Finalizers), isPodFinalizer)
	log.Info("Removing pod finalizers")
	if err := r.Patch(ctx, redis, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	return ctrl.Result{}, nil
}

// PodFinalizer is the finalizer that records the named pod.
func PodFinalizer(podName string) string {
	return FinalizerPrefix + podName
}

// TrackedPods returns the names of the pods recorded in a Redis' finalizers.
func TrackedPods(redis *myappv1.Redis) []string {
	var names []string
	for _, f := range redis.Finalizers {
		if isPodFinalizer(f) {
			names = append(names, strings.TrimPrefix(f, FinalizerPrefix))
		}
	}
	return names
}

func isPodFinalizer(finalizer string) bool {
	return strings.HasPrefix(finalizer, FinalizerPrefix)
}
