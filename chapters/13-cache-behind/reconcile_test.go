// Unit tests of Reconcile without a cluster: each test puts a world into
// controller-runtime's fake client, runs Reconcile, and reads the world
// back (the pods, their UIDs and owner references, the Redis' finalizers
// and status, and the events caught by events.NewFakeRecorder).
//
// What the fake client of controller-runtime v0.25 does decides what these
// tests can prove:
//
//   - Like an API server, it refuses a second object of the same name
//     (AlreadyExists) and an optimistically locked patch of a stale object
//     (Conflict), and it keeps finalizers: Delete only sets the
//     deletionTimestamp of an object that has some, and the write that
//     removes the last one deletes it. It refuses to start with an object
//     that has a deletionTimestamp but no finalizers, so a Redis being
//     deleted here is always held by one (someone else's, or one that
//     chapters 2 to 6 left).
//   - Unlike one, it sets no UID (fakeapi.New sets a new one on every
//     Create, so that a recreated pod can be told from the old one),
//     ignores a UID precondition on Delete (fakeapi.New refuses a Delete
//     whose UID precondition fails with a Conflict, as the API server
//     does), drops a deletionTimestamp on Create, and has no admission, no
//     CRD defaulting or validation, and no RBAC.
//   - Nothing else runs: no garbage collector (an owner reference is just
//     data: the pods of a deleted Redis stay), no kubelet (a pod without
//     finalizers is gone the moment it is deleted), no manager or watches
//     (only the test calls Reconcile; the predicates are tested on their
//     own), and no cache: reads are never stale, and no label selector
//     leaves pods out of them, unless a test makes them so with
//     interceptor.Funcs.
//
// So these tests show what Reconcile does with a given world, in
// milliseconds. That the cluster does its part (CRD validation and
// defaults, garbage collection, watch events reaching the controller
// through the predicates, the cache's label selector, the generated RBAC)
// is proved on a real cluster by the end-to-end suites in tests/ (make
// test-chapter N).

package controller

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

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

// Chapter 2: finalizer tracking, which chapter 7 drops: the owner
// references of chapter 3 let the garbage collector delete the pods, and
// the finalizers that chapters 2 to 6 left are removed.

// TestReconcilePutsNoFinalizerOnTheRedis: nothing of the operator's holds
// a Redis any more, so deleting one never waits for the operator.
func TestReconcilePutsNoFinalizerOnTheRedis(t *testing.T) {
	f := newFixture(t, redisWith(3))

	f.mustReconcile(t)
	if got := f.redis(t).Finalizers; len(got) != 0 {
		t.Errorf("finalizers = %q, want none", got)
	}
	f.setReplicas(t, 1)
	f.mustReconcile(t)
	if got := f.redis(t).Finalizers; len(got) != 0 {
		t.Errorf("finalizers after a scale-down = %q, want none", got)
	}

	f.deleteRedis(t)
	if err := f.api.Get(t.Context(), redisKey(), &myappv1.Redis{}); !apierrors.IsNotFound(err) {
		t.Errorf("getting the deleted Redis = %v, want NotFound: nothing holds it", err)
	}
}

// TestReconcileRemovesTheLegacyFinalizers: a Redis that a chapter 6
// operator reconciled carries one finalizer per pod. They are removed;
// someone else's finalizers, and one that names a pod of another Redis,
// are kept. The pods are created and kept as usual.
func TestReconcileRemovesTheLegacyFinalizers(t *testing.T) {
	cache0 := newTestPodAt(t, &RedisReconciler{}, testRedis(), 0)
	cache0.UID = "uid-cache-0"
	f := newFixture(t, redisWith(2,
		"myapp.example.com/cache-0", "myapp.example.com/cache-1", "example.org/other", "myapp.example.com/other-0",
	), cache0)
	before := identities(f.pods(t))["cache-0"]
	want := []string{"example.org/other", "myapp.example.com/other-0"}

	f.mustReconcile(t)

	if got := f.redis(t).Finalizers; !slices.Equal(got, want) {
		t.Errorf("finalizers = %q, want %q", got, want)
	}
	pods := f.pods(t)
	if got, want := podNames(pods), []string{"cache-0", "cache-1"}; !slices.Equal(got, want) {
		t.Fatalf("pods = %v, want %v", got, want)
	}
	if got := identities(pods)["cache-0"]; got != before {
		t.Errorf("cache-0 = %v, want %v untouched", got, before)
	}
	if got := controllerOf(pods["cache-1"]); got != theRedis {
		t.Errorf("cache-1 controller = %q, want %q", got, theRedis)
	}
	if got, want := f.events(), []string{"Normal SuccessfulCreate Created pod cache-1"}; !slices.Equal(got, want) {
		t.Errorf("events = %q, want %q", got, want)
	}

	f.mustReconcile(t)
	if got := f.redis(t).Finalizers; !slices.Equal(got, want) {
		t.Errorf("finalizers after a second Reconcile = %q, want still %q", got, want)
	}
}

