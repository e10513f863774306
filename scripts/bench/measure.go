package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// bench is one run.
type bench struct {
	cfg        config
	cs         kubernetes.Interface
	cl         client.Client
	kubeconfig string
	operators  []*operator
	namespaces []string
	report     report
}

// report is what a run found, written as JSON; durations in milliseconds.
type report struct {
	Machine     machine               `json:"machine"`
	Config      reportConfig          `json:"config"`
	Rebuild     map[string]rebuildSet `json:"rebuild"` // by delete kind, then target
	Converge    map[string]float64    `json:"convergeSeconds,omitempty"`
	API         map[string]*apiCost   `json:"api,omitempty"`
	Memory      map[string]*memory    `json:"memory,omitempty"`
	TargetOrder []string              `json:"targets"`
}

type machine struct {
	OS, Arch   string
	CPUs       int
	Go         string
	Kubernetes string
	Cluster    string
	Date       string
}

type reportConfig struct {
	Samples, Objects, UnrelatedPods int
	OldChapter, NewChapter          int
	Steady                          string
}

// rebuildSet holds, per target, the samples of one delete kind.
type rebuildSet map[string]*rebuildSamples

type rebuildSamples struct {
	// LatencyMs: delete call to the replacement's ADDED event.
	LatencyMs []float64 `json:"latencyMs"`
	// ShareMs: the old pod's DELETED event to the replacement's ADDED
	// event, for targets whose replacement takes the old name.
	ShareMs []float64 `json:"shareMs,omitempty"`
}

type apiCost struct {
	RequestsPerReconcile  float64            `json:"requestsPerReconcile"`
	SteadyWritesPerMinute float64            `json:"steadyWritesPerMinute"`
	SteadyRequests        float64            `json:"steadyRequests"`
	NamespaceDeletion     map[string]float64 `json:"namespaceDeletionRequestsByCode"`
	NamespaceDeletionSecs float64            `json:"namespaceDeletionSeconds"`
}

type memory struct {
	IdleRSSMiB, IdleHeapMiB           float64
	UnrelatedRSSMiB, UnrelatedHeapMiB float64
}

