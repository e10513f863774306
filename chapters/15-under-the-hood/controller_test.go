package controller

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"

	myappv1 "example.com/redis-operator/api/v1"
)

// The unit tests of the controller's machinery run it on client-go's fake
// clientsets, whose watches feed real informers: the handlers, the queue
// and the worker are the chapter's own code.

// newTestController returns a controller on fake clients that hold
// objects (pods in kube, a Redis in dyn), with its informers started and
// synced and no worker running; the test drives the queue.
func newTestController(t *testing.T, redis *unstructured.Unstructured, pods ...runtime.Object) (*Controller, *fake.Clientset) {
	t.Helper()
	kube := fake.NewClientset(pods...)
	// A scheme without the Redis type: the fake serves it unstructured,
	// as the API server serves it to a dynamic client.
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{redisResource: "RedisList"})
	if redis != nil {
		// Through the client: the fake files an object given to its
		// constructor under a resource guessed from its kind ("redises").
		if _, err := dyn.Resource(redisResource).Namespace("ns").Create(context.Background(), redis, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	c := NewController(kube, dyn, "", 1, nil)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(func() { cancel(); c.queue.ShutDown() })
	c.start(ctx)
	if !cache.WaitForCacheSync(ctx.Done(), c.podsSynced, c.redisSynced) {
		t.Fatal("the informers did not sync")
	}
	return c, kube
}

func testRedis(replicas int32) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": myappv1.GroupVersion.String(), "kind": "Redis",
		"metadata": map[string]any{"name": "cache", "namespace": "ns", "uid": "redis-uid"},
		"spec":     map[string]any{"replicas": int64(replicas)},
	}}
}

// ownedPod is a pod of the Redis cache, labelled as the operator's own.
func ownedPod(name string) *corev1.Pod {
	yes := true
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
		Name: name, Namespace: "ns", UID: types.UID("uid-" + name),
		Labels: map[string]string{LabelManagedBy: ManagedBy, LabelInstance: "cache"},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: myappv1.GroupVersion.String(), Kind: "Redis",
			Name: "cache", UID: "redis-uid", Controller: &yes}},
	}}
}

var cacheKey = cache.ObjectName{Namespace: "ns", Name: "cache"}

// waitForQueue waits until the queue holds n keys: the informers deliver
// the fake's events asynchronously.
func waitForQueue(t *testing.T, c *Controller, n int) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 10*time.Millisecond, 5*time.Second, true,
		func(context.Context) (bool, error) { return c.queue.Len() == n, nil })
	if err != nil {
		t.Fatalf("the queue holds %d keys, want %d", c.queue.Len(), n)
	}
}

// TestAPodsDeleteOnlyEnqueuesItsRedis: the delete of a pod reaches the
// pod informer's handler, which puts its Redis' key on the queue and
// sends nothing to the API server: the work is the workers'.
func TestAPodsDeleteOnlyEnqueuesItsRedis(t *testing.T) {
	c, kube := newTestController(t, testRedis(1), ownedPod("cache-0"))
	// The informers' first lists put the Redis on the queue: taken off.
	waitForQueue(t, c, 1)
	key, _ := c.queue.Get()
	c.queue.Done(key)
	kube.ClearActions()
	if err := kube.CoreV1().Pods("ns").Delete(context.Background(), "cache-0", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitForQueue(t, c, 1)
	key, _ = c.queue.Get()
	defer c.queue.Done(key)
	if key != cacheKey {
		t.Errorf("the queue holds %v, want %v", key, cacheKey)
	}
	for _, a := range kube.Actions() {
		if a.GetVerb() != "delete" { // the test's own
			t.Errorf("the handler sent %s %s: a handler only enqueues", a.GetVerb(), a.GetResource().Resource)
		}
	}
}

// TestEnqueueOwner: a pod is enqueued as the Redis that controls it; a
// pod that no Redis controls is not, and the tombstone of a pod whose
// delete the informer missed is.
func TestEnqueueOwner(t *testing.T) {
	c, _ := newTestController(t, nil)
	foreign := ownedPod("other-0")
	foreign.OwnerReferences[0].Kind = "ReplicaSet"
	foreign.OwnerReferences[0].APIVersion = "apps/v1"
	c.enqueueOwner(foreign)
	c.enqueueOwner(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "lone", Namespace: "ns"}})
	if n := c.queue.Len(); n != 0 {
		t.Fatalf("pods that no Redis controls put %d keys on the queue", n)
	}
	c.enqueueOwner(cache.DeletedFinalStateUnknown{Key: "ns/cache-1", Obj: ownedPod("cache-1")})
	if n := c.queue.Len(); n != 1 {
		t.Fatalf("the tombstone of a pod of cache put %d keys on the queue, want 1", n)
	}
	if key, _ := c.queue.Get(); key != cacheKey {
		t.Errorf("a tombstone enqueued %v, want %v", key, cacheKey)
	}
}