// TestReconcileRemovesTheLegacyFinalizersWithAnOptimisticLock: a merge
// patch replaces the whole list of finalizers. Without the lock, a
// finalizer that someone added between the reconciler's read and its
// patch would be lost; with it, the patch fails, nothing is lost, and the
// retry (which reads again) removes the legacy finalizers.
func TestReconcileRemovesTheLegacyFinalizersWithAnOptimisticLock(t *testing.T) {
	f := newFixture(t, redisWith(1, "myapp.example.com/cache-0", "example.org/other"))
	raced := false
	f.r.Client = interceptor.NewClient(f.api, interceptor.Funcs{
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			if _, isRedis := obj.(*myappv1.Redis); isRedis && !raced {
				raced = true
				late := f.redis(t)
				late.Finalizers = append(late.Finalizers, "example.org/late")
				if err := f.api.Update(ctx, late); err != nil {
					t.Fatalf("adding a finalizer behind the reconciler's back: %v", err)
				}
			}
			return c.Patch(ctx, obj, patch, opts...)
		},
	})

	err := f.reconcile(t)

	if !raced {
		t.Fatal("the reconciler did not patch the Redis")
	}
	if !apierrors.IsConflict(err) {
		t.Errorf("Reconcile = %v, want a Conflict", err)
	}
	if got, want := f.redis(t).Finalizers, []string{"myapp.example.com/cache-0", "example.org/other", "example.org/late"}; !slices.Equal(got, want) {
		t.Errorf("finalizers = %q, want %q: the stale patch changes nothing", got, want)
	}

	f.mustReconcile(t)

	if got, want := f.redis(t).Finalizers, []string{"example.org/other", "example.org/late"}; !slices.Equal(got, want) {
		t.Errorf("finalizers after the retry = %q, want %q", got, want)
	}
	if got, want := podNames(f.pods(t)), []string{"cache-0"}; !slices.Equal(got, want) {
		t.Errorf("pods after the retry = %v, want %v", got, want)
	}
}

