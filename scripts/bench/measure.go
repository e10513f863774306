package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	myappv1 "example.com/redis-operator/api/v1"
	"example.com/redis-operator/internal/parallel"
)

// bench is one run.
type bench struct {
	cfg        config
	cs         kubernetes.Interface
	cl         client.Client
	kubeconfig string
	operators  []*operator
	report     report
}

// benchLabel marks the bench's namespaces, so that a run finds and removes
// what an interrupted one left.
const benchLabel = "bench.myapp.example.com/run"

// report is what a run found, written as JSON; durations in milliseconds
// unless the name says otherwise.
type report struct {
	Machine  machine               `json:"machine"`
	Config   reportConfig          `json:"config"`
	Targets  []string              `json:"targets"`
	Rebuild  map[string]rebuildSet `json:"rebuild"` // by delete kind, then target
	Churn    rebuildSet            `json:"churn,omitempty"`
	Converge map[string]*converge  `json:"converge,omitempty"`
	API      map[string]*apiCost   `json:"api,omitempty"`
	Memory   map[string]*memory    `json:"memory,omitempty"`
}

type machine struct {
	CPU        string `json:"cpu"`
	CPUs       int    `json:"cpus"`
	MemoryGiB  float64
	OS, Arch   string
	Go         string
	Kubernetes string
	Cluster    string
	Nodes      []string
	PodSlots   int // room for more pods on the schedulable nodes
	Date       string
}

type reportConfig struct {
	Samples, Warmup, Objects, APIObjects, UnrelatedPods int
	OldChapters                                         []int // in their order: the memory verdict compares with the first
	NewChapter                                          int
	Steady, ChurnInterval                               string
	ConvergeOrder                                       []string
}

// UnmarshalJSON reads reports written before a run measured more than two
// chapters, too: their config has OldChapter, one chapter, and no
// OldChapters.
func (c *reportConfig) UnmarshalJSON(data []byte) error {
	type plain reportConfig // without this method, which would recurse
	var v struct {
		plain
		OldChapter int
	}
	if err := json.Unmarshal(data, &v); err != nil {
		return err
	}
	*c = reportConfig(v.plain)
	if len(c.OldChapters) == 0 && v.OldChapter != 0 {
		c.OldChapters = []int{v.OldChapter}
	}
	return nil
}

// rebuildSet holds, per target, the samples of one delete kind.
type rebuildSet map[string]*rebuildSamples

// rebuildSamples are one target's samples of one delete kind, in the order
// of the rounds: a round deletes one pod of each target and kind, so the
// i-th samples of two targets come from the same round, and the verdict
// compares them in pairs (slowerTests). A run stopped within a round has
// one sample more for the targets it had deleted a pod of.
type rebuildSamples struct {
	// LatencyMs: delete call to the replacement's ADDED event.
	LatencyMs []float64 `json:"latencyMs"`
	// ShareMs, the controller's own share: the old pod's DELETED event to
	// the replacement's ADDED event when the replacement takes the old
	// name; the old pod's first event with a deletionTimestamp to the
	// replacement's ADDED event when it does not (the ReplicaSet replaces
	// a pod as soon as its deletion starts).
	ShareMs []float64 `json:"shareMs"`
}

type converge struct {
	ExistSeconds   float64 `json:"existSeconds"`   // the first create to 3N pods existing
	RunningSeconds float64 `json:"runningSeconds"` // ... to 3N pods Running and Ready
}

// apiCost is what an operator asked of the API server. The phases after
// convergence are nil until they have been measured, so that the report of
// an interrupted run says "not measured" rather than 0. They are embedded
// so that the JSON keeps its flat field names: reports written before they
// were split out still read.
type apiCost struct {
	RequestsPerReconcile float64 `json:"requestsPerReconcile"`
	*SteadyState
	*NamespaceDeletion
}

// SteadyState is what the operator sent while nothing changed.
type SteadyState struct {
	WritesPerMinute float64 `json:"steadyWritesPerMinute"`
	Requests        float64 `json:"steadyRequests"`
	Reconciles      float64 `json:"steadyReconciles"`
}

