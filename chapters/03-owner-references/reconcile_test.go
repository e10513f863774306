// Unit tests of Reconcile without a cluster: each test puts a world into
// controller-runtime's fake client, runs Reconcile, and reads the world
// back (the pods, their UIDs and owner references, the Redis' finalizers,
// and the events caught by events.NewFakeRecorder).
//
// What the fake client of controller-runtime v0.25 does decides what these
// tests can prove:
//
//   - Like an API server, it refuses a second object of the same name
//     (AlreadyExists) and an optimistically locked patch of a stale object
//     (Conflict), and it keeps finalizers: Delete only sets the
//     deletionTimestamp of an object that has some, and the write that
//     removes the last one deletes it. It refuses to start with an object
//     that has a deletionTimestamp but no finalizers.
//   - Unlike one, it sets no UID (fakeapi.New sets a new one on every
//     Create, so that a recreated pod can be told from the old one),
//     ignores a UID precondition on Delete (fakeapi.New refuses a Delete
//     whose UID precondition fails with a Conflict, as the API server
//     does), drops a deletionTimestamp on Create, and has no admission, no
//     CRD defaulting or validation, and no RBAC.
//   - Nothing else runs: no garbage collector (an owner reference is just
//     data), no kubelet (a pod without finalizers is gone the moment it is
//     deleted), no manager or watches (only the test calls Reconcile), and
//     no cache: reads are never stale unless a test makes them so with
//     interceptor.Funcs.
//
// So these tests show what Reconcile does with a given world, in
// milliseconds. That the cluster does its part (CRD validation and
// defaults, garbage collection, watch events reaching the controller, the
// generated RBAC) is proved on a real cluster by the end-to-end suites in
// tests/ (make test-chapter N).

package controller

import (
	"fmt"
	"maps"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	myappv1 "example.com/redis-operator/api/v1"
	"example.com/redis-operator/tests/fakeapi"
)

// Chapter 1: create pods.

func TestReconcileCreatesTheMissingPods(t *testing.T) {
	tests := []struct {
		name     string
		replicas int32
		want     []string
	}{
		{"a Redis with 3 replicas gets pods cache-0, cache-1 and cache-2", 3, []string{"cache-0", "cache-1", "cache-2"}},
		{"a Redis with 0 replicas gets no pods", 0, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, redisWith(tt.replicas))

			f.mustReconcile(t)

			pods := f.pods(t)
			if got := podNames(pods); !slices.Equal(got, tt.want) {
				t.Fatalf("pods = %v, want %v", got, tt.want)
			}
			var wantEvents []string
			for _, name := range tt.want {
				for k, v := range map[string]string{LabelName: "redis", LabelInstance: "cache", LabelManagedBy: "redis-operator"} {
					if got := pods[name].Labels[k]; got != v {
						t.Errorf("pod %s: label %s = %q, want %q", name, k, got, v)
					}
				}
				wantEvents = append(wantEvents, "Normal SuccessfulCreate Created pod "+name)
			}
			if got := f.events(); !slices.Equal(got, wantEvents) {
				t.Errorf("events = %q, want one SuccessfulCreate per pod: %q", got, wantEvents)
			}
		})
	}
}

// TestReconcileAgainChangesNothing: Reconcile is level-based, so running it
// again on a world that already matches the Redis creates nothing and
// replaces nothing.
func TestReconcileAgainChangesNothing(t *testing.T) {
	f := newFixture(t, redisWith(3))
	f.mustReconcile(t)
	before := identities(f.pods(t))
	f.events()

	f.mustReconcile(t)

	if after := identities(f.pods(t)); !maps.Equal(after, before) {
		t.Errorf("pods after the second Reconcile = %v, want the same objects unchanged: %v", after, before)
	}
	if got := f.events(); len(got) != 0 {
		t.Errorf("events of the second Reconcile = %q, want none", got)
	}
}

