package controller

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	myappv1 "example.com/redis-operator/api/v1"
)

// newTestPod builds pod <name>-0 the way the reconciler does.
func newTestPod(t *testing.T, r *RedisReconciler, redis *myappv1.Redis) *corev1.Pod {
	t.Helper()
	return newTestPodAt(t, r, redis, 0)
}

// newTestPodAt builds pod <name>-<index> the way the reconciler does.
func newTestPodAt(t *testing.T, r *RedisReconciler, redis *myappv1.Redis, index int32) *corev1.Pod {
	t.Helper()
	if r.Scheme == nil {
		r.Scheme = runtime.NewScheme()
		if err := myappv1.AddToScheme(r.Scheme); err != nil {
			t.Fatal(err)
		}
	}
	pod, err := r.newPod(redis, PodName(redis, index))
	if err != nil {
		t.Fatal(err)
	}
	return pod
}
