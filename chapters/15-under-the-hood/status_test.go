package controller

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	myappv1 "example.com/redis-operator/api/v1"
)

// TestComputeStatusCountsOnlyReadyPods: a pod counts as ready when its
// Ready condition is True, not because it exists or runs; the Redis is
// Available only once every desired pod is. (On the local back-end every
// pod is Ready as soon as it runs, so only this test and the status
// spec's pod made not ready tell the two apart.)
func TestComputeStatusCountsOnlyReadyPods(t *testing.T) {
	redis := &myappv1.Redis{ObjectMeta: metav1.ObjectMeta{Name: "cache", Namespace: "ns", Generation: 2},
		Spec: myappv1.RedisSpec{Replicas: 3}}
	pod := func(name string, ready corev1.ConditionStatus) corev1.Pod {
		p := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"},
			Status: corev1.PodStatus{Phase: corev1.PodRunning}}
		if ready != "" {
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: ready}}
		}
		return p
	}
	now := metav1.Now()

	status := computeStatus(redis, []corev1.Pod{
		pod("cache-0", corev1.ConditionTrue),
		pod("cache-1", corev1.ConditionFalse), // running, not ready
		pod("cache-2", ""),                    // no Ready condition yet
	}, now)
	if status.Replicas != 3 || status.ReadyReplicas != 1 {
		t.Errorf("replicas %d, ready %d; want 3 pods, 1 ready", status.Replicas, status.ReadyReplicas)
	}
	if c := meta.FindStatusCondition(status.Conditions, ConditionAvailable); c == nil || c.Status != metav1.ConditionFalse || c.Reason != ReasonPodsNotReady {
		t.Errorf("Available = %+v, want False (%s)", c, ReasonPodsNotReady)
	}
	if c := meta.FindStatusCondition(status.Conditions, ConditionProgressing); c == nil || c.Status != metav1.ConditionTrue || c.Reason != ReasonWaitingForReadiness {
		t.Errorf("Progressing = %+v, want True (%s)", c, ReasonWaitingForReadiness)
	}

	status = computeStatus(redis, []corev1.Pod{
		pod("cache-0", corev1.ConditionTrue), pod("cache-1", corev1.ConditionTrue), pod("cache-2", corev1.ConditionTrue),
	}, now)
	if status.ReadyReplicas != 3 || !meta.IsStatusConditionTrue(status.Conditions, ConditionAvailable) {
		t.Errorf("ready %d, conditions %+v; want 3 ready and Available", status.ReadyReplicas, status.Conditions)
	}
}
