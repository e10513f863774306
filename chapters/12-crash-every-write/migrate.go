package controller

import (
	"context"
	"slices"
	"strings"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	myappv1 "example.com/redis-operator/api/v1"
)

// LegacyFinalizerPrefix starts the finalizers that earlier versions of this
// operator put on a Redis, one per pod: "myapp.example.com/<pod name>".
// This version puts none, and removes those it finds.
const LegacyFinalizerPrefix = myappv1.GroupName + "/"

// removeLegacyFinalizers removes, in one patch, the per-pod finalizers of
// an earlier version, so that a cluster upgraded from it does not keep
// Redis objects that nothing will ever let go. They had one job, to make
// the operator delete the pods before the Redis went, and the owner
// references do that job without the operator. Only finalizers that name
// one of this Redis' pods are removed: another controller's finalizer is
// its business.
func (r *RedisReconciler) removeLegacyFinalizers(ctx context.Context, redis *myappv1.Redis) error {
	kept := slices.DeleteFunc(slices.Clone(redis.Finalizers), func(f string) bool {
		return isLegacyPodFinalizer(redis, f)
	})
	if len(kept) == len(redis.Finalizers) {
		return nil
	}
	base := redis.DeepCopy()
	redis.Finalizers = kept
	ctrl.LoggerFrom(ctx).Info("Removing the per-pod finalizers of an earlier version", "removed", len(base.Finalizers)-len(kept))
	// The optimistic lock makes the patch fail on a stale Redis instead
	// of overwriting a finalizer someone added meanwhile; the retry reads
	// again.
	return client.IgnoreNotFound(r.Patch(ctx, redis, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})))
}

// isLegacyPodFinalizer reports whether finalizer is "myapp.example.com/<redis>-<ordinal>".
func isLegacyPodFinalizer(redis *myappv1.Redis, finalizer string) bool {
	name, ok := strings.CutPrefix(finalizer, LegacyFinalizerPrefix)
	return ok && ordinal(redis, name) >= 0
}