// all runs every measurement in order: rebuild latency, convergence and
// API cost with both operators each reconciling its namespace, then
// memory with one operator at a time, reconciling every namespace.
func (b *bench) all(ctx context.Context) error {
	targets := b.targets()
	for _, t := range targets {
		b.report.TargetOrder = append(b.report.TargetOrder, t.name)
		if err := b.ensureNamespace(ctx, t.ns); err != nil {
			return err
		}
	}
	for i, chapter := range []int{b.cfg.oldChapter, b.cfg.newChapter} {
		o, err := b.startOperator(ctx, chapter, targets[i].ns)
		if err != nil {
			return err
		}
		targets[i].op = o
	}

	w, err := startWatch(ctx, b.cs)
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
		if err := w.waitSteady(ctx, t.ns, "rebuild", replicas); err != nil {
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
	}
	w.stop()
	for _, t := range targets[:2] {
		t.op.stop()
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
// targets and kinds each round, waiting for the target to be back at 3
// running pods before the next delete.
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
	for round := range b.cfg.samples {
		progress("rebuild round %d of %d: %d deletes", round+1, b.cfg.samples, len(jobs))
		rand.Shuffle(len(jobs), func(i, j int) { jobs[i], jobs[j] = jobs[j], jobs[i] })
		for _, j := range jobs {
			s := b.report.Rebuild[deleteKinds[j.kind].name][j.t.name]
			lat, share, err := b.deleteOne(ctx, w, j.t, round, deleteKinds[j.kind].grace)
			if err != nil {
				return fmt.Errorf("%s, %s delete: %w", j.t.name, deleteKinds[j.kind].name, err)
			}
			s.LatencyMs = append(s.LatencyMs, ms(lat))
			if j.t.sameName {
				s.ShareMs = append(s.ShareMs, ms(share))
			}
		}
	}
	return nil
}

// deleteOne deletes one running pod of t and waits for its replacement.
func (b *bench) deleteOne(ctx context.Context, w *podWatch, t *target, round int, grace *int64) (latency, share time.Duration, err error) {
	pods := w.pods(t.ns, "rebuild")
	if len(pods) != replicas {
		return 0, 0, fmt.Errorf("%d pods before the delete, want %d", len(pods), replicas)
	}
	victim := pods[round%len(pods)]
	before := map[types.UID]bool{}
	for _, p := range w.pods(t.ns, "") {
		before[p.UID] = true
	}
	start := time.Now()
	if err := b.cs.CoreV1().Pods(t.ns).Delete(ctx, victim.Name, metav1.DeleteOptions{GracePeriodSeconds: grace}); err != nil {
		return 0, 0, err
	}
	var added, deleted time.Time
	err = wait.PollUntilContextTimeout(ctx, 2*time.Millisecond, 2*time.Minute, true, func(context.Context) (bool, error) {
		added, deleted = w.replacement(t.ns, victim, before, t.sameName)
		return !added.IsZero() && !deleted.IsZero(), nil
	})
	if err != nil {
		return 0, 0, fmt.Errorf("no replacement for pod %s: %w", victim.Name, err)
	}
	if err := w.waitSteady(ctx, t.ns, "rebuild", replicas); err != nil {
		return 0, 0, err
	}
	return added.Sub(start), added.Sub(deleted), nil
}

// converge creates N objects per target, one target at a time, and times
// until their 3N pods exist; then it watches steady state and deletes the
// operators' namespaces, counting their requests.
func (b *bench) converge(ctx context.Context, w *podWatch, targets []*target) error {
	b.report.Converge = map[string]float64{}
	b.report.API = map[string]*apiCost{}
	before := map[*target]counters{}
	for _, t := range targets {
		progress("convergence: %d x %d pods for %s", b.cfg.objects, replicas, t.name)
		if t.op != nil {
			c, err := t.op.counters(ctx)
			if err != nil {
				return err
			}
			before[t] = c
		}
		start := time.Now()
		if err := createAll(ctx, b.cl, b.cfg.objects, func(i int) client.Object { return t.object(fmt.Sprintf("c-%d", i)) }); err != nil {
			return err
		}
		err := wait.PollUntilContextTimeout(ctx, 5*time.Millisecond, 30*time.Minute, true, func(context.Context) (bool, error) {
			return len(w.pods(t.ns, "c-")) >= b.cfg.objects*replicas, nil
		})
		if err != nil {
			return fmt.Errorf("%s: %d of %d pods after %s: %w", t.name, len(w.pods(t.ns, "c-")), b.cfg.objects*replicas, time.Since(start), err)
		}
		b.report.Converge[t.name] = time.Since(start).Seconds()
	}
	// Let the operators finish with what the pods did meanwhile: steady
	// state is when nothing has happened for a while.
	for _, t := range targets[:2] {
		if err := settle(ctx, t.op, 10*time.Second); err != nil {
			return err
		}
		after, err := t.op.counters(ctx)
		if err != nil {
			return err
		}
		d := after.requests - before[t].requests
		b.report.API[t.name] = &apiCost{RequestsPerReconcile: d / max(after.reconciles-before[t].reconciles, 1)}
	}

	progress("steady state: watching the operators' requests for %s", b.cfg.steady)
	steady := map[*target]counters{}
	for _, t := range targets[:2] {
		c, err := t.op.counters(ctx)
		if err != nil {
			return err
		}
		steady[t] = c
	}
	select {
	case <-time.After(b.cfg.steady):
	case <-ctx.Done():
		return ctx.Err()
	}
	for _, t := range targets[:2] {
		c, err := t.op.counters(ctx)
		if err != nil {
			return err
		}
		a := b.report.API[t.name]
		a.SteadyWritesPerMinute = (c.writes - steady[t].writes) / b.cfg.steady.Minutes()
		a.SteadyRequests = c.requests - steady[t].requests
	}

	for _, t := range targets[:2] {
		progress("deleting namespace %s (%d Redis) with %s's operator running", t.ns, b.cfg.objects+1, t.name)
		codes, err := t.op.byCode(ctx)
		if err != nil {
			return err
		}
		start := time.Now()
		if err := b.deleteNamespace(ctx, t.ns); err != nil {
			return err
		}
		a := b.report.API[t.name]
		a.NamespaceDeletionSecs = time.Since(start).Seconds()
		if err := settle(ctx, t.op, 3*time.Second); err != nil {
			return err
		}
		after, err := t.op.byCode(ctx)
		if err != nil {
			return err
		}
		a.NamespaceDeletion = map[string]float64{}
		for code, v := range after {
			if d := v - codes[code]; d > 0 {
				a.NamespaceDeletion[code] = d
			}
		}
	}
	// The memory measurement wants no pods but its unrelated ones.
	for _, t := range targets[2:] {
		progress("deleting namespace %s", t.ns)
		if err := b.deleteNamespace(ctx, t.ns); err != nil {
			return err
		}
	}
	return nil
}

// deleteNamespace deletes ns and waits until it is gone.
func (b *bench) deleteNamespace(ctx context.Context, ns string) error {
	if err := client.IgnoreNotFound(b.cl.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})); err != nil {
		return err
	}
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 10*time.Minute, true, func(ctx context.Context) (bool, error) {
		err := b.cl.Get(ctx, client.ObjectKey{Name: ns}, &corev1.Namespace{})
		return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
	})
	if err != nil {
		return fmt.Errorf("namespace %s was not deleted: %w", ns, err)
	}
	return nil
}