// NamespaceDeletion is what the operator did while its namespace, with
// Redis objects, was deleted: requests by method and code, reconciles, and
// reconciles that returned an error (an error means a retry).
type NamespaceDeletion struct {
	Requests   map[string]float64 `json:"namespaceDeletionRequests"`
	Redis      int                `json:"namespaceDeletionRedis"`
	Reconciles float64            `json:"namespaceDeletionReconciles"`
	Errors     float64            `json:"namespaceDeletionReconcileErrors"`
	Seconds    float64            `json:"namespaceDeletionSeconds"`
}

// memory is an operator's memory, idle, then with unrelated pods in the
// cluster; the second is nil until it has been measured (embedded, like
// apiCost's phases).
type memory struct {
	IdleRSSMiB, IdleHeapMiB float64
	*UnrelatedMemory
}

// UnrelatedMemory is an operator's memory with unrelated pods in the
// cluster.
type UnrelatedMemory struct {
	UnrelatedRSSMiB, UnrelatedHeapMiB float64
}

// all runs every measurement in order: rebuild latency, then convergence
// with deletes under churn, then API cost with every operator reconciling
// its own namespace; then memory, with one operator at a time reconciling
// every namespace.
func (b *bench) all(ctx context.Context) error {
	if err := b.removeEarlierRuns(ctx); err != nil {
		return err
	}
	targets := b.targets()
	var namespaces []string
	for _, t := range targets {
		b.report.Targets = append(b.report.Targets, t.name)
		namespaces = append(namespaces, t.ns)
		if err := b.createNamespace(ctx, t.ns); err != nil {
			return err
		}
	}
	for _, t := range operated(targets) {
		o, err := b.startOperator(ctx, t.chapter, t.ns)
		if err != nil {
			return err
		}
		t.op = o
	}

	w, err := startWatch(ctx, b.cs, namespaces)
	if err != nil {
		return err
	}
	defer w.stop()

	progress("creating one object of %d pods per target", replicas)
	for _, t := range targets {
		if err := b.cl.Create(ctx, t.object("rebuild")); err != nil {
			return err
		}
	}
	for _, t := range targets {
		if err := w.waitRunning(ctx, t.ns, "rebuild", replicas, 5*time.Minute); err != nil {
			return fmt.Errorf("%s: %w", t.name, err)
		}
	}
	if err := b.rebuild(ctx, w, targets); err != nil {
		return err
	}
	if !b.cfg.skipConvergence {
		if err := b.converge(ctx, w, targets); err != nil {
			return err
		}
		if err := b.api(ctx, w, operated(targets)); err != nil {
			return err
		}
	}
	w.stop()
	for _, t := range operated(targets) {
		t.op.stop()
	}
	// The memory measurement wants no pods but its unrelated ones.
	for _, ns := range namespaces {
		progress("deleting namespace %s", ns)
		if err := b.deleteNamespace(ctx, ns); err != nil {
			return err
		}
	}
	if !b.cfg.skipMemory {
		return b.memory(ctx)
	}
	return nil
}

var deleteKinds = []struct {
	name  string
	grace *int64
}{{"graceful", nil}, {"grace-period=0", ptr.To[int64](0)}}

// rebuild deletes one pod of each target per round, in a random order of
// targets and kinds each round, and waits for the target to be back at 3
// running pods before the next delete. The first rounds warm up (the
// operators' and controllers' clients and caches, the node) and are not
// recorded.
func (b *bench) rebuild(ctx context.Context, w *podWatch, targets []*target) error {
	b.report.Rebuild = map[string]rebuildSet{}
	type job struct {
		t    *target
		kind int
	}
	var jobs []job
	for k := range deleteKinds {
		b.report.Rebuild[deleteKinds[k].name] = rebuildSet{}
		for _, t := range targets {
			b.report.Rebuild[deleteKinds[k].name][t.name] = &rebuildSamples{}
			jobs = append(jobs, job{t, k})
		}
	}
	rounds := b.cfg.warmup + b.cfg.samples
	for round := range rounds {
		what := "warm-up"
		if round >= b.cfg.warmup {
			what = "recorded"
		}
		progress("rebuild round %d of %d (%s): %d deletes", round+1, rounds, what, len(jobs))
		rand.Shuffle(len(jobs), func(i, j int) { jobs[i], jobs[j] = jobs[j], jobs[i] })
		for _, j := range jobs {
			kind := deleteKinds[j.kind]
			lat, share, err := b.deleteOne(ctx, w, j.t, round, kind.grace, 2*time.Minute)
			if err != nil {
				return fmt.Errorf("%s, %s delete: %w", j.t.name, kind.name, err)
			}
			if err := w.waitRunning(ctx, j.t.ns, "rebuild", replicas, 3*time.Minute); err != nil {
				return fmt.Errorf("%s after a %s delete: %w", j.t.name, kind.name, err)
			}
			if round >= b.cfg.warmup {
				s := b.report.Rebuild[kind.name][j.t.name]
				s.LatencyMs = append(s.LatencyMs, ms(lat))
				s.ShareMs = append(s.ShareMs, ms(share))
			}
		}
	}
	return nil
}

