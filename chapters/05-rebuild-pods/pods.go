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
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	myappv1 "example.com/redis-operator/api/v1"
)

// deletePod deletes the named pod if the Redis controls it. A pod that
// took a recorded name after ours was deleted is someone else's: it is left
// alone, with a Warning event. The UID precondition makes the API server
// refuse the delete if the pod was replaced after it was read; the retry
// reads again.
func (r *RedisReconciler) deletePod(ctx context.Context, redis *myappv1.Redis, name string) error {
	log := ctrl.LoggerFrom(ctx)
	pod := &corev1.Pod{}
	if err := r.Get(ctx, types.NamespacedName{Namespace: redis.Namespace, Name: name}, pod); err != nil {
		return client.IgnoreNotFound(err)
	}
	if !metav1.IsControlledBy(pod, redis) {
		r.Recorder.Eventf(redis, pod, corev1.EventTypeWarning, ReasonErrResourceExists, "DeletePod",
			"Pod %s is not controlled by this Redis; it is left alone", name)
		return nil
	}
	if !pod.DeletionTimestamp.IsZero() {
		return nil
	}
	log.Info("Deleting pod", "Pod", klog.KObj(pod))
	if err := r.Delete(ctx, pod, client.Preconditions{UID: &pod.UID}); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("deleting pod %s: %w", name, err)
	}
	r.Recorder.Eventf(redis, pod, corev1.EventTypeNormal, ReasonSuccessfulDelete, "DeletePod",
		"Deleted pod %s", name)
	return nil
}

// ensurePod creates the named pod unless it exists. The name is
// deterministic, so the API server refuses a second pod of that name with
// AlreadyExists: when the cache has not yet seen a pod created a moment ago,
// a later reconcile cannot create it twice.
func (r *RedisReconciler) ensurePod(ctx context.Context, redis *myappv1.Redis, name string) error {
	log := ctrl.LoggerFrom(ctx)

	existing := &corev1.Pod{}
	err := r.Get(ctx, types.NamespacedName{Namespace: redis.Namespace, Name: name}, existing)
	if err == nil {
		if !metav1.IsControlledBy(existing, redis) {
			// Never adopt what we do not control: it may be someone else's.
			r.Recorder.Eventf(redis, existing, corev1.EventTypeWarning, ReasonErrResourceExists, "CreatePod",
				"Pod %s already exists and is not controlled by this Redis", name)
			return fmt.Errorf("pod %s exists and is not controlled by Redis %s", name, redis.Name)
		}
		if !existing.DeletionTimestamp.IsZero() {
			// It is terminating; its delete event brings us back to rebuild it.
			log.V(1).Info("Waiting for pod to terminate before rebuilding it", "Pod", klog.KObj(existing))
		}
		return nil
	}
	if !apierrors.IsNotFound(err) {
		return fmt.Errorf("getting pod %s: %w", name, err)
	}

	pod, err := r.newPod(redis, name)
	if err != nil {
		return err
	}
	log.Info("Creating pod", "Pod", klog.KObj(pod))
	if err := r.Create(ctx, pod); err != nil {
		if apierrors.IsAlreadyExists(err) {
			// Our cache was behind: it had not seen a pod that exists. Ask
			// the API server whose pod it is.
			return r.checkExistingPod(ctx, redis, name)
		}
		if apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) {
			// The namespace is going, and the Redis with it: nothing to retry.
			return nil
		}
		r.Recorder.Eventf(redis, nil, corev1.EventTypeWarning, ReasonFailedCreate, "CreatePod",
			"Failed to create pod %s: %v", name, err)
		return fmt.Errorf("creating pod %s: %w", name, err)
	}
	// A recorded pod that had to be created was deleted behind our back.
	// Said only once the create succeeded: a create that finds the pod
	// there (the cache was behind) rebuilt nothing.
	reason, verb := ReasonSuccessfulCreate, "Created"
	if controllerutil.ContainsFinalizer(redis, PodFinalizer(name)) {
		reason, verb = ReasonSuccessfulRebuild, "Rebuilt"
	}
	r.Recorder.Eventf(redis, pod, corev1.EventTypeNormal, reason, "CreatePod",
		"%s pod %s", verb, name)
	return nil
}

// checkExistingPod reads the named pod from the API server, bypassing the
// cache, after a create found it already there. Usually it is the pod this
// Redis created a moment ago, which the cache has not seen yet: nothing to
// do, and nothing worth an error. A pod someone else controls gets the same
// Warning as when the cache shows it.
func (r *RedisReconciler) checkExistingPod(ctx context.Context, redis *myappv1.Redis, name string) error {
	existing := &corev1.Pod{}
	if err := r.APIReader.Get(ctx, types.NamespacedName{Namespace: redis.Namespace, Name: name}, existing); err != nil {
		// Gone again already: the retry creates it.
		return fmt.Errorf("reading pod %s after AlreadyExists: %w", name, err)
	}
	if !metav1.IsControlledBy(existing, redis) {
		r.Recorder.Eventf(redis, existing, corev1.EventTypeWarning, ReasonErrResourceExists, "CreatePod",
			"Pod %s already exists and is not controlled by this Redis", name)
		return fmt.Errorf("pod %s exists and is not controlled by Redis %s", name, redis.Name)
	}
	ctrl.LoggerFrom(ctx).V(1).Info("Pod exists already; the cache was behind", "Pod", klog.KObj(existing))
	return nil
}

// newPod builds the pod for one replica of a Redis, with a controller owner
// reference to the Redis: the garbage collector deletes the pod when the
// Redis is gone, and `kubectl get pod -o yaml` shows who manages it.
func (r *RedisReconciler) newPod(redis *myappv1.Redis, name string) (*corev1.Pod, error) {
	image := redis.Spec.Image
	if image == "" {
		image = myappv1.DefaultImage
	}
	pod := &corev1.Pod{
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
	if err := controllerutil.SetControllerReference(redis, pod, r.Scheme); err != nil {
		return nil, fmt.Errorf("setting the owner of pod %s: %w", name, err)
	}
	return pod, nil
}

// PodName is the name of the pod with the given index: <redis>-<index>.
func PodName(redis *myappv1.Redis, index int32) string {
	return redis.Name + "-" + strconv.Itoa(int(index))
}
