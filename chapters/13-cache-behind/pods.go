package controller

import (
	"context"
	"errors"
	"fmt"
	"maps"
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
	return slices.DeleteFunc(list.Items, func(p corev1.Pod) bool { return !metav1.IsControlledBy(&p, redis) }), nil
}

// excessPods returns the names of the pods above spec.replicas, highest
// ordinal first: a scale-down removes the newest pods first, as a
// StatefulSet's does. A pod created a moment ago that the cache has not
// seen yet is not among them; its create event brings the Redis back.
func excessPods(redis *myappv1.Redis, pods []corev1.Pod) []string {
	var excess []string
	for _, p := range pods {
		if ordinal(redis, p.Name) >= redis.Spec.Replicas {
			excess = append(excess, p.Name)
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
// in the event. It returns nil once the pod is gone or going. A pod that
// took the name after ours was deleted is someone else's: it is left
// alone, with a Warning event. The UID precondition makes the API server
// refuse the delete if the pod was replaced after it was read; the retry
// reads again.
func (r *RedisReconciler) deletePod(ctx context.Context, redis *myappv1.Redis, name, why string) error {
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
	ctrl.LoggerFrom(ctx).Info("Deleting pod", "Pod", klog.KObj(pod), "why", why)
	if err := r.Delete(ctx, pod, client.Preconditions{UID: &pod.UID}); err != nil {
		return client.IgnoreNotFound(err)
	}
	r.Recorder.Eventf(redis, pod, corev1.EventTypeNormal, ReasonSuccessfulDelete, "DeletePod",
		"Deleted pod %s: %s", name, why)
	return nil
}

// errNamespaceTerminating is what ensurePod returns when the API server
// refused the pod because its namespace is being deleted.
var errNamespaceTerminating = errors.New("the namespace is being deleted")

// ensurePod creates the named pod unless it exists. The name is
// deterministic, so the API server refuses a second pod of that name with
// AlreadyExists: when the cache has not yet seen a pod created a moment
// ago, or does not hold a pod because it lacks the managed-by label, a
// reconcile cannot create it twice.
func (r *RedisReconciler) ensurePod(ctx context.Context, redis *myappv1.Redis, name string) error {
	log := ctrl.LoggerFrom(ctx)
	existing := &corev1.Pod{}
	err := r.Get(ctx, types.NamespacedName{Namespace: redis.Namespace, Name: name}, existing)
	if err == nil {
		return r.checkExistingPod(ctx, redis, existing)
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
			if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(pod), existing); err != nil {
				// Gone again already: the retry creates it.
				return fmt.Errorf("reading pod %s after AlreadyExists: %w", name, err)
			}
			return r.checkExistingPod(ctx, redis, existing)
		}
		if apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) {
			log.V(1).Info("Not creating pod: its namespace is being deleted", "Pod", klog.KObj(pod))
			return errNamespaceTerminating
		}
		r.Recorder.Eventf(redis, nil, corev1.EventTypeWarning, ReasonFailedCreate, "CreatePod",
			"Failed to create pod %s: %v", name, err)
		return fmt.Errorf("creating pod %s: %w", name, err)
	}
	r.Recorder.Eventf(redis, pod, corev1.EventTypeNormal, ReasonSuccessfulCreate, "CreatePod", "Created pod %s", name)
	return nil
}

// checkExistingPod looks at a pod that has the name the Redis needs. Never
// adopt what we do not control: it may be someone else's. A pod of ours
// that is terminating is created again when its delete event brings the
// Redis back; one that lost its labels gets them back.
func (r *RedisReconciler) checkExistingPod(ctx context.Context, redis *myappv1.Redis, pod *corev1.Pod) error {
	if !metav1.IsControlledBy(pod, redis) {
		r.Recorder.Eventf(redis, pod, corev1.EventTypeWarning, ReasonErrResourceExists, "CreatePod",
			"Pod %s already exists and is not controlled by this Redis", pod.Name)
		return fmt.Errorf("pod %s exists and is not controlled by Redis %s", pod.Name, redis.Name)
	}
	if !pod.DeletionTimestamp.IsZero() {
		ctrl.LoggerFrom(ctx).V(1).Info("Waiting for pod to terminate before creating it again", "Pod", klog.KObj(pod))
		return nil
	}
	if !labelsInclude(pod.Labels, podLabels(redis)) {
		return r.restoreLabels(ctx, redis, pod)
	}
	return nil
}

// restoreLabels puts back the labels of a pod the Redis controls that
// someone removed or changed. Without them the pod is out of the status and
// out of reach of a scale-down: the status counts the pods that match the
// selector, and the cache holds only those with the managed-by label.
func (r *RedisReconciler) restoreLabels(ctx context.Context, redis *myappv1.Redis, pod *corev1.Pod) error {
	ctrl.LoggerFrom(ctx).Info("Restoring the labels of pod", "Pod", klog.KObj(pod))
	patch := client.MergeFrom(pod.DeepCopy())
	if pod.Labels == nil {
		pod.Labels = map[string]string{}
	}
	maps.Copy(pod.Labels, podLabels(redis))
	if err := r.Patch(ctx, pod, patch); err != nil {
		return fmt.Errorf("restoring the labels of pod %s: %w", pod.Name, err)
	}
	return nil
}

// labelsInclude reports whether have holds every label of want.
func labelsInclude(have, want map[string]string) bool {
	for k, v := range want {
		if have[k] != v {
			return false
		}
	}
	return true
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
			Labels:    podLabels(redis),
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

// podLabels are the labels of a Redis' pods: the selector's, and the
// managed-by label that the cache selects.
func podLabels(redis *myappv1.Redis) map[string]string {
	l := selectorLabels(redis)
	l[LabelManagedBy] = ManagedBy
	return l
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