// deleteOne deletes a pod of t's rebuild object (the round picks which)
// and waits for its replacement.
func (b *bench) deleteOne(ctx context.Context, w *podWatch, t *target, round int, grace *int64, timeout time.Duration) (latency, share time.Duration, err error) {
	pods := w.pods(t.ns, "rebuild", false)
	if len(pods) != replicas {
		return 0, 0, fmt.Errorf("%d pods before the delete, want %d", len(pods), replicas)
	}
	victim := pods[round%len(pods)]
	before := w.uids(t.ns, "rebuild")
	start := time.Now()
	if err := b.cs.CoreV1().Pods(t.ns).Delete(ctx, victim.Name, metav1.DeleteOptions{GracePeriodSeconds: grace}); err != nil {
		return 0, 0, fmt.Errorf("deleting pod %s: %w", victim.Name, err)
	}
	r, err := w.waitReplacement(ctx, t.ns, victim, before, start, t.sameName, timeout)
	if err != nil {
		return 0, 0, err
	}
	from := r.terminating
	if t.sameName {
		from = r.deleted
	}
	return r.added.Sub(start), r.added.Sub(from), nil
}

// converge creates N objects per target, one target at a time in a random
// order, and times until their 3N pods exist and until they all run. While
// they converge, it deletes one of the target's rebuild pods a second
// (grace 0) and times their replacements: rebuilds under churn. Each
// target's objects are deleted, and their pods stopped by the nodes and
// gone, before the next target starts, so that every target starts on
// idle nodes.
func (b *bench) converge(ctx context.Context, w *podWatch, targets []*target) error {
	b.report.Converge = map[string]*converge{}
	b.report.Churn = rebuildSet{}
	b.report.API = map[string]*apiCost{}
	order := append([]*target(nil), targets...)
	rand.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
	n := b.cfg.objects * replicas
	for _, t := range order {
		b.report.Config.ConvergeOrder = append(b.report.Config.ConvergeOrder, t.name)
		progress("convergence: %d x %d pods for %s, with rebuilds under churn", b.cfg.objects, replicas, t.name)
		var before counters
		if t.op != nil {
			var err error
			if before, err = t.op.counters(ctx); err != nil {
				return err
			}
		}
		stopChurn := make(chan struct{})
		churn := &rebuildSamples{}
		var churnErr error
		var churning sync.WaitGroup
		churning.Go(func() { churnErr = b.churn(ctx, stopChurn, w, t, churn) })

		c := &converge{}
		start := time.Now()
		err := parallel.Create(ctx, b.cl, b.cfg.objects, func(i int) client.Object { return t.object(fmt.Sprintf("c-%d", i)) })
		if err == nil {
			err = w.waitExist(ctx, t.ns, "c", n, 30*time.Minute)
			c.ExistSeconds = time.Since(start).Seconds()
		}
		if err == nil {
			err = w.waitRunning(ctx, t.ns, "c", n, 30*time.Minute)
			c.RunningSeconds = time.Since(start).Seconds()
		}
		close(stopChurn)
		churning.Wait()
		if err != nil {
			return fmt.Errorf("%s: %w", t.name, err)
		}
		if churnErr != nil {
			return fmt.Errorf("%s, rebuilds under churn: %w", t.name, churnErr)
		}
		b.report.Converge[t.name] = c
		b.report.Churn[t.name] = churn
		progress("  %s: %d x %d pods existed after %.1f s and ran after %.1f s; %d rebuilds under churn",
			t.name, b.cfg.objects, replicas, c.ExistSeconds, c.RunningSeconds, len(churn.LatencyMs))
		if t.op != nil {
			after, err := settle(ctx, t.op, 5*time.Second)
			if err != nil {
				return err
			}
			d := after.sub(before)
			b.report.API[t.name] = &apiCost{RequestsPerReconcile: d.requests / max(d.reconciles, 1)}
		}

		progress("  deleting the %d objects of %s, and their pods, and waiting for the nodes to stop them", b.cfg.objects, t.name)
		if err := deleteAll(ctx, b.cl, b.cfg.objects, func(i int) client.Object { return t.object(fmt.Sprintf("c-%d", i)) }); err != nil {
			return err
		}
		// The pods are deleted here rather than by the garbage collector,
		// which is slower, and with their grace period: a pod deleted so
		// leaves the API only once its kubelet has stopped it. Deleted
		// with grace 0, they would leave at once and the nodes would spend
		// the next target's first minutes stopping thousands of them.
		pods := w.pods(t.ns, "c", true)
		err = parallel.Do(ctx, len(pods), "pod deletes", func(i int) error {
			return client.IgnoreNotFound(b.cl.Delete(ctx, pods[i]))
		})
		if err != nil {
			return err
		}
		if err := w.waitGone(ctx, t.ns, "c", 30*time.Minute); err != nil {
			return fmt.Errorf("%s: the pods of the deleted objects: %w", t.name, err)
		}
		if err := w.waitRunning(ctx, t.ns, "rebuild", replicas, 30*time.Minute); err != nil {
			return fmt.Errorf("%s after churn: %w", t.name, err)
		}
	}
	return nil
}