// TestReconcileOfARedisBeingDeleted: the garbage collector deletes the
// pods of a deleted Redis; Reconcile creates none (the collector would
// only delete it), deletes none (not even one above spec.replicas, or one
// that ended), and writes nothing but the removal of the legacy
// finalizers, which lets a Redis that a chapter 6 operator left
// Terminating go.
func TestReconcileOfARedisBeingDeleted(t *testing.T) {
	tests := []struct {
		name           string
		finalizers     []string
		wantFinalizers []string // nil: the Redis is gone
	}{
		{
			name:           "the legacy finalizers are removed, someone else's is kept",
			finalizers:     []string{"myapp.example.com/cache-0", "example.org/other", "myapp.example.com/cache-1", "myapp.example.com/cache-3"},
			wantFinalizers: []string{"example.org/other"},
		},
		{
			name:       "a Redis that only legacy finalizers hold goes",
			finalizers: []string{"myapp.example.com/cache-0", "myapp.example.com/cache-1", "myapp.example.com/cache-3"},
		},
		{
			name:           "a Redis that only someone else's finalizer holds is left alone",
			finalizers:     []string{"example.org/other"},
			wantFinalizers: []string{"example.org/other"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// cache-0 runs, cache-1 ended, cache-2 is missing, cache-3 is
			// above spec.replicas.
			var pods []client.Object
			for i, phase := range map[int32]corev1.PodPhase{0: corev1.PodRunning, 1: corev1.PodFailed, 3: corev1.PodRunning} {
				pod := newTestPodAt(t, &RedisReconciler{}, testRedis(), i)
				pod.UID = types.UID(fmt.Sprintf("uid-cache-%d", i))
				pod.Status.Phase = phase
				pods = append(pods, pod)
			}
			f := newFixture(t, append(pods, redisWith(3, tt.finalizers...))...)
			f.deleteRedis(t)
			deleting := f.redis(t)
			if deleting.DeletionTimestamp.IsZero() {
				t.Fatalf("the deleted Redis has no deletionTimestamp, want its finalizers %q to hold it", deleting.Finalizers)
			}
			before := identities(f.pods(t))

			f.mustReconcile(t)

			if after := identities(f.pods(t)); !maps.Equal(after, before) {
				t.Errorf("pods = %v, want %v untouched: none created, none deleted", after, before)
			}
			if got := f.events(); len(got) != 0 {
				t.Errorf("events = %q, want none", got)
			}
			redis := &myappv1.Redis{}
			err := f.api.Get(t.Context(), redisKey(), redis)
			if tt.wantFinalizers == nil {
				if !apierrors.IsNotFound(err) {
					t.Errorf("getting the Redis = %v, finalizers %q; want NotFound: the last finalizer is gone, and the Redis with it", err, redis.Finalizers)
				}
				return
			}
			if err != nil {
				t.Fatalf("getting the Redis: %v", err)
			}
			if !slices.Equal(redis.Finalizers, tt.wantFinalizers) {
				t.Errorf("finalizers = %q, want %q", redis.Finalizers, tt.wantFinalizers)
			}
			if slices.Equal(tt.finalizers, tt.wantFinalizers) && redis.ResourceVersion != deleting.ResourceVersion {
				t.Errorf("the Redis was written (resourceVersion %s, was %s), want it untouched; status %+v",
					redis.ResourceVersion, deleting.ResourceVersion, redis.Status)
			}
		})
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
	tests := []struct {
		name string
		pod  *corev1.Pod
	}{
		{"a pod without an owner is left alone, with a Warning and an error", foreignPod("cache-0")},
		{"a pod controlled by an earlier Redis of the same name is left alone, with a Warning and an error", earlierRedisPod("cache-0")},
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
			if got := controllerOf(pods["cache-0"]); got == theRedis {
				t.Errorf("cache-0 controller = %q, want it not adopted", got)
			}
			if got := controllerOf(pods["cache-1"]); got != theRedis {
				t.Errorf("cache-1 controller = %q, want cache-1 created all the same, controlled by %q", got, theRedis)
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

// TestReconcileCountsOnlyThePodsItControls: a pod that carries the Redis'
// labels (so the cache holds it and the label selector lists it) but that
// an earlier Redis of the same name controls, as until the garbage
// collector gets to it, is not the Redis': it is neither scaled down nor
// counted in the status.
func TestReconcileCountsOnlyThePodsItControls(t *testing.T) {
	earlier := earlierRedisPod("cache-2")
	earlier.Labels = newTestPodAt(t, &RedisReconciler{}, testRedis(), 2).Labels
	f := newFixture(t, redisWith(1), earlier)
	before := identities(f.pods(t))["cache-2"]

	f.mustReconcile(t)
	f.mustReconcile(t) // as when cache-0's create event brings the Redis back

	pods := f.pods(t)
	if got, want := podNames(pods), []string{"cache-0", "cache-2"}; !slices.Equal(got, want) {
		t.Fatalf("pods = %v, want %v", got, want)
	}
	if got := identities(pods)["cache-2"]; got != before {
		t.Errorf("cache-2 = %v, want %v untouched", got, before)
	}
	if got, want := f.events(), []string{"Normal SuccessfulCreate Created pod cache-0"}; !slices.Equal(got, want) {
		t.Errorf("events = %q, want %q: cache-2 is not the Redis' to scale down", got, want)
	}
	status := f.redis(t).Status
	if status.Replicas != 1 {
		t.Errorf("status.replicas = %d, want 1: cache-2 is not the Redis'", status.Replicas)
	}
	wantConditions(t, status, "Available=False PodsNotReady", "Progressing=True WaitingForReadiness")
}

// TestReconcileWhenTheCacheIsBehind: the reconciler reads pods from a cache
// that can lag behind the API server, and that never holds a pod without
// the managed-by label (see podCache). A pod the cache does not show
// makes Create fail with AlreadyExists, and Reconcile asks the API server
// (APIReader) whose pod it is.
func TestReconcileWhenTheCacheIsBehind(t *testing.T) {
	ours := newTestPod(t, &RedisReconciler{}, testRedis())
	ours.UID = "uid-ours"
	tests := []struct {
		name       string
		pod        *corev1.Pod // the cache-0 that the API server has
		wantErr    bool
		wantEvents []string
	}{
		{
			name: "a pod the Redis controls is fine, without an error or an event",
			pod:  ours,
		},
		{
			name:       "a pod someone else created is not adopted, with a Warning and an error",
			pod:        foreignPod("cache-0"),
			wantErr:    true,
			wantEvents: []string{"Warning ErrResourceExists Pod cache-0 already exists and is not controlled by this Redis"},
		},
		{
			name:       "a pod controlled by an earlier Redis of the same name is not adopted, with a Warning and an error",
			pod:        earlierRedisPod("cache-0"),
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
			if got := f.events(); !slices.Equal(got, tt.wantEvents) {
				t.Errorf("events = %q, want %q", got, tt.wantEvents)
			}
		})
	}
}

// Chapter 5: rebuild pods. Chapter 7 keeps no record of the pods, so a
// pod created again is reported like any other: SuccessfulCreate.

// TestReconcileCreatesADeletedPodAgain: Reconcile asks the cluster whether
// a pod exists. A pod that was deleted is created again: the same name, a
// new object, and a SuccessfulCreate event.
func TestReconcileCreatesADeletedPodAgain(t *testing.T) {
	f := newFixture(t, redisWith(2))
	f.mustReconcile(t)
	want := []string{"Normal SuccessfulCreate Created pod cache-0", "Normal SuccessfulCreate Created pod cache-1"}
	if got := f.events(); !slices.Equal(got, want) {
		t.Errorf("events of the first Reconcile = %q, want %q", got, want)
	}

	for round := 1; round <= 3; round++ {
		before := identities(f.pods(t))
		f.deletePod(t, "cache-1")

		f.mustReconcile(t)

		pods := f.pods(t)
		after := identities(pods)
		if after["cache-0"] != before["cache-0"] {
			t.Errorf("round %d: cache-0 = %v, want %v untouched", round, after["cache-0"], before["cache-0"])
		}
		created, ok := pods["cache-1"]
		if !ok || created.UID == before["cache-1"].UID {
			t.Fatalf("round %d: cache-1 exists: %t, UID %q; want a new pod in place of %q", round, ok, created.UID, before["cache-1"].UID)
		}
		if got := controllerOf(created); got != theRedis {
			t.Errorf("round %d: cache-1 controller = %q, want %q", round, got, theRedis)
		}
		if got := f.redis(t).Finalizers; len(got) != 0 {
			t.Errorf("round %d: finalizers = %q, want none", round, got)
		}
		if got, want := f.events(), []string{"Normal SuccessfulCreate Created pod cache-1"}; !slices.Equal(got, want) {
			t.Errorf("round %d: events = %q, want %q", round, got, want)
		}
	}
}

// TestReconcileStopsCreatingInATerminatingNamespace: when the API server
// refuses a pod because the namespace is being deleted, it would refuse
// the others too. Reconcile tries no other create, writes nothing more,
// emits no event and returns no error: nothing is retried.
func TestReconcileStopsCreatingInATerminatingNamespace(t *testing.T) {
	f := newFixture(t, redisWith(3))
	var creates, writes int
	f.r.Client = interceptor.NewClient(f.api, interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			creates++
			err := apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, obj.GetName(),
				fmt.Errorf("unable to create new content in namespace %s because it is being terminated", obj.GetNamespace()))
			err.ErrStatus.Details.Causes = []metav1.StatusCause{{Type: corev1.NamespaceTerminatingCause, Field: obj.GetNamespace()}}
			return err
		},
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			writes++
			return c.Patch(ctx, obj, patch, opts...)
		},
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			writes++
			return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
		},
	})

	f.mustReconcile(t)

	if creates != 1 {
		t.Errorf("creates = %d, want 1: after the first refusal the others would be refused too", creates)
	}
	if writes != 0 {
		t.Errorf("other writes = %d, want none", writes)
	}
	if got := f.events(); len(got) != 0 {
		t.Errorf("events = %q, want none: the namespace is going, nothing failed", got)
	}
}

