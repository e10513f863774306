package controller

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	myappv1 "example.com/redis-operator/api/v1"
)

// newTestPod builds pod <name>-0 the way the reconciler does.
func newTestPod(t *testing.T, r *RedisReconciler, redis *myappv1.Redis) *corev1.Pod {
	t.Helper()
	return r.newPod(redis, PodName(redis, 0))
}
