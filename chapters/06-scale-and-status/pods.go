package controller

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

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

// ownPods lists, from the cache, the pods this Redis controls.
func (r *RedisReconciler) ownPods(ctx context.Context, redis *myappv1.Redis) ([]corev1.Pod, error) {
	list := &corev1.PodList{}
	if err := r.List(ctx, list, client.InNamespace(redis.Namespace), client.MatchingLabels(selectorLabels(redis))); err != nil {
		return nil, fmt.Errorf("listing the pods of Redis %s: %w", redis.Name, err)
	}
	pods := slices.DeleteFunc(list.Items, func(p corev1.Pod) bool { return !metav1.IsControlledBy(&p, redis) })
	return pods, nil
}

// excessPods returns the names above spec.replicas, of pods that exist or
// are recorded, highest ordinal first: a scale-down removes the newest
// pods first, as a StatefulSet's does.
func excessPods(redis *myappv1.Redis, pods []corev1.Pod) []string {
	names := map[string]bool{}
	for _, p := range pods {
		names[p.Name] = true
	}
	for _, name := range TrackedPods(redis) {
		names[name] = true
	}
	var excess []string
	for name := range names {
		if ordinal(redis, name) >= redis.Spec.Replicas {
			excess = append(excess, name)
		}
	}
	slices.SortFunc(excess, func(a, b string) int { return int(ordinal(redis, b) - ordinal(redis, a)) })
	return excess
}

// ordinal is the index in a pod name <redis>-<index>, or -1 for a name
// of another form.
func ordinal(redis *myappv1.Redis, podName string) int32 {
	suffix, ok := strings.CutPrefix(podName, redis.Name+"-")
	if !ok {
		return -1
	}
	i, err := strconv.ParseInt(suffix, 10, 32)
	if err != nil || strconv.FormatInt(i, 10) != suffix {
		return -1
	}
	return int32(i)
}

// podEnded reports whether all of a pod's containers have stopped for good:
// an evicted pod, for example, is Failed and never runs again.
func podEnded(pod *corev1.Pod) bool {
	return pod.Status.Phase == corev1.PodFailed || pod.Status.Phase == corev1.PodSucceeded
}

// deletePod deletes the named pod if the Redis controls it; why says why,
// in the event. It returns nil once the pod is gone or going, so that the
// caller may forget it: a pod the cache has not seen yet (created a moment
// ago) is looked up on the API server before it counts as gone. A pod that
// took a recorded name after ours was deleted is someone else's: it is
// left alone, with a Warning event. The UID precondition makes the API
// server refuse the delete if the pod was replaced after it was read; the
// retry reads again.
func (r *RedisReconciler) deletePod(ctx context.Context, redis *myappv1.Redis, name, why string) error {
	log := ctrl.LoggerFrom(ctx)
	key := types.NamespacedName{Namespace: redis.Namespace, Name: name}
	pod := &corev1.Pod{}
	err := r.Get(ctx, key, pod)
	if apierrors.IsNotFound(err) {
		err = r.APIReader.Get(ctx, key, pod)
	}
	if err != nil {
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
	log.Info("Deleting pod", "Pod", klog.KObj(pod), "why", why)
	if err := r.Delete(ctx, pod, client.Preconditions{UID: &pod.UID}); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("deleting pod %s: %w", name, err)
	}
	r.Recorder.Eventf(redis, pod, corev1.EventTypeNormal, ReasonSuccessfulDelete, "DeletePod",
		"Deleted pod %s: %s", name, why)
	return nil
}

