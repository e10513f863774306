package controller

import (
	"context"
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"

	myappv1 "example.com/redis-operator/api/v1"
)

// ensurePod creates the named pod unless it exists. The name is
// deterministic, so the API server refuses a second pod of that name with
// AlreadyExists: when the cache has not yet seen a pod created a moment ago,
// a later reconcile cannot create it twice.
func (r *RedisReconciler) ensurePod(ctx context.Context, redis *myappv1.Redis, name string) error {
	log := ctrl.LoggerFrom(ctx)

	existing := &corev1.Pod{}
	err := r.Get(ctx, types.NamespacedName{Namespace: redis.Namespace, Name: name}, existing)
	if err == nil {
		return nil
	}
	if !apierrors.IsNotFound(err) {
		return fmt.Errorf("getting pod %s: %w", name, err)
	}

	pod := r.newPod(redis, name)
	log.Info("Creating pod", "Pod", klog.KObj(pod))
	if err := r.Create(ctx, pod); err != nil {
		if apierrors.IsAlreadyExists(err) {
			// Our cache was behind: someone created it a moment ago.
			return nil
		}
		if apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) {
			// The namespace is going, and the Redis with it: nothing to retry.
			return nil
		}
		r.Recorder.Eventf(redis, nil, corev1.EventTypeWarning, ReasonFailedCreate, "CreatePod",
			"Failed to create pod %s: %v", name, err)
		return fmt.Errorf("creating pod %s: %w", name, err)
	}
	r.Recorder.Eventf(redis, pod, corev1.EventTypeNormal, ReasonSuccessfulCreate, "CreatePod",
		"Created pod %s", name)
	return nil
}

// newPod builds the pod for one replica of a Redis.
func (r *RedisReconciler) newPod(redis *myappv1.Redis, name string) *corev1.Pod {
	image := redis.Spec.Image
	if image == "" {
		image = myappv1.DefaultImage
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: redis.Namespace,
			Name:      name,
			Labels: map[string]string{
				LabelName:      "redis",
				LabelInstance:  redis.Name,
				LabelManagedBy: "redis-operator",
			},
		},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{
				Name:  "redis",
				Image: image,
				Ports: []corev1.ContainerPort{{Name: "redis", ContainerPort: 6379}},
			}},
		},
	}
}

// PodName is the name of the pod with the given index: <redis>-<index>.
func PodName(redis *myappv1.Redis, index int32) string {
	return redis.Name + "-" + strconv.Itoa(int(index))
}
