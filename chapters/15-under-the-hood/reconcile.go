package controller

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	ctrl "sigs.k8s.io/controller-runtime"

	myappv1 "example.com/redis-operator/api/v1"
)

// reconcile is chapter 9's Reconcile, on the listers, the clientset and
// the dynamic client.
func (c *Controller) reconcile(ctx context.Context, key cache.ObjectName) error {
	redis, err := c.redisFor(key)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := c.removeLegacyFinalizers(ctx, redis); err != nil {
		return err
	}
	if !redis.DeletionTimestamp.IsZero() {
		return nil
	}
	pods, err := c.ownPods(redis)
	if err != nil {
		return err
	}
	var errs []error
	for _, name := range excessPods(redis, pods) {
		errs = append(errs, c.deletePod(ctx, redis, name, fmt.Sprintf("scaled down to %d", redis.Spec.Replicas)))
	}
	for _, pod := range pods {
		if ordinal(redis, pod.Name) < redis.Spec.Replicas && podEnded(&pod) && pod.DeletionTimestamp.IsZero() {
			errs = append(errs, c.deletePod(ctx, redis, pod.Name, fmt.Sprintf("it ended (phase %s)", pod.Status.Phase)))
		}
	}
	for i := range redis.Spec.Replicas {
		err := c.ensurePod(ctx, redis, PodName(redis, i))
		if errors.Is(err, errNamespaceTerminating) {
			return errors.Join(errs...)
		}
		errs = append(errs, err)
	}
	errs = append(errs, c.updateStatus(ctx, redis, computeStatus(redis, pods, metav1.Now())))
	return errors.Join(errs...)
}

// updateStatus writes the status through the status subresource, with a
// merge patch of the status alone, when it changed.
func (c *Controller) updateStatus(ctx context.Context, redis *myappv1.Redis, status myappv1.RedisStatus) error {
	if equality.Semantic.DeepEqual(status, redis.Status) {
		return nil
	}
	patch, err := json.Marshal(map[string]any{"status": status})
	if err != nil {
		return err
	}
	_, err = c.dynamic.Resource(redisResource).Namespace(redis.Namespace).
		Patch(ctx, redis.Name, types.MergePatchType, patch, metav1.PatchOptions{}, "status")
	if ignoreNotFound(err) != nil {
		return fmt.Errorf("updating the status: %w", err)
	}
	return nil
}

// LegacyFinalizerPrefix starts the per-pod finalizers of chapters 2 to 6.
const LegacyFinalizerPrefix = myappv1.GroupName + "/"

// removeLegacyFinalizers removes chapter 6's per-pod finalizers in one
// merge patch that carries the resourceVersion it read: the API server
// refuses it with a conflict if the Redis changed meanwhile.
func (c *Controller) removeLegacyFinalizers(ctx context.Context, redis *myappv1.Redis) error {
	kept := slices.DeleteFunc(slices.Clone(redis.Finalizers), func(f string) bool {
		return isLegacyPodFinalizer(redis, f)
	})
	if len(kept) == len(redis.Finalizers) {
		return nil
	}
	ctrl.LoggerFrom(ctx).Info("Removing the per-pod finalizers of an earlier version", "removed", len(redis.Finalizers)-len(kept))
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
		"finalizers": kept, "resourceVersion": redis.ResourceVersion,
	}})
	if err != nil {
		return err
	}
	_, err = c.dynamic.Resource(redisResource).Namespace(redis.Namespace).
		Patch(ctx, redis.Name, types.MergePatchType, patch, metav1.PatchOptions{})
	return ignoreNotFound(err)
}

// isLegacyPodFinalizer reports whether finalizer is "myapp.example.com/<redis>-<ordinal>".
func isLegacyPodFinalizer(redis *myappv1.Redis, finalizer string) bool {
	name, ok := strings.CutPrefix(finalizer, LegacyFinalizerPrefix)
	return ok && ordinal(redis, name) >= 0
}
