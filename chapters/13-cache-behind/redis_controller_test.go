package controller

import (
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

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

// TestIsLegacyPodFinalizer: only a finalizer that chapters 2 to 6 put on
// this Redis, "myapp.example.com/<redis>-<ordinal>", is the operator's to
// remove; every other finalizer is someone else's.
func TestIsLegacyPodFinalizer(t *testing.T) {
	redis := testRedis()
	for finalizer, want := range map[string]bool{
		"myapp.example.com/cache-0":        true,
		"myapp.example.com/cache-1":        true,
		"myapp.example.com/cache-12":       true, // a pod above spec.replicas, left by a scale-down
		"myapp.example.com/other-0":        false,
		"myapp.example.com/something-else": false,
		"myapp.example.com/cache-":         false,
		"myapp.example.com/cache-01":       false,
		"myapp.example.com/cache-x":        false,
		"myapp.example.com/cache":          false,
		"example.org/other":                false,
		"example.org/cache-0":              false,
		"cache-0":                          false,
		"myapp.example.com/":               false,
	} {
		if got := isLegacyPodFinalizer(redis, finalizer); got != want {
			t.Errorf("isLegacyPodFinalizer(%q) = %t, want %t", finalizer, got, want)
		}
	}
}

// TestPodStatusChanged: only a pod update that changes what the Redis
// reports or acts on brings the Redis back; the rest of a pod's updates
// do not cost a reconcile.
func TestPodStatusChanged(t *testing.T) {
	t0 := metav1.NewTime(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))
	t1 := metav1.NewTime(t0.Add(10 * time.Second))
	readyCondition := func(status corev1.ConditionStatus, at metav1.Time) []corev1.PodCondition {
		return []corev1.PodCondition{
			{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastProbeTime: at, LastTransitionTime: t0},
			{Type: corev1.PodReady, Status: status, LastProbeTime: at, LastTransitionTime: t0},
		}
	}

	pending := newTestPod(t, &RedisReconciler{}, testRedis())
	pending.Status.Phase = corev1.PodPending
	running := pending.DeepCopy()
	running.Status.Phase = corev1.PodRunning
	notReady := running.DeepCopy()
	notReady.Status.Conditions = readyCondition(corev1.ConditionFalse, t0)
	ready := running.DeepCopy()
	ready.Status.Conditions = readyCondition(corev1.ConditionTrue, t0)
	readyProbedLater := running.DeepCopy()
	readyProbedLater.Status.Conditions = readyCondition(corev1.ConditionTrue, t1)
	failed := ready.DeepCopy()
	failed.Status.Phase = corev1.PodFailed
	annotated := ready.DeepCopy()
	annotated.Annotations = map[string]string{"example.com/note": "x"}
	relabelled := ready.DeepCopy()
	relabelled.Labels["example.com/note"] = "x"
	terminating := ready.DeepCopy()
	terminating.DeletionTimestamp = &t1
	terminating.DeletionGracePeriodSeconds = ptr.To[int64](30)
	terminatingSooner := terminating.DeepCopy()
	terminatingSooner.DeletionGracePeriodSeconds = ptr.To[int64](0)
	forced := ready.DeepCopy() // deleted with --grace-period=0 --force
	forced.DeletionTimestamp = &t1
	forced.DeletionGracePeriodSeconds = ptr.To[int64](0)
	forcedWithFinalizer := forced.DeepCopy() // stays until the finalizer goes
	forcedWithFinalizer.Finalizers = []string{"example.com/backup"}
	configMap := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cache-0"}}
	changedConfigMap := configMap.DeepCopy()
	changedConfigMap.Data = map[string]string{"k": "v"}

	tests := []struct {
		name     string
		old, new client.Object
		want     bool
	}{
		{"becoming Ready", running, ready, true},
		{"no longer Ready", ready, notReady, true},
		{"no longer Ready, the condition gone", ready, running, true},
		{"a new phase", pending, running, true},
		{"ended", ready, failed, true},
		{"being deleted", ready, terminating, true},
		{"not Ready before, not Ready now", running, notReady, false},
		{"only a condition's timestamp", ready, readyProbedLater, false},
		{"only an annotation", ready, annotated, false},
		{"a label", ready, relabelled, true},
		{"still being deleted, with a shorter grace period", terminating, terminatingSooner, false},
		{"being deleted without a grace period: its delete event follows at once", ready, forced, false},
		{"being deleted without a grace period, held by a finalizer", ready, forcedWithFinalizer, true},
		{"no change at all", ready, ready.DeepCopy(), false},
		{"a ConfigMap", configMap, changedConfigMap, false},
		{"a pod and a ConfigMap", pending, configMap, false},
	}
	p := PodStatusChanged()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := p.Update(event.UpdateEvent{ObjectOld: tt.old, ObjectNew: tt.new}); got != tt.want {
				t.Errorf("Update = %t, want %t", got, tt.want)
			}
		})
	}

	// A pod created or deleted changes how many pods the Redis has.
	if !p.Create(event.CreateEvent{Object: pending}) {
		t.Error("Create = false, want true: a new pod is counted")
	}
	if !p.Delete(event.DeleteEvent{Object: ready}) {
		t.Error("Delete = false, want true: a deleted pod is created again")
	}
	if !p.Delete(event.DeleteEvent{Object: ready, DeleteStateUnknown: true}) {
		t.Error("Delete of a final state unknown = false, want true")
	}
}

