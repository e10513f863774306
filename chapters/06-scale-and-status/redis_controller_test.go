package controller

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	myappv1 "example.com/redis-operator/api/v1"
)

// testRedis is Redis ns/cache at generation 1, as the API server creates
// it (the fake client keeps the generation it is given): a status whose
// observedGeneration is never set cannot match it by staying at 0.
func testRedis() *myappv1.Redis {
	return &myappv1.Redis{
		TypeMeta:   metav1.TypeMeta{APIVersion: myappv1.GroupVersion.String(), Kind: "Redis"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cache", UID: "uid-1", Generation: 1},
		Spec:       myappv1.RedisSpec{Replicas: 2},
	}
}

func TestPodName(t *testing.T) {
	if got := PodName(testRedis(), 7); got != "cache-7" {
		t.Errorf("PodName = %q, want cache-7", got)
	}
}

func TestNewPod(t *testing.T) {
	r := &RedisReconciler{}
	redis := testRedis()
	pod := newTestPod(t, r, redis)

	if pod.Namespace != "ns" || pod.Name != "cache-0" {
		t.Errorf("pod is %s/%s, want ns/cache-0", pod.Namespace, pod.Name)
	}
	for k, v := range map[string]string{LabelName: "redis", LabelInstance: "cache", LabelManagedBy: "redis-operator"} {
		if pod.Labels[k] != v {
			t.Errorf("label %s = %q, want %q", k, pod.Labels[k], v)
		}
	}
	if got := pod.Spec.Containers[0].Image; got != myappv1.DefaultImage {
		t.Errorf("image = %q, want the default %q when spec.image is empty", got, myappv1.DefaultImage)
	}

	redis.Spec.Image = "example.com/redis:8"
	if got := newTestPod(t, r, redis).Spec.Containers[0].Image; got != "example.com/redis:8" {
		t.Errorf("image = %q, want spec.image", got)
	}
}

func TestTrackedPods(t *testing.T) {
	redis := testRedis()
	redis.Finalizers = []string{PodFinalizer("cache-0"), "example.org/other", PodFinalizer("cache-1")}

	got := TrackedPods(redis)
	if len(got) != 2 || got[0] != "cache-0" || got[1] != "cache-1" {
		t.Errorf("TrackedPods = %v, want [cache-0 cache-1] (other finalizers are not ours)", got)
	}
	if f := PodFinalizer("cache-0"); f != "myapp.example.com/cache-0" {
		t.Errorf("PodFinalizer = %q, want a domain-qualified finalizer", f)
	}
}

func TestNewPodIsControlledByItsRedis(t *testing.T) {
	redis := testRedis()
	pod := newTestPod(t, &RedisReconciler{}, redis)

	if !metav1.IsControlledBy(pod, redis) {
		t.Fatalf("pod owner references = %+v, want a controller reference to the Redis", pod.OwnerReferences)
	}
	ref := pod.OwnerReferences[0]
	if ref.APIVersion != "myapp.example.com/v1" || ref.Kind != "Redis" || ref.BlockOwnerDeletion == nil || !*ref.BlockOwnerDeletion {
		t.Errorf("owner reference = %+v, want myapp.example.com/v1 Redis blocking owner deletion", ref)
	}
}

func TestOwningRedis(t *testing.T) {
	controller := true
	ref := func(apiVersion, kind string) []metav1.OwnerReference {
		return []metav1.OwnerReference{{APIVersion: apiVersion, Kind: kind, Name: "cache", UID: "uid-1", Controller: &controller}}
	}
	tests := []struct {
		name   string
		owners []metav1.OwnerReference
		want   bool
	}{
		{"controlled by a Redis", ref("myapp.example.com/v1", "Redis"), true},
		{"controlled by a Redis of another version", ref("myapp.example.com/v2", "Redis"), true},
		{"no owner", nil, false},
		{"controlled by a ConfigMap", ref("v1", "ConfigMap"), false},
		{"controlled by a Redis of another group", ref("other.example.com/v1", "Redis"), false},
		{"owned but not controlled by a Redis", []metav1.OwnerReference{{APIVersion: "myapp.example.com/v1", Kind: "Redis", Name: "cache"}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cache-0", OwnerReferences: tt.owners}}
			req, ok := OwningRedis(pod)
			if ok != tt.want {
				t.Fatalf("OwningRedis ok = %v, want %v", ok, tt.want)
			}
			if ok && (req.Namespace != "ns" || req.Name != "cache") {
				t.Errorf("OwningRedis = %v, want ns/cache", req.NamespacedName)
			}
		})
	}
}

// BenchmarkOwningRedis measures the pod delete handler's lookup. The watch
// covers every pod in the cluster, so it runs for pods that are not ours
// far more often than for pods that are.
func BenchmarkOwningRedis(b *testing.B) {
	controller := true
	ours := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cache-0", OwnerReferences: []metav1.OwnerReference{
		{APIVersion: "myapp.example.com/v1", Kind: "Redis", Name: "cache", UID: "uid-1", Controller: &controller}}}}
	theirs := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web-0", OwnerReferences: []metav1.OwnerReference{
		{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web", UID: "uid-2", Controller: &controller}}}}
	b.Run("ours", func(b *testing.B) {
		for b.Loop() {
			OwningRedis(ours)
		}
	})
	b.Run("not ours", func(b *testing.B) {
		for b.Loop() {
			OwningRedis(theirs)
		}
	})
}
