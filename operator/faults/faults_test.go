package faults

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

func TestFaultsFromEnv(t *testing.T) {
	tests := []struct {
		crash, before, conflict, stale string
		want                           faults
		wantErr                        bool
	}{
		{want: faults{crashAfter: -1}},
		{crash: "0", want: faults{crashAfter: 0}},
		{crash: "7", conflict: "true", stale: "true", want: faults{crashAfter: 7, conflictOnce: true, stalePods: true}},
		{crash: "delete Pod cache-4#1", want: faults{crashAfter: -1, crashAt: "delete Pod cache-4#1"}},
		{crash: " patch  status Redis cache#12 ", want: faults{crashAfter: -1, crashAt: "patch status Redis cache#12"}},
		{before: "create Pod cache-0#2", want: faults{crashAfter: -1, crashAt: "create Pod cache-0#2", crashBefore: true}},
		{crash: "3", before: "create Pod cache-0#1", wantErr: true},
		{before: "3", wantErr: true},
		{before: " ", wantErr: true},
		{crash: "delete Pod cache-4", wantErr: true},
		{crash: "delete Pod cache-4#0", wantErr: true},
		{crash: "delete cache-4#1", wantErr: true},
		{crash: "-1", wantErr: true},
		{crash: "seven", wantErr: true},
		{conflict: "2", wantErr: true},
		{stale: "yes please", wantErr: true},
	}
	for _, tt := range tests {
		t.Setenv(EnvCrashAfterWrite, tt.crash)
		t.Setenv(EnvCrashBeforeWrite, tt.before)
		t.Setenv(EnvConflictOnce, tt.conflict)
		t.Setenv(EnvStalePods, tt.stale)
		got, err := faultsFromEnv()
		if tt.wantErr {
			if err == nil {
				t.Errorf("crash=%q before=%q conflict=%q stale=%q: want an error, got %+v", tt.crash, tt.before, tt.conflict, tt.stale, got)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("crash=%q before=%q conflict=%q stale=%q: got %+v, %v; want %+v", tt.crash, tt.before, tt.conflict, tt.stale, got, err, tt.want)
		}
	}
}

// A variable with the faults' prefix that names no fault is refused, not
// ignored: a misspelt fault would otherwise test nothing.
func TestUnknownFaultRefused(t *testing.T) {
	t.Setenv(Prefix+"CRASH_AFTER_WRITES", "0")
	if _, err := faultsFromEnv(); err == nil || !strings.Contains(err.Error(), Prefix+"CRASH_AFTER_WRITES is no fault") {
		t.Errorf("faultsFromEnv: %v, want the misspelt variable refused", err)
	}
}

// Without a fault asked for, Inject changes nothing; in a pod, it refuses
// any fault.
func TestInject(t *testing.T) {
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	opts := ctrl.Options{}
	if add, err := Inject(&opts); err != nil || add != nil || opts.NewClient != nil || opts.Cache.NewInformer != nil {
		t.Errorf("no fault: Inject returned %v, %v and set NewClient %v, NewInformer %v; want nothing changed", add != nil, err, opts.NewClient != nil, opts.Cache.NewInformer != nil)
	}
	t.Setenv(EnvStalePods, "true")
	if add, err := Inject(&opts); err != nil || add == nil || opts.Cache.NewInformer == nil {
		t.Errorf("stale pods: Inject returned %v, %v, NewInformer set %v; want the gate and its signal handler", add != nil, err, opts.Cache.NewInformer != nil)
	}
	t.Setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1")
	if _, err := Inject(&ctrl.Options{}); err == nil || !strings.Contains(err.Error(), "runs in a pod") {
		t.Errorf("in a pod: Inject returned %v, want a refusal", err)
	}
}

// WritesIn reads back the lines that write logs, in the development
// logger's format, and nothing else.
func TestWritesIn(t *testing.T) {
	log := strings.Join([]string{
		"2026-11-27T01:00:00Z\tINFO\tfaults\t" + WriteMessage + "\t" + `{"n": 1, "write": "create Pod cache-0#1", "verb": "create", "kind": "Pod", "object": "ns/cache-0"}`,
		"2026-11-27T01:00:00Z\tINFO\tsetup\tStarting operator\t" + `{"host": "https://127.0.0.1"}`,
		"2026-11-27T01:00:01Z\tINFO\tfaults\t" + WriteMessage + "\t" + `{"n": 2, "write": "patch status Redis cache#1", "verb": "patch status", "kind": "Redis", "object": "ns/cache", "error": "conflict"}`,
		"2026-11-27T01:00:01Z\tINFO\tfaults\t" + CrashAfter + ", as it asks\t" + `{"n": 2, "write": "patch status Redis cache#1", "verb": "patch status", "kind": "Redis", "object": "ns/cache"}`,
		"2026-11-27T01:00:02Z\tINFO\tfaults\t" + CrashBefore + ", as it asks\t" + `{"n": 3, "write": "delete Pod cache-2#1", "verb": "delete", "kind": "Pod", "object": "ns/cache-2"}`,
		"2026-11-27T01:00:03Z\tINFO\tfaults\t" + WatchHeld + ": the cache keeps the pods",
	}, "\n")
	want := []Write{
		{N: 1, Verb: "create", Kind: "Pod", Object: "ns/cache-0", Name: "create Pod cache-0#1"},
		{N: 2, Verb: "patch status", Kind: "Redis", Object: "ns/cache", Error: "conflict", Name: "patch status Redis cache#1"},
		{N: 2, Verb: "patch status", Kind: "Redis", Object: "ns/cache", Name: "patch status Redis cache#1", Crash: true},
		{N: 3, Verb: "delete", Kind: "Pod", Object: "ns/cache-2", Name: "delete Pod cache-2#1", Crash: true, Before: true},
	}
	if got := WritesIn(log); !reflect.DeepEqual(got, want) {
		t.Errorf("WritesIn:\n got %+v\nwant %+v", got, want)
	}
}

// faultClient is a fake client behind writeFaults, and what it counted.
func faultClient(t *testing.T, f faults) (client.Client, *writeFaults, *[]int) {
	t.Helper()
	var exits []int
	w := &writeFaults{faults: f, exit: func(code int) { exits = append(exits, code) }}
	return interceptor.NewClient(fake.NewClientBuilder().Build(), w.funcs()), w, &exits
}

func pod(name string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name}}
}