func TestReconcileOfARedisThatIsGoneIsNotAnError(t *testing.T) {
	f := newFixture(t)

	if err := f.reconcile(t); err != nil {
		t.Errorf("Reconcile of a Redis that does not exist = %v, want no error", err)
	}
	if got := podNames(f.pods(t)); len(got) != 0 {
		t.Errorf("pods = %v, want none", got)
	}
	if got := f.events(); len(got) != 0 {
		t.Errorf("events = %q, want none", got)
	}
}

// Chapter 2: finalizer tracking.

func TestReconcileRecordsEachPodAsAFinalizer(t *testing.T) {
	f := newFixture(t, redisWith(3))
	want := []string{"myapp.example.com/cache-0", "myapp.example.com/cache-1", "myapp.example.com/cache-2"}

	f.mustReconcile(t)
	if got := f.redis(t).Finalizers; !slices.Equal(got, want) {
		t.Errorf("finalizers = %q, want one domain-qualified finalizer per pod: %q", got, want)
	}
	f.mustReconcile(t)
	if got := f.redis(t).Finalizers; !slices.Equal(got, want) {
		t.Errorf("finalizers after a second Reconcile = %q, want still %q", got, want)
	}
}

func TestReconcileOfARedisBeingDeleted(t *testing.T) {
	deleted := func(names ...string) []string {
		var want []string
		for _, name := range names {
			want = append(want, "Normal SuccessfulDelete Deleted pod "+name)
		}
		return want
	}
	tests := []struct {
		name         string
		others       []string // someone else's finalizers on the Redis
		deletedFirst []string // recorded pods deleted by hand before the Redis
		wantEvents   []string
	}{
		{
			name:       "deletes every recorded pod, then the Redis goes",
			wantEvents: deleted("cache-0", "cache-1", "cache-2"),
		},
		{
			name:         "does not hang when a recorded pod is already gone",
			deletedFirst: []string{"cache-1"},
			wantEvents:   deleted("cache-0", "cache-2"),
		},
		{
			name:       "removes its own finalizers and keeps everyone else's",
			others:     []string{"example.org/backup"},
			wantEvents: deleted("cache-0", "cache-1", "cache-2"),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, redisWith(3, tt.others...))
			f.mustReconcile(t)
			for _, name := range tt.deletedFirst {
				f.deletePod(t, name)
			}
			f.deleteRedis(t)
			if redis := f.redis(t); redis.DeletionTimestamp.IsZero() {
				t.Fatalf("the deleted Redis has no deletionTimestamp, want its finalizers %q to hold it", redis.Finalizers)
			}
			f.events()

			f.mustReconcile(t)

			if got := podNames(f.pods(t)); len(got) != 0 {
				t.Errorf("pods = %v, want none", got)
			}
			if got := f.events(); !slices.Equal(got, tt.wantEvents) {
				t.Errorf("events = %q, want %q", got, tt.wantEvents)
			}
			redis := &myappv1.Redis{}
			err := f.api.Get(t.Context(), redisKey(), redis)
			if len(tt.others) == 0 {
				if !apierrors.IsNotFound(err) {
					t.Errorf("getting the Redis = %v, finalizers %q; want NotFound: the last finalizer is gone, and the Redis with it", err, redis.Finalizers)
				}
				return
			}
			if err != nil {
				t.Fatalf("getting the Redis: %v", err)
			}
			if !slices.Equal(redis.Finalizers, tt.others) {
				t.Errorf("finalizers = %q, want only %q", redis.Finalizers, tt.others)
			}
		})
	}
}