// ensurePod creates the named pod unless it exists, and reports whether a
// pod of that name that the Redis controls is there and not going away,
// which is when it may be recorded. (A pod still terminating after a
// scale-down is not: recorded, its replacement would be called a rebuild.)
// The name is deterministic, so the API server refuses a second pod of
// that name with AlreadyExists: when the cache has not yet seen a pod
// created a moment ago, a later reconcile cannot create it twice.
func (r *RedisReconciler) ensurePod(ctx context.Context, redis *myappv1.Redis, name string) (bool, error) {
	log := ctrl.LoggerFrom(ctx)

	existing := &corev1.Pod{}
	err := r.Get(ctx, types.NamespacedName{Namespace: redis.Namespace, Name: name}, existing)
	if err == nil {
		if !metav1.IsControlledBy(existing, redis) {
			// Never adopt what we do not control: it may be someone else's.
			r.Recorder.Eventf(redis, existing, corev1.EventTypeWarning, ReasonErrResourceExists, "CreatePod",
				"Pod %s already exists and is not controlled by this Redis", name)
			return false, fmt.Errorf("pod %s exists and is not controlled by Redis %s", name, redis.Name)
		}
		if !existing.DeletionTimestamp.IsZero() {
			// It is terminating; its delete event brings us back to create it.
			log.V(1).Info("Waiting for pod to terminate before creating it again", "Pod", klog.KObj(existing))
			return false, nil
		}
		return true, nil
	}
	if !apierrors.IsNotFound(err) {
		return false, fmt.Errorf("getting pod %s: %w", name, err)
	}

	pod, err := r.newPod(redis, name)
	if err != nil {
		return false, err
	}
	log.Info("Creating pod", "Pod", klog.KObj(pod))
	if err := r.Create(ctx, pod); err != nil {
		if apierrors.IsAlreadyExists(err) {
			// Our cache was behind: it had not seen a pod that exists. Ask
			// the API server whose pod it is.
			return r.checkExistingPod(ctx, redis, name)
		}
		if apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) {
			// The namespace is going, and the Redis with it: nothing to
			// retry, and nothing to record.
			return false, nil
		}
		r.Recorder.Eventf(redis, nil, corev1.EventTypeWarning, ReasonFailedCreate, "CreatePod",
			"Failed to create pod %s: %v", name, err)
		return false, fmt.Errorf("creating pod %s: %w", name, err)
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
	return true, nil
}

// checkExistingPod reads the named pod from the API server, bypassing the
// cache, after a create found it already there. Usually it is the pod this
// Redis created a moment ago, which the cache has not seen yet: nothing to
// do, and nothing worth an error. A pod someone else controls gets the same
// Warning as when the cache shows it.
func (r *RedisReconciler) checkExistingPod(ctx context.Context, redis *myappv1.Redis, name string) (bool, error) {
	existing := &corev1.Pod{}
	if err := r.APIReader.Get(ctx, types.NamespacedName{Namespace: redis.Namespace, Name: name}, existing); err != nil {
		// Gone again already: the retry creates it.
		return false, fmt.Errorf("reading pod %s after AlreadyExists: %w", name, err)
	}
	if !metav1.IsControlledBy(existing, redis) {
		r.Recorder.Eventf(redis, existing, corev1.EventTypeWarning, ReasonErrResourceExists, "CreatePod",
			"Pod %s already exists and is not controlled by this Redis", name)
		return false, fmt.Errorf("pod %s exists and is not controlled by Redis %s", name, redis.Name)
	}
	ctrl.LoggerFrom(ctx).V(1).Info("Pod exists already; the cache was behind", "Pod", klog.KObj(existing))
	return existing.DeletionTimestamp.IsZero(), nil
}

// newPod builds the pod for one replica of a Redis, with a controller owner
// reference to the Redis: the garbage collector deletes the pod when the
// Redis is gone, and `kubectl get pod -o yaml` shows who manages it.
func (r *RedisReconciler) newPod(redis *myappv1.Redis, name string) (*corev1.Pod, error) {
	image := redis.Spec.Image
	if image == "" {
		image = myappv1.DefaultImage
	}
	podLabels := selectorLabels(redis)
	podLabels[LabelManagedBy] = "redis-operator"
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: redis.Namespace,
			Name:      name,
			Labels:    podLabels,
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

// selectorLabels are the labels that select a Redis' pods (its status'
// selector, for the scale subresource).
func selectorLabels(redis *myappv1.Redis) map[string]string {
	return map[string]string{LabelName: "redis", LabelInstance: redis.Name}
}

// PodName is the name of the pod with the given index: <redis>-<index>.
func PodName(redis *myappv1.Redis, index int32) string {
	return redis.Name + "-" + strconv.Itoa(int(index))
}