// churn deletes one of t's rebuild pods (grace 0) every churnInterval,
// or as soon as the last one's replacement was added when that takes
// longer, until stop is closed. A delete made before stop still counts:
// its replacement is waited for, up to churnTimeout, so that the slowest
// rebuilds are not the ones left out.
func (b *bench) churn(ctx context.Context, stop <-chan struct{}, w *podWatch, t *target, s *rebuildSamples) error {
	stopCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-stop:
			cancel()
		case <-stopCtx.Done():
		}
	}()
	tick := time.NewTicker(b.cfg.churnInterval)
	defer tick.Stop()
	for round := 0; ; round++ {
		err := w.waitFor(stopCtx, t.ns, churnTimeout, func() bool { return len(w.podsLocked(t.ns, "rebuild", false)) == replicas })
		if stopCtx.Err() != nil {
			return ctx.Err() // stopped before the next delete
		}
		if err != nil {
			return fmt.Errorf("the rebuild object did not come back to %d pods: %w", replicas, err)
		}
		lat, share, err := b.deleteOne(ctx, w, t, round, ptr.To[int64](0), churnTimeout)
		if err != nil {
			return err
		}
		s.LatencyMs = append(s.LatencyMs, ms(lat))
		s.ShareMs = append(s.ShareMs, ms(share))
		select {
		case <-tick.C:
		case <-stopCtx.Done():
			return ctx.Err()
		}
	}
}

// churnTimeout bounds one rebuild under churn: a controller with
// thousands of objects to create may take minutes.
const churnTimeout = 10 * time.Minute