// TestReconcileDoesNotRecreateADeletedRecordedPod shows what chapter 5
// fixes: reconcileNormal skips every pod recorded in the finalizers, so a
// pod deleted by hand stays deleted. (Here the test calls Reconcile; that
// anything calls it after a pod delete is chapter 4.)
func TestReconcileDoesNotRecreateADeletedRecordedPod(t *testing.T) {
	f := newFixture(t, redisWith(2))
	f.mustReconcile(t)
	f.deletePod(t, "cache-1")
	if got, want := podNames(f.pods(t)), []string{"cache-0"}; !slices.Equal(got, want) {
		t.Fatalf("pods after deleting cache-1 = %v, want %v", got, want)
	}
	f.events()

	f.mustReconcile(t)

	if got, want := podNames(f.pods(t)), []string{"cache-0"}; !slices.Equal(got, want) {
		t.Errorf("pods = %v, want %v: cache-1 is recorded, so it is not created again", got, want)
	}
	if got, want := f.redis(t).Finalizers, []string{"myapp.example.com/cache-0", "myapp.example.com/cache-1"}; !slices.Equal(got, want) {
		t.Errorf("finalizers = %q, want %q: the record still claims cache-1", got, want)
	}
	if got := f.events(); len(got) != 0 {
		t.Errorf("events = %q, want none", got)
	}
}

// Chapter 3: owner references.

func TestReconcileMakesTheRedisThePodsController(t *testing.T) {
	f := newFixture(t, redisWith(2))

	f.mustReconcile(t)

	pods := f.pods(t)
	if got, want := podNames(pods), []string{"cache-0", "cache-1"}; !slices.Equal(got, want) {
		t.Fatalf("pods = %v, want %v", got, want)
	}
	for name, pod := range pods {
		if got := controllerOf(pod); got != theRedis || len(pod.OwnerReferences) != 1 {
			t.Errorf("pod %s: controller %q of %d owner references, want one: %q", name, got, len(pod.OwnerReferences), theRedis)
		}
	}
}

func TestReconcileDoesNotAdoptAPodItDoesNotControl(t *testing.T) {
	earlierRedis := foreignPod("cache-0")
	earlierRedis.OwnerReferences = []metav1.OwnerReference{{
		APIVersion: "myapp.example.com/v1", Kind: "Redis", Name: "cache", UID: "uid-0", Controller: ptr.To(true),
	}}
	tests := []struct {
		name string
		pod  *corev1.Pod
	}{
		{"a pod without an owner is left alone, with a Warning and an error", foreignPod("cache-0")},
		{"a pod controlled by an earlier Redis of the same name is left alone, with a Warning and an error", earlierRedis},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, redisWith(2), tt.pod)
			before := identities(f.pods(t))["cache-0"]

			if err := f.reconcile(t); err == nil {
				t.Error("Reconcile = nil, want an error: the Redis cannot have its cache-0")
			}

			pods := f.pods(t)
			if got := identities(pods)["cache-0"]; got != before {
				t.Errorf("cache-0 = %v, want %v untouched", got, before)
			}
			redis := f.redis(t)
			if got := controllerOf(pods["cache-1"]); got != theRedis {
				t.Errorf("cache-1 controller = %q, want cache-1 created all the same, controlled by %q", got, theRedis)
			}
			if got, want := redis.Finalizers, []string{"myapp.example.com/cache-1"}; !slices.Equal(got, want) {
				t.Errorf("finalizers = %q, want %q: cache-0 is not the Redis' to record", got, want)
			}
			want := []string{
				"Warning ErrResourceExists Pod cache-0 already exists and is not controlled by this Redis",
				"Normal SuccessfulCreate Created pod cache-1",
			}
			if got := f.events(); !slices.Equal(got, want) {
				t.Errorf("events = %q, want %q", got, want)
			}
		})
	}
}