// TestReconcileWaitsForATerminatingPodBeforeCreatingItAgain: a pod that is
// still terminating exists; it is created again once it is gone. (The
// fake has no kubelet: a finalizer holds the pod in Terminating here.)
func TestReconcileWaitsForATerminatingPodBeforeCreatingItAgain(t *testing.T) {
	f := newFixture(t, redisWith(1))
	f.mustReconcile(t)
	f.events()
	f.holdPod(t, "cache-0", true)
	f.deletePod(t, "cache-0")
	terminating := f.pods(t)["cache-0"]
	if terminating.DeletionTimestamp.IsZero() {
		t.Fatalf("cache-0 = %+v, want it terminating", terminating.ObjectMeta)
	}

	f.mustReconcile(t)

	if got, want := identities(f.pods(t))["cache-0"], (identity{terminating.UID, terminating.ResourceVersion}); got != want {
		t.Errorf("cache-0 = %v, want the terminating %v untouched", got, want)
	}
	if got := f.events(); len(got) != 0 {
		t.Errorf("events while cache-0 terminates = %q, want none", got)
	}

	f.holdPod(t, "cache-0", false)
	if got := podNames(f.pods(t)); len(got) != 0 {
		t.Fatalf("pods = %v, want cache-0 gone", got)
	}
	f.mustReconcile(t)

	created, ok := f.pods(t)["cache-0"]
	if !ok || created.UID == terminating.UID {
		t.Errorf("cache-0 exists: %t, UID %q; want a new pod in place of %q, which terminated", ok, created.UID, terminating.UID)
	}
	if got, want := f.events(), []string{"Normal SuccessfulCreate Created pod cache-0"}; !slices.Equal(got, want) {
		t.Errorf("events = %q, want %q", got, want)
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
// reference, and no labels (so the operator's cache never holds it).
func foreignPod(name string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: "uid-foreign"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "example.com/app:1"}}},
	}
}