// api creates APIObjects Redis objects in each operator's namespace at
// once and waits for their pods to run, watches every operator in steady
// state, then deletes each operator's namespace in turn, counting what the
// operator sent meanwhile. targets are the operators'.
func (b *bench) api(ctx context.Context, w *podWatch, targets []*target) error {
	n := b.cfg.apiObjects
	namespaces := make([]string, len(targets))
	for i, t := range targets {
		namespaces[i] = t.ns
	}
	progress("API cost: %d Redis objects in each of %s", n, strings.Join(namespaces, ", "))
	for _, t := range targets {
		if err := parallel.Create(ctx, b.cl, n, func(i int) client.Object { return t.object(fmt.Sprintf("a-%d", i)) }); err != nil {
			return err
		}
	}
	for _, t := range targets {
		if err := w.waitRunning(ctx, t.ns, "a", n*replicas, 30*time.Minute); err != nil {
			return fmt.Errorf("%s: %w", t.name, err)
		}
	}
	// Steady state: no operator has reconciled or sent a request for a
	// while. Each is watched at once: the operators are independent.
	settled := make([]error, len(targets))
	var settling sync.WaitGroup
	for i, t := range targets {
		settling.Go(func() { _, settled[i] = settle(ctx, t.op, 10*time.Second) })
	}
	settling.Wait()
	if err := errors.Join(settled...); err != nil {
		return err
	}

	progress("steady state: watching the operators' requests for %s", b.cfg.steady)
	before := map[*target]counters{}
	for _, t := range targets {
		c, err := t.op.counters(ctx)
		if err != nil {
			return err
		}
		before[t] = c
	}
	select {
	case <-time.After(b.cfg.steady):
	case <-ctx.Done():
		return ctx.Err()
	}
	for _, t := range targets {
		c, err := t.op.counters(ctx)
		if err != nil {
			return err
		}
		d := c.sub(before[t])
		a := b.report.API[t.name]
		if a == nil {
			a = &apiCost{}
			b.report.API[t.name] = a
		}
		a.SteadyState = &SteadyState{
			WritesPerMinute: d.writes / b.cfg.steady.Minutes(),
			Requests:        d.requests,
			Reconciles:      d.reconciles,
		}
	}

	for _, t := range targets {
		progress("deleting namespace %s (%d Redis) with %s's operator running", t.ns, n+1, t.name)
		before, err := t.op.counters(ctx)
		if err != nil {
			return err
		}
		start := time.Now()
		if err := b.deleteNamespace(ctx, t.ns); err != nil {
			return err
		}
		seconds := time.Since(start).Seconds()
		after, err := settle(ctx, t.op, 3*time.Second)
		if err != nil {
			return err
		}
		d := after.sub(before)
		b.report.API[t.name].NamespaceDeletion = &NamespaceDeletion{
			Requests: d.byMethodCode, Redis: n + 1, Reconciles: d.reconciles, Errors: d.reconcileErrors, Seconds: seconds,
		}
	}
	return nil
}

// settle waits until the operator's reconcile and request counters both
// hold still for the given time, and returns them.
func settle(ctx context.Context, o *operator, still time.Duration) (counters, error) {
	var last counters
	since := time.Now()
	err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 10*time.Minute, true, func(ctx context.Context) (bool, error) {
		c, err := o.counters(ctx)
		if err != nil {
			return false, err
		}
		if c.reconciles != last.reconciles || c.requests != last.requests {
			last, since = c, time.Now()
		}
		return time.Since(since) >= still, nil
	})
	if err != nil {
		return last, fmt.Errorf("the chapter %d operator did not settle (%.0f reconciles, %.0f requests so far): %w", o.chapter, last.reconciles, last.requests, err)
	}
	return last, nil
}

// deleteAll deletes n objects, 8 at a time, their pods in the background.
func deleteAll(ctx context.Context, cl client.Client, n int, object func(i int) client.Object) error {
	return parallel.Do(ctx, n, "deletes", func(i int) error {
		return client.IgnoreNotFound(cl.Delete(ctx, object(i), client.PropagationPolicy(metav1.DeletePropagationBackground)))
	})
}

// memory measures each operator alone, reconciling every namespace, idle,
// then with unrelated pods in the cluster.
func (b *bench) memory(ctx context.Context) error {
	b.report.Memory = map[string]*memory{}
	chapters := b.cfg.chapters()
	measure := func(chapter int, unrelated bool) error {
		o, err := b.startOperator(ctx, chapter, "")
		if err != nil {
			return err
		}
		defer o.stop()
		rss, heap, err := o.memory(ctx)
		if err != nil {
			return fmt.Errorf("chapter %d's memory: %w", chapter, err)
		}
		if unrelated {
			b.report.Memory[chapterName(chapter)].UnrelatedMemory = &UnrelatedMemory{UnrelatedRSSMiB: rss, UnrelatedHeapMiB: heap}
		} else {
			b.report.Memory[chapterName(chapter)] = &memory{IdleRSSMiB: rss, IdleHeapMiB: heap}
		}
		return nil
	}
	for _, chapter := range chapters {
		progress("memory: %s, idle", chapterName(chapter))
		if err := measure(chapter, false); err != nil {
			return err
		}
	}
	const ns = "bench-unrelated"
	if err := b.createNamespace(ctx, ns); err != nil {
		return err
	}
	progress("creating %d unrelated pods (pending behind a scheduling gate)", b.cfg.unrelatedPods)
	err := parallel.Create(ctx, b.cl, b.cfg.unrelatedPods, func(i int) client.Object {
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("app-%d", i),
				Labels: map[string]string{"app": "unrelated", "tier": "web"}},
			Spec: corev1.PodSpec{
				SchedulingGates: []corev1.PodSchedulingGate{{Name: "example.org/never"}},
				Containers: []corev1.Container{{Name: "app", Image: "registry.example.org/app:1.0",
					Env:   []corev1.EnvVar{{Name: "PADDING", Value: strings.Repeat("x", 512)}},
					Ports: []corev1.ContainerPort{{ContainerPort: 8080}}}},
			},
		}
	})
	if err != nil {
		return err
	}
	for _, chapter := range chapters {
		progress("memory: %s, with %d unrelated pods", chapterName(chapter), b.cfg.unrelatedPods)
		if err := measure(chapter, true); err != nil {
			return err
		}
	}
	progress("deleting namespace %s", ns)
	return b.deleteNamespace(ctx, ns)
}

