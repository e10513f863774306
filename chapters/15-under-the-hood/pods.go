package controller

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"

	myappv1 "example.com/redis-operator/api/v1"
)

// ownPods lists, from the pod lister (the informer's indexer), the pods
// this Redis controls.
func (c *Controller) ownPods(redis *myappv1.Redis) ([]corev1.Pod, error) {
	list, err := c.pods.Pods(redis.Namespace).List(labels.SelectorFromSet(selectorLabels(redis)))
	if err != nil {
		return nil, fmt.Errorf("listing the pods of Redis %s: %w", redis.Name, err)
	}
	var pods []corev1.Pod
	for _, p := range list {
		if metav1.IsControlledBy(p, redis) {
			// A lister hands out the cache's own objects: copy, never change.
			pods = append(pods, *p.DeepCopy())
		}
	}
	return pods, nil
}

// excessPods returns the names of the pods above spec.replicas, highest
// ordinal first.
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

// podEnded reports whether all of a pod's containers have stopped for good.
func podEnded(pod *corev1.Pod) bool {
	return pod.Status.Phase == corev1.PodFailed || pod.Status.Phase == corev1.PodSucceeded
}

// getPod reads a pod from the lister, and from the API server when the
// lister does not hold it (a pod without the managed-by label).
func (c *Controller) getPod(ctx context.Context, namespace, name string) (*corev1.Pod, error) {
	pod, err := c.pods.Pods(namespace).Get(name)
	if apierrors.IsNotFound(err) {
		return c.kube.CoreV1().Pods(namespace).Get(ctx, name, metav1.GetOptions{})
	}
	if err != nil {
		return nil, err
	}
	return pod.DeepCopy(), nil
}

// deletePod deletes the named pod if the Redis controls it, with the UID
// it read as a precondition.
func (c *Controller) deletePod(ctx context.Context, redis *myappv1.Redis, name, why string) error {
	pod, err := c.getPod(ctx, redis.Namespace, name)
	if err != nil {
		return ignoreNotFound(err)
	}
	if !metav1.IsControlledBy(pod, redis) {
		c.recorder.Eventf(redis, pod, corev1.EventTypeWarning, ReasonErrResourceExists, "DeletePod",
			"Pod %s is not controlled by this Redis; it is left alone", name)
		return nil
	}
	if !pod.DeletionTimestamp.IsZero() {
		return nil
	}
	ctrl.LoggerFrom(ctx).Info("Deleting pod", "Pod", klog.KObj(pod), "why", why)
	err = c.kube.CoreV1().Pods(pod.Namespace).Delete(ctx, name, metav1.DeleteOptions{
		Preconditions: &metav1.Preconditions{UID: &pod.UID},
	})
	if err != nil {
		return ignoreNotFound(err)
	}
	c.recorder.Eventf(redis, pod, corev1.EventTypeNormal, ReasonSuccessfulDelete, "DeletePod",
		"Deleted pod %s: %s", name, why)
	return nil
}

// errNamespaceTerminating is what ensurePod returns when the API server
// refused the pod because its namespace is being deleted.
var errNamespaceTerminating = errors.New("the namespace is being deleted")

// ensurePod creates the named pod unless it exists.
func (c *Controller) ensurePod(ctx context.Context, redis *myappv1.Redis, name string) error {
	log := ctrl.LoggerFrom(ctx)
	existing, err := c.pods.Pods(redis.Namespace).Get(name)
	if err == nil {
		return c.checkExistingPod(ctx, redis, existing.DeepCopy())
	}
	if !apierrors.IsNotFound(err) {
		return fmt.Errorf("getting pod %s: %w", name, err)
	}
	pod := newPod(redis, name)
	log.Info("Creating pod", "Pod", klog.KObj(pod))
	if _, err := c.kube.CoreV1().Pods(redis.Namespace).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		if apierrors.IsAlreadyExists(err) {
			existing, err := c.kube.CoreV1().Pods(redis.Namespace).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return fmt.Errorf("reading pod %s after AlreadyExists: %w", name, err)
			}
			return c.checkExistingPod(ctx, redis, existing)
		}
		if apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) {
			log.V(1).Info("Not creating pod: its namespace is being deleted", "Pod", klog.KObj(pod))
			return errNamespaceTerminating
		}
		c.recorder.Eventf(redis, nil, corev1.EventTypeWarning, ReasonFailedCreate, "CreatePod",
			"Failed to create pod %s: %v", name, err)
		return fmt.Errorf("creating pod %s: %w", name, err)
	}
	c.recorder.Eventf(redis, pod, corev1.EventTypeNormal, ReasonSuccessfulCreate, "CreatePod", "Created pod %s", name)
	return nil
}

// checkExistingPod looks at a pod that has the name the Redis needs.
func (c *Controller) checkExistingPod(ctx context.Context, redis *myappv1.Redis, pod *corev1.Pod) error {
	if !metav1.IsControlledBy(pod, redis) {
		c.recorder.Eventf(redis, pod, corev1.EventTypeWarning, ReasonErrResourceExists, "CreatePod",
			"Pod %s already exists and is not controlled by this Redis", pod.Name)
		return fmt.Errorf("pod %s exists and is not controlled by Redis %s", pod.Name, redis.Name)
	}
	if !pod.DeletionTimestamp.IsZero() {
		ctrl.LoggerFrom(ctx).V(1).Info("Waiting for pod to terminate before creating it again", "Pod", klog.KObj(pod))
		return nil
	}
	if !labelsInclude(pod.Labels, podLabels(redis)) {
		ctrl.LoggerFrom(ctx).Info("Restoring the labels of pod", "Pod", klog.KObj(pod))
		patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"labels": podLabels(redis)}})
		if err != nil {
			return err
		}
		if _, err := c.kube.CoreV1().Pods(pod.Namespace).Patch(ctx, pod.Name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
			return fmt.Errorf("restoring the labels of pod %s: %w", pod.Name, err)
		}
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

// newPod builds the pod for one replica of a Redis, with a controller
// owner reference to it.
func newPod(redis *myappv1.Redis, name string) *corev1.Pod {
	image := redis.Spec.Image
	if image == "" {
		image = myappv1.DefaultImage
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:       redis.Namespace,
			Name:            name,
			Labels:          podLabels(redis),
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(redis, myappv1.GroupVersion.WithKind("Redis"))},
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

// podLabels are the labels of a Redis' pods: the selector's, and the
// managed-by label that the pod informer selects.
func podLabels(redis *myappv1.Redis) map[string]string {
	l := selectorLabels(redis)
	l[LabelManagedBy] = ManagedBy
	return l
}

// selectorLabels are the labels that select a Redis' pods.
func selectorLabels(redis *myappv1.Redis) map[string]string {
	return map[string]string{LabelName: "redis", LabelInstance: redis.Name}
}

// PodName is the name of the pod with the given index: <redis>-<index>.
func PodName(redis *myappv1.Redis, index int32) string {
	return redis.Name + "-" + strconv.Itoa(int(index))
}

func ignoreNotFound(err error) error {
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}