// TestPodCache: the cache holds the pods that the reconciler creates, and
// no other pod; it filters no other kind of object.
func TestPodCache(t *testing.T) {
	byObject := podCache()

	var selector labels.Selector
	for obj, o := range byObject {
		if _, isPod := obj.(*corev1.Pod); !isPod {
			t.Errorf("podCache has an entry for %T, want one for pods only", obj)
			continue
		}
		selector = o.Label
	}
	if selector == nil {
		t.Fatalf("podCache() = %v, want a label selector for pods", byObject)
	}

	tests := []struct {
		name   string
		labels map[string]string
		want   bool
	}{
		{"a pod the reconciler creates", newTestPod(t, &RedisReconciler{}, testRedis()).Labels, true},
		{"a pod with only the managed-by label", map[string]string{LabelManagedBy: ManagedBy}, true},
		{"a pod without labels", nil, false},
		{"a pod of the Redis' name without the managed-by label", map[string]string{LabelName: "redis", LabelInstance: "cache"}, false},
		{"a pod managed by someone else", map[string]string{LabelManagedBy: "helm"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := selector.Matches(labels.Set(tt.labels)); got != tt.want {
				t.Errorf("selector %q matches %v: %t, want %t", selector, tt.labels, got, tt.want)
			}
		})
	}
}

// TestComputeStatus: the status is a function of the Redis and its pods
// alone. A condition keeps its transition time while its status stays,
// and takes now when it changes.
func TestComputeStatus(t *testing.T) {
	t0 := metav1.NewTime(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))
	now := metav1.NewTime(t0.Add(time.Hour))
	redis := testRedis()
	redis.Spec.Replicas = 3
	pod := func(index int32, ready, deleted bool) corev1.Pod {
		p := *newTestPodAt(t, &RedisReconciler{}, redis, index)
		if ready {
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
		}
		if deleted {
			p.DeletionTimestamp = &t0
		}
		return p
	}

	tests := []struct {
		name       string
		pods       []corev1.Pod
		replicas   int32
		ready      int32
		conditions []string
	}{
		{"no pods yet", nil, 0, 0, []string{"Available=False PodsNotReady", "Progressing=True CreatingPods"}},
		{"all pods, none ready", []corev1.Pod{pod(0, false, false), pod(1, false, false), pod(2, false, false)}, 3, 0,
			[]string{"Available=False PodsNotReady", "Progressing=True WaitingForReadiness"}},
		{"all pods ready", []corev1.Pod{pod(0, true, false), pod(1, true, false), pod(2, true, false)}, 3, 3,
			[]string{"Available=True AllPodsReady", "Progressing=False Complete"}},
		{"one pod terminating: not counted", []corev1.Pod{pod(0, true, false), pod(1, true, true), pod(2, true, false)}, 2, 2,
			[]string{"Available=False PodsNotReady", "Progressing=True CreatingPods"}},
		{"one pod too many, ready: Available does not count it", []corev1.Pod{pod(0, true, false), pod(1, false, false), pod(2, true, false), pod(3, true, false)}, 4, 3,
			[]string{"Available=False PodsNotReady", "Progressing=True DeletingPods"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status := computeStatus(redis, tt.pods, now)
			if status.Replicas != tt.replicas || status.ReadyReplicas != tt.ready {
				t.Errorf("replicas = %d, ready = %d; want %d and %d", status.Replicas, status.ReadyReplicas, tt.replicas, tt.ready)
			}
			if status.Selector != "app.kubernetes.io/instance=cache,app.kubernetes.io/name=redis" {
				t.Errorf("selector = %q, want the pods' labels", status.Selector)
			}
			wantConditions(t, status, tt.conditions...)
			wantObservedGeneration(t, status, 1)
		})
	}

	// The time a condition took its status is kept while that status stays.
	redis.Status = computeStatus(redis, nil, metav1.NewTime(t0.Time))
	later := computeStatus(redis, []corev1.Pod{pod(0, false, false)}, now)
	for _, c := range later.Conditions {
		if !c.LastTransitionTime.Equal(&t0) {
			t.Errorf("condition %s changed only its message, but its transition time is %v, want %v", c.Type, c.LastTransitionTime, t0)
		}
	}
	done := computeStatus(redis, []corev1.Pod{pod(0, true, false), pod(1, true, false), pod(2, true, false)}, now)
	for _, c := range done.Conditions {
		if !c.LastTransitionTime.Equal(&now) {
			t.Errorf("condition %s changed its status at %v, want now (%v)", c.Type, c.LastTransitionTime, now)
		}
	}
	if redis.Status.Replicas != 0 || len(redis.Status.Conditions) != 2 {
		t.Errorf("computeStatus changed the Redis it was given: %+v", redis.Status)
	}
}