// settle waits until the operator's reconcile counter holds still for the
// given time.
func settle(ctx context.Context, o *operator, still time.Duration) error {
	last, since := -1.0, time.Now()
	return wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 10*time.Minute, true, func(ctx context.Context) (bool, error) {
		c, err := o.counters(ctx)
		if err != nil {
			return false, err
		}
		if c.reconciles != last {
			last, since = c.reconciles, time.Now()
		}
		return time.Since(since) >= still, nil
	})
}

// createAll creates n objects with 8 clients at once.
func createAll(ctx context.Context, cl client.Client, n int, object func(i int) client.Object) error {
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	next := make(chan int)
	for range 8 {
		wg.Go(func() {
			for i := range next {
				if err := cl.Create(ctx, object(i)); err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	if len(errs) > 0 {
		return fmt.Errorf("%d of %d creates failed, the first: %w", len(errs), n, errs[0])
	}
	return nil
}

// memory measures each operator alone, reconciling every namespace, idle,
// then with unrelated pods in the cluster.
func (b *bench) memory(ctx context.Context) error {
	b.report.Memory = map[string]*memory{}
	chapters := []int{b.cfg.oldChapter, b.cfg.newChapter}
	names := []string{fmt.Sprintf("chapter %d", chapters[0]), fmt.Sprintf("chapter %d", chapters[1])}
	measure := func(i int, unrelated bool) error {
		o, err := b.startOperator(ctx, chapters[i], "")
		if err != nil {
			return err
		}
		defer o.stop()
		rss, heap, err := o.memory(ctx)
		if err != nil {
			return err
		}
		m := b.report.Memory[names[i]]
		if unrelated {
			m.UnrelatedRSSMiB, m.UnrelatedHeapMiB = rss, heap
		} else {
			m.IdleRSSMiB, m.IdleHeapMiB = rss, heap
		}
		return nil
	}
	for i := range chapters {
		progress("memory: %s, idle", names[i])
		b.report.Memory[names[i]] = &memory{}
		if err := measure(i, false); err != nil {
			return err
		}
	}
	if err := b.ensureNamespace(ctx, "bench-unrelated"); err != nil {
		return err
	}
	progress("creating %d unrelated pods (pending behind a scheduling gate)", b.cfg.unrelatedPods)
	err := createAll(ctx, b.cl, b.cfg.unrelatedPods, func(i int) client.Object {
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: "bench-unrelated", Name: fmt.Sprintf("app-%d", i),
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
	for i := range chapters {
		progress("memory: %s, with %d unrelated pods", names[i], b.cfg.unrelatedPods)
		if err := measure(i, true); err != nil {
			return err
		}
	}
	return nil
}

// podWatch records when each pod was first seen and when it went, from
// one informer over every namespace.
type podWatch struct {
	mu      sync.Mutex
	added   map[types.UID]time.Time
	deleted map[types.UID]time.Time
	store   cache.Store
	cancel  context.CancelFunc
}

func startWatch(ctx context.Context, cs kubernetes.Interface) (*podWatch, error) {
	ctx, cancel := context.WithCancel(ctx)
	f := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithTweakListOptions(func(o *metav1.ListOptions) {
		o.FieldSelector = "metadata.namespace!=bench-unrelated"
	}))
	inf := f.Core().V1().Pods().Informer()
	w := &podWatch{added: map[types.UID]time.Time{}, deleted: map[types.UID]time.Time{}, store: inf.GetStore(), cancel: cancel}
	_, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			if p, ok := obj.(*corev1.Pod); ok {
				w.mark(w.added, p.UID)
			}
		},
		DeleteFunc: func(obj any) {
			if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = d.Obj
			}
			if p, ok := obj.(*corev1.Pod); ok {
				w.mark(w.deleted, p.UID)
			}
		},
	})
	if err != nil {
		cancel()
		return nil, err
	}
	f.Start(ctx.Done())
	for typ, ok := range f.WaitForCacheSync(ctx.Done()) {
		if !ok {
			cancel()
			return nil, fmt.Errorf("the watch of %v did not sync", typ)
		}
	}
	return w, nil
}

func (w *podWatch) mark(m map[types.UID]time.Time, uid types.UID) {
	now := time.Now()
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, seen := m[uid]; !seen {
		m[uid] = now
	}
}

func (w *podWatch) stop() { w.cancel() }

// pods lists the pods of ns whose names start with prefix and that are
// not being deleted, by name.
func (w *podWatch) pods(ns, prefix string) []corev1.Pod {
	var out []corev1.Pod
	for _, obj := range w.store.List() {
		p := obj.(*corev1.Pod)
		if p.Namespace == ns && strings.HasPrefix(p.Name, prefix) && p.DeletionTimestamp == nil {
			out = append(out, *p)
		}
	}
	slices.SortFunc(out, func(a, b corev1.Pod) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// replacement returns when the replacement of victim was added (a pod
// not in before: of the same name if sameName) and when victim went; zero
// while not yet.
func (w *podWatch) replacement(ns string, victim corev1.Pod, before map[types.UID]bool, sameName bool) (added, deleted time.Time) {
	w.mu.Lock()
	deleted = w.deleted[victim.UID]
	w.mu.Unlock()
	for _, obj := range w.store.List() {
		p := obj.(*corev1.Pod)
		if p.Namespace != ns || before[p.UID] || (sameName && p.Name != victim.Name) {
			continue
		}
		w.mu.Lock()
		t := w.added[p.UID]
		w.mu.Unlock()
		if !t.IsZero() && (added.IsZero() || t.Before(added)) {
			added = t
		}
	}
	return added, deleted
}

// waitSteady waits until ns has n pods named prefix*, all Running and
// Ready, and none being deleted.
func (w *podWatch) waitSteady(ctx context.Context, ns, prefix string, n int) error {
	return wait.PollUntilContextTimeout(ctx, 5*time.Millisecond, 3*time.Minute, true, func(context.Context) (bool, error) {
		all := 0
		for _, obj := range w.store.List() {
			p := obj.(*corev1.Pod)
			if p.Namespace == ns && strings.HasPrefix(p.Name, prefix) {
				all++
			}
		}
		pods := w.pods(ns, prefix)
		if all != n || len(pods) != n {
			return false, nil
		}
		for _, p := range pods {
			if p.Status.Phase != corev1.PodRunning || !ready(&p) {
				return false, nil
			}
		}
		return true, nil
	})
}

func ready(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func progress(format string, args ...any) {
	fmt.Printf("[bench %s] %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
}