// TestReconcileOfARedisBeingDeletedLeavesAPodItDoesNotControl: a pod that
// took a recorded name after the Redis' own pod was deleted is someone
// else's. It survives the Redis, with a Warning, and the Redis still goes.
func TestReconcileOfARedisBeingDeletedLeavesAPodItDoesNotControl(t *testing.T) {
	f := newFixture(t, redisWith(2))
	f.mustReconcile(t)
	f.deletePod(t, "cache-1")
	if err := f.api.Create(t.Context(), foreignPod("cache-1")); err != nil {
		t.Fatalf("creating someone else's cache-1: %v", err)
	}
	before := identities(f.pods(t))["cache-1"]
	f.deleteRedis(t)
	f.events()

	f.mustReconcile(t)

	pods := f.pods(t)
	if got, want := podNames(pods), []string{"cache-1"}; !slices.Equal(got, want) {
		t.Fatalf("pods = %v, want %v: the Redis' cache-0 deleted, someone else's cache-1 kept", got, want)
	}
	if got := identities(pods)["cache-1"]; got != before {
		t.Errorf("cache-1 = %v, want someone else's %v untouched", got, before)
	}
	want := []string{
		"Normal SuccessfulDelete Deleted pod cache-0",
		"Warning ErrResourceExists Pod cache-1 is not controlled by this Redis; it is left alone",
	}
	if got := f.events(); !slices.Equal(got, want) {
		t.Errorf("events = %q, want %q", got, want)
	}
	if err := f.api.Get(t.Context(), redisKey(), &myappv1.Redis{}); !apierrors.IsNotFound(err) {
		t.Errorf("getting the Redis = %v, want NotFound: its finalizers are removed all the same", err)
	}
}

// TestReconcileWhenTheCacheIsBehind: the reconciler reads pods from a cache
// that can lag behind the API server. A pod the cache has not seen yet
// makes Create fail with AlreadyExists, and Reconcile asks the API server
// (APIReader) whose pod it is.
func TestReconcileWhenTheCacheIsBehind(t *testing.T) {
	ours := newTestPod(t, &RedisReconciler{}, testRedis())
	ours.UID = "uid-ours"
	tests := []struct {
		name           string
		pod            *corev1.Pod // the cache-0 that the API server has
		wantErr        bool
		wantFinalizers []string
		wantEvents     []string
	}{
		{
			name:           "a pod the Redis controls is recorded, without an error or an event",
			pod:            ours,
			wantFinalizers: []string{"myapp.example.com/cache-0"},
		},
		{
			name:       "a pod someone else created is not adopted, with a Warning and an error",
			pod:        foreignPod("cache-0"),
			wantErr:    true,
			wantEvents: []string{"Warning ErrResourceExists Pod cache-0 already exists and is not controlled by this Redis"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, redisWith(1), tt.pod.DeepCopy())
			f.r.Client = fakeapi.CacheWithout(f.api, "cache-0")
			if err := f.r.Get(t.Context(), client.ObjectKeyFromObject(tt.pod), &corev1.Pod{}); !apierrors.IsNotFound(err) {
				t.Fatalf("getting cache-0 from the cache = %v, want NotFound: the cache has not seen it", err)
			}
			before := identities(f.pods(t))

			if err := f.reconcile(t); (err != nil) != tt.wantErr {
				t.Errorf("Reconcile = %v, want an error: %t", err, tt.wantErr)
			}

			if after := identities(f.pods(t)); !maps.Equal(after, before) {
				t.Errorf("pods = %v, want %v untouched", after, before)
			}
			if got := f.redis(t).Finalizers; !slices.Equal(got, tt.wantFinalizers) {
				t.Errorf("finalizers = %q, want %q", got, tt.wantFinalizers)
			}
			if got := f.events(); !slices.Equal(got, tt.wantEvents) {
				t.Errorf("events = %q, want %q", got, tt.wantEvents)
			}
		})
	}
}

// ---- helpers ----------------------------------------------------------------

// fixture is one test's world: a fake API server, the reconciler under
// test, and the events the reconciler emitted.
type fixture struct {
	// api is the fake API server. Tests set up and read back the world
	// through it, never through the reconciler's client.
	api      client.WithWatch
	r        *RedisReconciler
	recorder *events.FakeRecorder
}

// newFixture starts a fake API server that holds objs, and a reconciler
// that uses it.
func newFixture(t *testing.T, objs ...client.Object) *fixture {
	t.Helper()
	api := fakeapi.New(objs...)
	// Big enough for any test here: the fake recorder blocks when full.
	recorder := events.NewFakeRecorder(100)
	return &fixture{
		api:      api,
		r:        &RedisReconciler{Client: api, APIReader: api, Scheme: api.Scheme(), Recorder: recorder},
		recorder: recorder,
	}
}