// The crash comes right after the N-th write, which the API server got,
// and only then.
func TestCrashAfterWrite(t *testing.T) {
	ctx := context.Background()
	c, w, exits := faultClient(t, faults{crashAfter: 3})
	for _, name := range []string{"a", "b"} {
		if err := c.Create(ctx, pod(name)); err != nil {
			t.Fatal(err)
		}
	}
	if len(*exits) != 0 {
		t.Fatalf("exited after %d writes", w.n)
	}
	if err := c.Delete(ctx, pod("a")); err != nil {
		t.Fatal(err)
	}
	if got := *exits; len(got) != 1 || got[0] != CrashExitCode {
		t.Fatalf("after the 3rd write: exits %v, want [%d]", got, CrashExitCode)
	}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "a"}, &corev1.Pod{}); !apierrors.IsNotFound(err) {
		t.Errorf("the 3rd write (a delete) did not reach the API server before the crash: get = %v", err)
	}
	// A status patch is a write too.
	if err := c.Status().Patch(ctx, pod("b"), client.MergeFrom(pod("b"))); err != nil {
		t.Fatal(err)
	}
	if w.n != 4 || len(*exits) != 1 {
		t.Errorf("writes %d, exits %v; want 4 writes and one exit", w.n, *exits)
	}
}

// A write named is crashed after, or before, whatever its number: the
// second create of pod a, in any namespace.
func TestCrashAtNamedWrite(t *testing.T) {
	ctx := context.Background()
	for _, before := range []bool{false, true} {
		c, w, exits := faultClient(t, faults{crashAfter: -1, crashAt: "create Pod a#2", crashBefore: before})
		other := pod("a")
		other.Namespace = "other"
		for _, p := range []*corev1.Pod{pod("b"), pod("a"), other} {
			err := c.Create(ctx, p)
			if crashed := len(*exits) == 1; crashed != (p == other) {
				t.Fatalf("before=%t: exits %v after the create of %s/%s, the %d-th write", before, *exits, p.Namespace, p.Name, w.n)
			}
			if p == other && before && err == nil {
				t.Errorf("before=%t: the create the operator crashed before returned no error", before)
			}
		}
		err := c.Get(ctx, client.ObjectKeyFromObject(other), &corev1.Pod{})
		if sent := err == nil; sent == before {
			t.Errorf("before=%t: the write named was sent: %t (get = %v)", before, sent, err)
		}
	}
}