// createNamespace creates ns with the bench's label.
func (b *bench) createNamespace(ctx context.Context, ns string) error {
	err := b.cl.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: map[string]string{benchLabel: "true"}}})
	if err != nil {
		return fmt.Errorf("creating namespace %s: %w", ns, err)
	}
	return nil
}

// removeEarlierRuns deletes what an earlier, interrupted run left: its
// namespaces, after taking the finalizers off their Redis objects (no
// operator is left to remove them).
func (b *bench) removeEarlierRuns(ctx context.Context) error {
	list := &corev1.NamespaceList{}
	if err := b.cl.List(ctx, list, client.HasLabels{benchLabel}); err != nil {
		return err
	}
	for _, ns := range list.Items {
		progress("deleting namespace %s, left by an earlier run", ns.Name)
		// Its pods at once: the nodes would take minutes for thousands.
		err := b.cl.DeleteAllOf(ctx, &corev1.Pod{}, client.InNamespace(ns.Name), client.GracePeriodSeconds(0))
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("deleting the pods of namespace %s: %w", ns.Name, err)
		}
		if err := b.deleteNamespace(ctx, ns.Name); err != nil {
			return err
		}
	}
	return nil
}

// deleteNamespace deletes ns and waits until it is gone. Redis objects
// that still have finalizers when no operator of this run reconciles them
// lose them, or they would keep the namespace in Terminating.
func (b *bench) deleteNamespace(ctx context.Context, ns string) error {
	if err := client.IgnoreNotFound(b.cl.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})); err != nil {
		return err
	}
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 15*time.Minute, true, func(ctx context.Context) (bool, error) {
		err := b.cl.Get(ctx, client.ObjectKey{Name: ns}, &corev1.Namespace{})
		if err == nil && !b.reconciled(ns) {
			b.stripFinalizers(ctx, ns)
		}
		return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
	})
	if err != nil {
		return fmt.Errorf("namespace %s was not deleted: %w", ns, err)
	}
	return nil
}

// reconciled reports whether a running operator of this run reconciles ns.
func (b *bench) reconciled(ns string) bool {
	for _, o := range b.operators {
		if o.Running() && o.namespace == ns {
			return true
		}
	}
	return false
}

func (b *bench) stripFinalizers(ctx context.Context, ns string) {
	list := &myappv1.RedisList{}
	if err := b.cl.List(ctx, list, client.InNamespace(ns)); err != nil {
		return
	}
	for i := range list.Items {
		if r := &list.Items[i]; len(r.Finalizers) > 0 {
			_ = b.cl.Patch(ctx, r, client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`)))
		}
	}
}

// cleanup stops the operators and deletes the namespaces, without waiting:
// what is left, the next run removes first.
func (b *bench) cleanup() {
	for _, o := range b.operators {
		o.stop()
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	list := &corev1.NamespaceList{}
	if err := b.cl.List(ctx, list, client.HasLabels{benchLabel}); err != nil {
		return
	}
	for _, ns := range list.Items {
		b.stripFinalizers(ctx, ns.Name)
		_ = client.IgnoreNotFound(b.cl.Delete(ctx, &ns))
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func progress(format string, args ...any) {
	fmt.Printf("[bench %s] %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
}
