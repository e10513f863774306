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
	"maps"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
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

// TestReconcileLeavesThePodsBehindWhenTheRedisIsDeleted shows what chapter
// 2 fixes: once the Redis is gone, Reconcile has nothing to act on and
// nothing deletes its pods. (They have no owner reference either, so on a
// real cluster the garbage collector leaves them too.)
func TestReconcileLeavesThePodsBehindWhenTheRedisIsDeleted(t *testing.T) {
	f := newFixture(t, redisWith(2))
	f.mustReconcile(t)

	f.deleteRedis(t)
	if err := f.api.Get(t.Context(), redisKey(), &myappv1.Redis{}); !apierrors.IsNotFound(err) {
		t.Fatalf("getting the deleted Redis = %v, want NotFound", err)
	}
	f.mustReconcile(t)

	if got, want := podNames(f.pods(t)), []string{"cache-0", "cache-1"}; !slices.Equal(got, want) {
		t.Errorf("pods after the Redis was deleted = %v, want %v left behind", got, want)
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
		r:        &RedisReconciler{Client: api, Scheme: api.Scheme(), Recorder: recorder},
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