// TestProcessNextWorkItem: a worker takes a key, reconciles it (here: the
// three pods created), forgets its failures, and says it is done with
// it, so that the key can be queued and taken again.
func TestProcessNextWorkItem(t *testing.T) {
	c, kube := newTestController(t, testRedis(3))
	c.queue.Add(cacheKey)
	if !c.processNextWorkItem(context.Background()) {
		t.Fatal("processNextWorkItem stopped with work queued")
	}
	pods, err := kube.CoreV1().Pods("ns").List(context.Background(), metav1.ListOptions{})
	if err != nil || len(pods.Items) != 3 {
		t.Fatalf("the reconcile created %d pods (%v), want 3", len(pods.Items), err)
	}
	if n := c.queue.NumRequeues(cacheKey); n != 0 {
		t.Errorf("after a success the key has %d retries, want 0 (Forget)", n)
	}
	c.queue.Add(cacheKey)
	if c.queue.Len() != 1 {
		t.Errorf("the key, added again, is not in the queue: the worker did not call Done")
	}
}

// TestProcessNextWorkItemRetries: a reconcile that fails puts its key back
// on the queue through the rate limiter, later each time.
func TestProcessNextWorkItemRetries(t *testing.T) {
	c, kube := newTestController(t, testRedis(1))
	kube.PrependReactor("create", "pods", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, errors.New("the API server is away")
	})
	for want := 1; want <= 2; want++ {
		c.queue.Add(cacheKey)
		c.processNextWorkItem(context.Background())
		if n := c.queue.NumRequeues(cacheKey); n != want {
			t.Errorf("after failure %d the key has %d retries, want %d (AddRateLimited)", want, n, want)
		}
	}
}

// TestADeletedPodsRedisGoesFirst: the Redis of a deleted pod is handed to
// the next worker ahead of the keys that waited before it, whether it
// was waiting already, was not queued at all, or was with a worker; the
// others keep their order.
func TestADeletedPodsRedisGoesFirst(t *testing.T) {
	// No object: no informer's event adds a key while the test does.
	c, _ := newTestController(t, nil)
	waiting := []cache.ObjectName{{Namespace: "ns", Name: "a"}, {Namespace: "ns", Name: "b"}}
	get := func() []cache.ObjectName {
		var got []cache.ObjectName
		for c.queue.Len() > 0 {
			key, _ := c.queue.Get()
			got = append(got, key)
			c.queue.Done(key)
		}
		return got
	}

	for _, at := range []string{"waiting", "not queued"} {
		for _, key := range waiting {
			c.queue.Add(key)
		}
		if at == "waiting" {
			c.queue.Add(cacheKey)
		}
		c.enqueueOwnerFirst(ownedPod("cache-0"))
		if got, want := get(), append([]cache.ObjectName{cacheKey}, waiting...); !slices.Equal(got, want) {
			t.Errorf("cache %s when its pod was deleted: the queue hands out %v, want %v", at, got, want)
		}
	}

	c.queue.Add(cacheKey)
	key, _ := c.queue.Get() // a worker has cache
	for _, k := range waiting {
		c.queue.Add(k)
	}
	c.enqueueOwnerFirst(ownedPod("cache-0"))
	c.queue.Done(key)
	if got, want := get(), append([]cache.ObjectName{cacheKey}, waiting...); !slices.Equal(got, want) {
		t.Errorf("cache with a worker when its pod was deleted: the queue hands out %v, want %v", got, want)
	}

	// A pod's other events do not put its Redis ahead.
	for _, k := range waiting {
		c.queue.Add(k)
	}
	c.enqueueOwner(ownedPod("cache-0"))
	if got, want := get(), append(slices.Clone(waiting), cacheKey); !slices.Equal(got, want) {
		t.Errorf("a pod's create or update: the queue hands out %v, want %v", got, want)
	}
}