// Every write method of the client goes through the faults, and no read:
// a field of interceptor.Funcs that this test does not know fails it until
// it is hooked, or named a read here.
func TestEveryWriteIntercepted(t *testing.T) {
	reads := map[string]bool{"Get": true, "List": true, "Watch": true, "SubResource": true, "SubResourceGet": true}
	funcs := reflect.ValueOf((&writeFaults{}).funcs())
	for i := range funcs.NumField() {
		name, hooked := funcs.Type().Field(i).Name, !funcs.Field(i).IsNil()
		if hooked == reads[name] {
			t.Errorf("interceptor.Funcs.%s: hooked %t, a read %t: hook every write, and no read", name, hooked, reads[name])
		}
	}
}

// A server-side apply is a write, named by its kind and name, crashed
// after whatever the server answered.
func TestApplyIsAWrite(t *testing.T) {
	c, w, exits := faultClient(t, faults{crashAfter: -1, crashAt: "apply Pod a#1"})
	_ = c.Apply(context.Background(), corev1ac.Pod("a", "default").WithLabels(map[string]string{"k": "v"}), client.FieldOwner("test"))
	if w.named["apply Pod a"] != 1 || len(*exits) != 1 {
		t.Errorf("writes named %v, exits %v; want one apply of pod a, crashed after", w.named, *exits)
	}
}

// Each write is refused with a Conflict the first time, and never sent;
// made again, it goes through. A patch made again with other data is
// another write.
func TestConflictOnce(t *testing.T) {
	ctx := context.Background()
	c, _, exits := faultClient(t, faults{crashAfter: -1, conflictOnce: true})
	if err := c.Create(ctx, pod("a")); !apierrors.IsConflict(err) {
		t.Fatalf("first create: %v, want a Conflict", err)
	}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "a"}, &corev1.Pod{}); !apierrors.IsNotFound(err) {
		t.Fatalf("the refused create was sent: get = %v", err)
	}
	if err := c.Create(ctx, pod("a")); err != nil {
		t.Fatalf("the same create again: %v", err)
	}
	patch := func(value string) error {
		p := pod("a")
		base := p.DeepCopy()
		p.Labels = map[string]string{"k": value}
		return c.Patch(ctx, p, client.MergeFrom(base))
	}
	for _, step := range []struct {
		value    string
		conflict bool
	}{{"1", true}, {"1", false}, {"2", true}, {"2", false}, {"1", false}} {
		if err := patch(step.value); apierrors.IsConflict(err) != step.conflict || (err != nil && !step.conflict) {
			t.Errorf("patch k=%s: %v, want a Conflict: %t", step.value, err, step.conflict)
		}
	}
	if len(*exits) != 0 {
		t.Errorf("exited: %v", *exits)
	}
}

// A held gate keeps a watch's events, in order, until it is released.
func TestWatchGate(t *testing.T) {
	gate := newWatchGate()
	src := watch.NewFake()
	w := gate.through(src)
	defer w.Stop()
	// next is the next event, as "ADDED a", or "" if none comes.
	next := func() string {
		select {
		case e := <-w.ResultChan():
			return string(e.Type) + " " + e.Object.(*corev1.Pod).Name
		case <-time.After(200 * time.Millisecond):
			return ""
		}
	}

	go src.Add(pod("a"))
	if got := next(); got != "ADDED a" {
		t.Fatalf("open gate: got %q; want ADDED a", got)
	}
	gate.hold()
	go func() { src.Add(pod("b")); src.Modify(pod("b")); src.Delete(pod("b")) }()
	if got := next(); got != "" {
		t.Fatalf("held gate let %q through", got)
	}
	gate.release()
	for _, want := range []string{"ADDED b", "MODIFIED b", "DELETED b"} {
		if got := next(); got != want {
			t.Fatalf("released gate: got %q; want %s, the events in the order they came", got, want)
		}
	}
}