// redisWith returns Redis ns/cache (testRedis, UID uid-1) asking for
// replicas pods, with the given finalizers.
func redisWith(replicas int32, finalizers ...string) *myappv1.Redis {
	redis := testRedis()
	redis.Spec.Replicas = replicas
	redis.Finalizers = finalizers
	return redis
}

func redisKey() types.NamespacedName {
	return client.ObjectKeyFromObject(testRedis())
}

// reconcile runs Reconcile for Redis ns/cache, as the controller does when
// the request comes off its queue.
func (f *fixture) reconcile(t *testing.T) error {
	t.Helper()
	result, err := f.r.Reconcile(t.Context(), ctrl.Request{NamespacedName: redisKey()})
	if !result.IsZero() {
		t.Errorf("Reconcile result = %+v, want none: nothing here requeues on purpose", result)
	}
	return err
}

func (f *fixture) mustReconcile(t *testing.T) {
	t.Helper()
	if err := f.reconcile(t); err != nil {
		t.Fatalf("Reconcile: %v", err)
	}
}

// redis reads Redis ns/cache from the API server.
func (f *fixture) redis(t *testing.T) *myappv1.Redis {
	t.Helper()
	redis := &myappv1.Redis{}
	if err := f.api.Get(t.Context(), redisKey(), redis); err != nil {
		t.Fatalf("getting the Redis: %v", err)
	}
	return redis
}

// deleteRedis deletes Redis ns/cache like `kubectl delete redis cache`.
func (f *fixture) deleteRedis(t *testing.T) {
	t.Helper()
	if err := f.api.Delete(t.Context(), testRedis()); err != nil {
		t.Fatalf("deleting the Redis: %v", err)
	}
}

// pods returns the pods of namespace ns by name.
func (f *fixture) pods(t *testing.T) map[string]corev1.Pod {
	t.Helper()
	list := &corev1.PodList{}
	if err := f.api.List(t.Context(), list, client.InNamespace("ns")); err != nil {
		t.Fatalf("listing pods: %v", err)
	}
	pods := make(map[string]corev1.Pod, len(list.Items))
	for _, pod := range list.Items {
		pods[pod.Name] = pod
	}
	return pods
}

// deletePod deletes a pod like `kubectl delete pod`.
func (f *fixture) deletePod(t *testing.T, name string) {
	t.Helper()
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}}
	if err := f.api.Delete(t.Context(), pod); err != nil {
		t.Fatalf("deleting pod %s: %v", name, err)
	}
}

// foreignPod is pod ns/name as someone else created it: it has no owner
// reference.
func foreignPod(name string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: "uid-foreign"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "example.com/app:1"}}},
	}
}

// theRedis is how controllerOf describes Redis ns/cache.
const theRedis = "myapp.example.com/v1 Redis cache uid=uid-1 blockOwnerDeletion=true"

// controllerOf describes the controller reference of a pod; "" if it has
// none.
func controllerOf(pod corev1.Pod) string {
	ref := metav1.GetControllerOf(&pod)
	if ref == nil {
		return ""
	}
	return fmt.Sprintf("%s %s %s uid=%s blockOwnerDeletion=%t",
		ref.APIVersion, ref.Kind, ref.Name, ref.UID, ptr.Deref(ref.BlockOwnerDeletion, false))
}

// events returns the events emitted since the last call, oldest first.
func (f *fixture) events() []string {
	var got []string
	for {
		select {
		case e := <-f.recorder.Events:
			got = append(got, e)
		default:
			return got
		}
	}
}

func podNames(pods map[string]corev1.Pod) []string {
	return slices.Sorted(maps.Keys(pods))
}

// identity tells one object from another of the same name (UID) and from
// an earlier state of itself (resourceVersion).
type identity struct {
	UID             types.UID
	ResourceVersion string
}

func identities(pods map[string]corev1.Pod) map[string]identity {
	ids := make(map[string]identity, len(pods))
	for name, pod := range pods {
		ids[name] = identity{pod.UID, pod.ResourceVersion}
	}
	return ids
}