// TestAPodsDeleteGoesFirst: the Redis of a deleted pod is handed to the
// next free worker before the Redis objects that were queued earlier at
// the default priority, such as new ones; those keep their order.
func TestAPodsDeleteGoesFirst(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := myappv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	mapper := meta.NewDefaultRESTMapper(nil)
	mapper.Add(myappv1.GroupVersion.WithKind("Redis"), meta.RESTScopeNamespace)
	h := podHandler(scheme, mapper)
	q := priorityqueue.New[reconcile.Request]("test")
	defer q.ShutDown()
	podOf := func(name string) *corev1.Pod {
		redis := testRedis()
		redis.Name, redis.UID = name, types.UID("uid-"+name)
		return newTestPod(t, &RedisReconciler{}, redis)
	}

	for _, name := range []string{"new-a", "new-b"} {
		h.Create(t.Context(), event.CreateEvent{Object: podOf(name)}, q)
	}
	h.Delete(t.Context(), event.DeleteEvent{Object: podOf("cache")}, q)
	h.Create(t.Context(), event.CreateEvent{Object: podOf("new-c")}, q)
	for deadline := time.Now().Add(5 * time.Second); q.Len() < 4; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("queue length = %d, want 4", q.Len())
		}
	}

	var got []string
	for range 4 {
		item, priority, _ := q.GetWithPriority()
		got = append(got, fmt.Sprintf("%s %d", item.Name, priority))
		q.Done(item)
	}
	want := []string{fmt.Sprintf("cache %d", RebuildPriority), "new-a 0", "new-b 0", "new-c 0"}
	if !slices.Equal(got, want) {
		t.Errorf("queue order = %q, want %q", got, want)
	}
}

// TestNewManager: the manager runs DefaultMaxConcurrentReconciles workers
// unless the operator's options set a number. Making a manager reaches
// the API server only through its REST mapper, which the test gives it;
// nothing listens at the address.
func TestNewManager(t *testing.T) {
	cfg := &rest.Config{Host: "https://127.0.0.1:1"}
	mapper := meta.NewDefaultRESTMapper(nil)
	mapper.Add(corev1.SchemeGroupVersion.WithKind("Pod"), meta.RESTScopeNamespace)
	mapper.Add(myappv1.GroupVersion.WithKind("Redis"), meta.RESTScopeNamespace)
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := myappv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ set, want int }{{0, DefaultMaxConcurrentReconciles}, {1, 1}, {16, 16}} {
		opts := ctrl.Options{
			Scheme:                 scheme,
			Metrics:                metricsserver.Options{BindAddress: "0"},
			HealthProbeBindAddress: "0",
			// One test makes several managers, each with a controller named redis.
			Controller:     config.Controller{MaxConcurrentReconciles: tt.set, SkipNameValidation: ptr.To(true)},
			MapperProvider: func(*rest.Config, *http.Client) (meta.RESTMapper, error) { return mapper, nil },
		}
		mgr, err := NewManager(cfg, opts)
		if err != nil {
			t.Fatalf("NewManager with %d workers set: %v", tt.set, err)
		}
		if got := mgr.GetControllerOptions().MaxConcurrentReconciles; got != tt.want {
			t.Errorf("with %d set, the manager runs %d workers, want %d", tt.set, got, tt.want)
		}
	}
}

// TestInCluster: the manager's options for a cluster. The suite shows what
// they do (the handover in seconds, the metrics refused without a token);
// this says which options do it.
func TestInCluster(t *testing.T) {
	opts := ctrl.Options{Metrics: metricsserver.Options{BindAddress: ":8443"}}
	inCluster(&opts)
	if !opts.LeaderElectionReleaseOnCancel {
		t.Error("a leader that stops does not release its Lease (LeaderElectionReleaseOnCancel)")
	}
	if !opts.Metrics.SecureServing {
		t.Error("metrics are served over plain HTTP")
	}
	if opts.Metrics.FilterProvider == nil {
		t.Error("metrics are served to anyone: no FilterProvider")
	}
	if opts.Metrics.BindAddress != ":8443" {
		t.Errorf("the metrics address changed to %q", opts.Metrics.BindAddress)
	}
}