// earlierRedisPod is pod ns/name as an earlier Redis ns/cache (UID uid-0,
// deleted and created again since) left it, before the garbage collector
// got to it.
func earlierRedisPod(name string) *corev1.Pod {
	pod := foreignPod(name)
	pod.OwnerReferences = []metav1.OwnerReference{{
		APIVersion: "myapp.example.com/v1", Kind: "Redis", Name: "cache", UID: "uid-0", Controller: ptr.To(true),
	}}
	return pod
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

// Chapter 6: scale and status.

// TestReconcileScalesDownHighestFirst: spec.replicas going down deletes the
// pods above it, the highest ordinal first.
func TestReconcileScalesDownHighestFirst(t *testing.T) {
	f := newFixture(t, redisWith(3))
	f.mustReconcile(t)
	f.events()

	f.setReplicas(t, 1)
	f.mustReconcile(t)

	if got, want := podNames(f.pods(t)), []string{"cache-0"}; !slices.Equal(got, want) {
		t.Errorf("pods = %v, want %v", got, want)
	}
	want := []string{
		"Normal SuccessfulDelete Deleted pod cache-2: scaled down to 1",
		"Normal SuccessfulDelete Deleted pod cache-1: scaled down to 1",
	}
	if got := f.events(); !slices.Equal(got, want) {
		t.Errorf("events = %q, want %q", got, want)
	}
}

// TestReconcileScalesUpWithNewPods: after a scale-down, scaling up creates
// the pods again as new pods.
func TestReconcileScalesUpWithNewPods(t *testing.T) {
	f := newFixture(t, redisWith(3))
	f.mustReconcile(t)
	f.setReplicas(t, 1)
	f.mustReconcile(t)
	f.events()

	f.setReplicas(t, 3)
	f.mustReconcile(t)

	if got, want := podNames(f.pods(t)), []string{"cache-0", "cache-1", "cache-2"}; !slices.Equal(got, want) {
		t.Errorf("pods = %v, want %v", got, want)
	}
	want := []string{"Normal SuccessfulCreate Created pod cache-1", "Normal SuccessfulCreate Created pod cache-2"}
	if got := f.events(); !slices.Equal(got, want) {
		t.Errorf("events = %q, want %q", got, want)
	}
}

// TestReconcileScalesUpWhileOldPodsStillTerminate: pods deleted by a
// scale-down may still be terminating when the Redis is scaled up again.
// They are neither deleted again nor replaced while they terminate; once
// they are gone, their names are created as new pods.
func TestReconcileScalesUpWhileOldPodsStillTerminate(t *testing.T) {
	f := newFixture(t, redisWith(3))
	f.mustReconcile(t)
	for _, name := range []string{"cache-1", "cache-2"} {
		f.holdPod(t, name, true) // a finalizer keeps it terminating, as a kubelet would
	}
	f.setReplicas(t, 1)
	f.mustReconcile(t)
	terminating := identities(f.pods(t))
	for _, name := range []string{"cache-1", "cache-2"} {
		if pod := f.pods(t)[name]; pod.DeletionTimestamp.IsZero() {
			t.Fatalf("%s = %+v, want it terminating", name, pod.ObjectMeta)
		}
	}
	f.events()

	f.setReplicas(t, 3)
	f.mustReconcile(t)

	if got := identities(f.pods(t)); !maps.Equal(got, terminating) {
		t.Errorf("pods while cache-1 and cache-2 terminate = %v, want %v untouched", got, terminating)
	}
	if got := f.events(); len(got) != 0 {
		t.Errorf("events while cache-1 and cache-2 terminate = %q, want none", got)
	}

	for _, name := range []string{"cache-1", "cache-2"} {
		f.holdPod(t, name, false)
	}
	f.mustReconcile(t)

	pods := f.pods(t)
	if got, want := podNames(pods), []string{"cache-0", "cache-1", "cache-2"}; !slices.Equal(got, want) {
		t.Fatalf("pods = %v, want %v", got, want)
	}
	for _, name := range []string{"cache-1", "cache-2"} {
		if pods[name].UID == terminating[name].UID || !pods[name].DeletionTimestamp.IsZero() {
			t.Errorf("%s = UID %s, deletionTimestamp %v: want a new pod", name, pods[name].UID, pods[name].DeletionTimestamp)
		}
	}
	want := []string{"Normal SuccessfulCreate Created pod cache-1", "Normal SuccessfulCreate Created pod cache-2"}
	if got := f.events(); !slices.Equal(got, want) {
		t.Errorf("events once the old pods are gone = %q, want %q", got, want)
	}
}

// TestReconcileScalesDownOnlyThePodsTheCacheShows: a pod above
// spec.replicas that the cache does not show yet (created a moment ago) is
// not deleted by this Reconcile, as nothing records it; the Reconcile that
// its create event brings, once the cache shows it, deletes it.
func TestReconcileScalesDownOnlyThePodsTheCacheShows(t *testing.T) {
	f := newFixture(t, redisWith(3))
	f.mustReconcile(t)
	f.events()
	f.setReplicas(t, 1)
	f.r.Client = fakeapi.CacheWithout(f.api, "cache-2")

	f.mustReconcile(t)

	if got, want := podNames(f.pods(t)), []string{"cache-0", "cache-2"}; !slices.Equal(got, want) {
		t.Errorf("pods = %v, want %v: cache-2 is not in the cache yet", got, want)
	}
	if got, want := f.events(), []string{"Normal SuccessfulDelete Deleted pod cache-1: scaled down to 1"}; !slices.Equal(got, want) {
		t.Errorf("events = %q, want %q", got, want)
	}

	f.r.Client = f.api // the cache has caught up
	f.mustReconcile(t)

	if got, want := podNames(f.pods(t)), []string{"cache-0"}; !slices.Equal(got, want) {
		t.Errorf("pods once the cache shows cache-2 = %v, want %v", got, want)
	}
	if got, want := f.events(), []string{"Normal SuccessfulDelete Deleted pod cache-2: scaled down to 1"}; !slices.Equal(got, want) {
		t.Errorf("events once the cache shows cache-2 = %q, want %q", got, want)
	}
}

// TestReconcileDeletesOnlyThePodItRead: the cache still shows the Redis'
// cache-1, but on the API server that pod was deleted and someone else's
// cache-1 took the name. The UID precondition makes the API server refuse
// the scale-down's delete, so someone else's pod survives, and the
// Reconcile fails, to be retried with what the cache shows then.
func TestReconcileDeletesOnlyThePodItRead(t *testing.T) {
	f := newFixture(t, redisWith(2))
	f.mustReconcile(t)
	ours := f.pods(t)["cache-1"]
	f.deletePod(t, "cache-1")
	if err := f.api.Create(t.Context(), foreignPod("cache-1")); err != nil {
		t.Fatalf("creating someone else's cache-1: %v", err)
	}
	theirs := identities(f.pods(t))["cache-1"]
	if theirs.UID == ours.UID {
		t.Fatalf("someone else's cache-1 has the UID %s of ours", theirs.UID)
	}
	f.setReplicas(t, 1)
	f.r.Client = fakeapi.CacheShowing(f.api, ours)
	f.events()

	err := f.reconcile(t)

	if !apierrors.IsConflict(err) {
		t.Errorf("Reconcile = %v, want a Conflict: the pod the cache shows is not the one on the API server", err)
	}
	if got := identities(f.pods(t))["cache-1"]; got != theirs {
		t.Errorf("cache-1 = %v, want someone else's %v untouched", got, theirs)
	}
	if got := f.events(); len(got) != 0 {
		t.Errorf("events = %q, want none", got)
	}

	f.r.Client = f.api // the cache has caught up: it does not hold someone else's pod
	f.mustReconcile(t)

	if got := identities(f.pods(t))["cache-1"]; got != theirs {
		t.Errorf("cache-1 after the retry = %v, want someone else's %v untouched", got, theirs)
	}
	if got := f.events(); len(got) != 0 {
		t.Errorf("events of the retry = %q, want none", got)
	}
}

// TestAvailableCountsOnlyTheDesiredPods: during a scale-down, a Ready pod
// about to be deleted does not make up for a desired pod that is not Ready.
func TestAvailableCountsOnlyTheDesiredPods(t *testing.T) {
	f := newFixture(t, redisWith(4))
	f.mustReconcile(t)
	for _, pod := range f.pods(t) {
		if pod.Name == "cache-0" {
			continue
		}
		pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
		if err := f.api.Status().Update(t.Context(), &pod); err != nil {
			t.Fatal(err)
		}
	}
	f.setReplicas(t, 3)

	f.mustReconcile(t)

	status := f.redis(t).Status
	wantConditions(t, status, "Available=False PodsNotReady", "Progressing=True DeletingPods")
	if available := status.Conditions[0].Message; !strings.HasPrefix(available, "2 of 3 pods are ready") {
		t.Errorf("Available's message = %q, want 2 of 3 ready", available)
	}
}

// TestReconcileReplacesAnEndedPod: a pod whose containers stopped for good
// (phase Failed, as after an eviction) is deleted and created again.
func TestReconcileReplacesAnEndedPod(t *testing.T) {
	f := newFixture(t, redisWith(2))
	f.mustReconcile(t)
	ended := f.pods(t)["cache-1"]
	ended.Status.Phase = corev1.PodFailed
	if err := f.api.Status().Update(t.Context(), &ended); err != nil {
		t.Fatal(err)
	}
	f.events()

	// The fake has no kubelet: the deleted pod is gone at once, and the
	// same Reconcile creates it again. On a cluster, the cache still shows
	// the pod, and the Reconcile that its delete event brings creates it.
	f.mustReconcile(t)

	pods := f.pods(t)
	if got, want := podNames(pods), []string{"cache-0", "cache-1"}; !slices.Equal(got, want) {
		t.Fatalf("pods = %v, want %v", got, want)
	}
	if pods["cache-1"].UID == ended.UID || pods["cache-1"].Status.Phase == corev1.PodFailed {
		t.Errorf("cache-1 = UID %s, phase %q: want a new pod", pods["cache-1"].UID, pods["cache-1"].Status.Phase)
	}
	want := []string{
		"Normal SuccessfulDelete Deleted pod cache-1: it ended (phase Failed)",
		"Normal SuccessfulCreate Created pod cache-1",
	}
	if got := f.events(); !slices.Equal(got, want) {
		t.Errorf("events = %q, want %q", got, want)
	}
}

// TestReconcileReportsTheStatus follows a Redis' status from its first
// reconcile to its pods being Ready, shows that a Reconcile that finds
// nothing changed writes nothing, and that the status follows the
// generation of the spec.
func TestReconcileReportsTheStatus(t *testing.T) {
	f := newFixture(t, redisWith(3))
	f.mustReconcile(t) // creates the pods; they are not in its list yet
	f.mustReconcile(t) // as when the pods' create events bring the Redis back

	status := f.redis(t).Status
	if status.Replicas != 3 || status.ReadyReplicas != 0 || status.Selector != "app.kubernetes.io/instance=cache,app.kubernetes.io/name=redis" {
		t.Errorf("status = %+v, want 3 replicas, 0 ready and the pods' selector", status)
	}
	wantConditions(t, status, "Available=False PodsNotReady", "Progressing=True WaitingForReadiness")

	for _, pod := range f.pods(t) {
		pod.Status.Phase = corev1.PodRunning
		pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
		if err := f.api.Status().Update(t.Context(), &pod); err != nil {
			t.Fatal(err)
		}
	}
	f.mustReconcile(t)

	redis := f.redis(t)
	if redis.Status.ReadyReplicas != 3 {
		t.Errorf("status = %+v, want 3 ready", redis.Status)
	}
	wantConditions(t, redis.Status, "Available=True AllPodsReady", "Progressing=False Complete")
	wantObservedGeneration(t, redis.Status, 1)

	f.mustReconcile(t)
	if after := f.redis(t); after.ResourceVersion != redis.ResourceVersion {
		t.Errorf("a Reconcile with nothing to change wrote the Redis: resourceVersion %s, was %s; status %+v",
			after.ResourceVersion, redis.ResourceVersion, after.Status)
	}

	f.setReplicas(t, 2) // generation 2
	f.mustReconcile(t)
	wantObservedGeneration(t, f.redis(t).Status, 2)
}

func TestOrdinal(t *testing.T) {
	redis := testRedis()
	for name, want := range map[string]int32{"cache-0": 0, "cache-10": 10, "cache-01": -1, "cache-": -1, "cache-x": -1, "other-1": -1, "cache-1-2": -1} {
		if got := ordinal(redis, name); got != want {
			t.Errorf("ordinal(%q) = %d, want %d", name, got, want)
		}
	}
}

// holdPod adds (or removes) a finalizer on a pod, so that a delete leaves
// it terminating until it is released.
func (f *fixture) holdPod(t *testing.T, name string, hold bool) {
	t.Helper()
	pod := &corev1.Pod{}
	if err := f.api.Get(t.Context(), types.NamespacedName{Namespace: "ns", Name: name}, pod); err != nil {
		t.Fatal(err)
	}
	pod.Finalizers = nil
	if hold {
		pod.Finalizers = []string{"example.com/hold"}
	}
	if err := f.api.Update(t.Context(), pod); err != nil {
		t.Fatal(err)
	}
}

// setReplicas changes spec.replicas as `kubectl scale` does.
func (f *fixture) setReplicas(t *testing.T, replicas int32) {
	t.Helper()
	redis := f.redis(t)
	redis.Spec.Replicas = replicas
	redis.Generation++ // the API server does this on a spec change; the fake does not
	if err := f.api.Update(t.Context(), redis); err != nil {
		t.Fatalf("scaling to %d: %v", replicas, err)
	}
}

// wantConditions checks a status' conditions, each "Type=Status Reason".
func wantConditions(t *testing.T, status myappv1.RedisStatus, want ...string) {
	t.Helper()
	var got []string
	for _, c := range status.Conditions {
		got = append(got, fmt.Sprintf("%s=%s %s", c.Type, c.Status, c.Reason))
	}
	if !slices.Equal(got, want) {
		t.Errorf("conditions = %q, want %q", got, want)
	}
}

// wantObservedGeneration checks that a status, and each of its conditions,
// says which generation of the spec it describes.
func wantObservedGeneration(t *testing.T, status myappv1.RedisStatus, want int64) {
	t.Helper()
	if status.ObservedGeneration != want {
		t.Errorf("status.observedGeneration = %d, want %d", status.ObservedGeneration, want)
	}
	for _, c := range status.Conditions {
		if c.ObservedGeneration != want {
			t.Errorf("condition %s: observedGeneration = %d, want %d", c.Type, c.ObservedGeneration, want)
		}
	}
}

// TestReconcileRestoresTheLabelsOfItsPod: a pod the Redis controls whose
// labels someone removed is out of the status (the selector's labels) or
// out of the cache (the managed-by label). Reconcile puts them back, and
// replaces nothing.
func TestReconcileRestoresTheLabelsOfItsPod(t *testing.T) {
	for _, tt := range []struct {
		name    string
		removed string
		// hidden: the cache does not hold the pod, as the manager's cache
		// does not hold a pod without the managed-by label.
		hidden bool
	}{
		{name: "the managed-by label, so that the cache does not hold it", removed: LabelManagedBy, hidden: true},
		{name: "the instance label, so that the selector does not match it", removed: LabelInstance},
	} {
		t.Run(tt.name, func(t *testing.T) {
			pod := newTestPod(t, &RedisReconciler{}, testRedis())
			pod.UID = "uid-ours"
			delete(pod.Labels, tt.removed)
			f := newFixture(t, redisWith(1), pod)
			if tt.hidden {
				f.r.Client = fakeapi.CacheWithout(f.api, "cache-0")
			}
			f.mustReconcile(t)

			after := f.pods(t)
			if got := after["cache-0"].Labels; !labelsInclude(got, podLabels(f.redis(t))) {
				t.Errorf("labels = %v, want those of %v back", got, podLabels(f.redis(t)))
			}
			if len(after) != 1 || after["cache-0"].UID != "uid-ours" {
				t.Errorf("pods = %v, want cache-0 the same object: the pod is not replaced", podNames(after))
			}
			if got := f.events(); len(got) != 0 {
				t.Errorf("events = %q, want none", got)
			}
		})
	}
}
