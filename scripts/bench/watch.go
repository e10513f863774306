package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
)

// podWatch follows the pods of the bench's namespaces, one watch per
// namespace, and stamps every event with the moment it arrived. Pods are
// kept by namespace and by group, the part of their name before the first
// dash (the object's name: "rebuild", "c", "a"), and an event wakes only
// the waiters of its namespace, so that the thousands of pods converging
// in one namespace do not hold up the events of another.
type podWatch struct {
	mu          sync.Mutex
	ns          map[string]*nsPods
	added       map[types.UID]time.Time // ADDED event (pods seen in the initial list have none)
	terminating map[types.UID]time.Time // first event with a deletionTimestamp
	deleted     map[types.UID]time.Time // DELETED event
	failed      error                   // a watch that ended for good
	cancel      context.CancelFunc
	done        sync.WaitGroup
}

// nsPods is what the watch holds of one namespace.
type nsPods struct {
	groups  map[string]map[types.UID]*corev1.Pod
	changed chan struct{} // closed and replaced on every event
}

// group is the part of a pod's name before the first dash.
func group(name string) string {
	g, _, _ := strings.Cut(name, "-")
	return g
}

func startWatch(ctx context.Context, cs kubernetes.Interface, namespaces []string) (*podWatch, error) {
	ctx, cancel := context.WithCancel(ctx)
	w := &podWatch{
		ns:          map[string]*nsPods{},
		added:       map[types.UID]time.Time{},
		terminating: map[types.UID]time.Time{},
		deleted:     map[types.UID]time.Time{},
		cancel:      cancel,
	}
	for _, ns := range namespaces {
		list, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			cancel()
			return nil, fmt.Errorf("listing the pods of %s: %w", ns, err)
		}
		n := &nsPods{groups: map[string]map[types.UID]*corev1.Pod{}, changed: make(chan struct{})}
		w.ns[ns] = n
		for i := range list.Items {
			n.put(&list.Items[i])
		}
		rw, err := watchtools.NewRetryWatcherWithContext(ctx, list.ResourceVersion, &cache.ListWatch{
			WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
				return cs.CoreV1().Pods(ns).Watch(ctx, o)
			},
		})
		if err != nil {
			cancel()
			return nil, err
		}
		w.done.Go(func() {
			defer rw.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case ev, ok := <-rw.ResultChan():
					if !ok {
						if ctx.Err() == nil {
							w.fail(fmt.Errorf("the watch of the pods of %s ended", ns))
						}
						return
					}
					w.record(ns, ev, time.Now())
				}
			}
		})
	}
	return w, nil
}

func (w *podWatch) stop() {
	w.cancel()
	w.done.Wait()
}

func (w *podWatch) fail(err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.failed == nil {
		w.failed = err
		for _, n := range w.ns {
			n.notify()
		}
	}
}

func (n *nsPods) notify() {
	close(n.changed)
	n.changed = make(chan struct{})
}

func (n *nsPods) put(p *corev1.Pod) {
	g := group(p.Name)
	if n.groups[g] == nil {
		n.groups[g] = map[types.UID]*corev1.Pod{}
	}
	n.groups[g][p.UID] = p
}

// record applies one watch event that arrived at now.
func (w *podWatch) record(ns string, ev watch.Event, now time.Time) {
	if ev.Type == watch.Error {
		w.fail(fmt.Errorf("the watch of the pods of %s: %v", ns, ev.Object))
		return
	}
	p, ok := ev.Object.(*corev1.Pod)
	if !ok {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	switch ev.Type {
	case watch.Added:
		stampOnce(w.added, p.UID, now)
	case watch.Deleted:
		stampOnce(w.deleted, p.UID, now)
	}
	if p.DeletionTimestamp != nil || ev.Type == watch.Deleted {
		stampOnce(w.terminating, p.UID, now)
	}
	n := w.ns[ns]
	if ev.Type == watch.Deleted {
		delete(n.groups[group(p.Name)], p.UID)
	} else {
		n.put(p)
	}
	n.notify()
}

func stampOnce(m map[types.UID]time.Time, uid types.UID, t time.Time) {
	if _, seen := m[uid]; !seen {
		m[uid] = t
	}
}

// waitFor evaluates cond after every event of ns (under the watch's lock,
// so cond reads a consistent state) until it holds, timeout passes or a
// watch fails.
func (w *podWatch) waitFor(ctx context.Context, ns string, timeout time.Duration, cond func() bool) error {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		w.mu.Lock()
		ok, failed, changed := cond(), w.failed, w.ns[ns].changed
		w.mu.Unlock()
		switch {
		case ok:
			return nil
		case failed != nil:
			return failed
		}
		select {
		case <-changed:
		case <-deadline.C:
			return fmt.Errorf("not within %s", timeout)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// podsLocked returns the pods of group g in ns, by name; terminating ones
// too when withTerminating. Callers hold w.mu.
func (w *podWatch) podsLocked(ns, g string, withTerminating bool) []*corev1.Pod {
	var out []*corev1.Pod
	for _, p := range w.ns[ns].groups[g] {
		if withTerminating || p.DeletionTimestamp == nil {
			out = append(out, p)
		}
	}
	slices.SortFunc(out, func(a, b *corev1.Pod) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// pods returns the pods of group g in ns, terminating ones too when
// withTerminating.
func (w *podWatch) pods(ns, g string, withTerminating bool) []*corev1.Pod {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.podsLocked(ns, g, withTerminating)
}

// countLocked counts the pods of group g in ns: all of them, and those
// Running and Ready and not being deleted. Callers hold w.mu.
func (w *podWatch) countLocked(ns, g string) (all, running int) {
	for _, p := range w.ns[ns].groups[g] {
		all++
		if p.DeletionTimestamp == nil && p.Status.Phase == corev1.PodRunning && ready(p) {
			running++
		}
	}
	return all, running
}

// waitExist waits until ns has at least n pods of group g.
func (w *podWatch) waitExist(ctx context.Context, ns, g string, n int, timeout time.Duration) error {
	return w.waitCount(ctx, ns, g, n, timeout, func(all, _ int) bool { return all >= n }, "existing")
}

// waitRunning waits until ns has exactly n pods of group g, all Running
// and Ready and none being deleted.
func (w *podWatch) waitRunning(ctx context.Context, ns, g string, n int, timeout time.Duration) error {
	return w.waitCount(ctx, ns, g, n, timeout, func(all, running int) bool { return all == n && running == n }, "running")
}

// waitGone waits until ns has no pods of group g.
func (w *podWatch) waitGone(ctx context.Context, ns, g string, timeout time.Duration) error {
	return w.waitCount(ctx, ns, g, 0, timeout, func(all, _ int) bool { return all == 0 }, "left")
}

func (w *podWatch) waitCount(ctx context.Context, ns, g string, n int, timeout time.Duration, done func(all, running int) bool, want string) error {
	err := w.waitFor(ctx, ns, timeout, func() bool { return done(w.countLocked(ns, g)) })
	if err != nil {
		w.mu.Lock()
		all, running := w.countLocked(ns, g)
		w.mu.Unlock()
		return fmt.Errorf("%s/%s-*: %d pods, %d of them running; want %d %s: %w", ns, g, all, running, n, want, err)
	}
	return nil
}

// rebuilt is what the watch saw of one pod's replacement.
type rebuilt struct {
	added       time.Time // the replacement's ADDED event
	terminating time.Time // the victim's first event with a deletionTimestamp
	deleted     time.Time // the victim's DELETED event
}

// waitReplacement waits for the replacement of victim, deleted at start:
// a pod of the victim's group that was not there before and was added
// after start (of the victim's name when sameName), and for the victim's
// DELETED event when sameName, or the start of its deletion when not.
func (w *podWatch) waitReplacement(ctx context.Context, ns string, victim *corev1.Pod, before map[types.UID]bool, start time.Time, sameName bool, timeout time.Duration) (rebuilt, error) {
	var r rebuilt
	err := w.waitFor(ctx, ns, timeout, func() bool {
		r = rebuilt{terminating: w.terminating[victim.UID], deleted: w.deleted[victim.UID]}
		for uid, p := range w.ns[ns].groups[group(victim.Name)] {
			if before[uid] || (sameName && p.Name != victim.Name) {
				continue
			}
			if t := w.added[uid]; t.After(start) && (r.added.IsZero() || t.Before(r.added)) {
				r.added = t
			}
		}
		if sameName {
			return !r.added.IsZero() && !r.deleted.IsZero()
		}
		return !r.added.IsZero() && !r.terminating.IsZero()
	})
	if err != nil {
		return r, fmt.Errorf("no replacement for pod %s: %w", victim.Name, err)
	}
	return r, nil
}

// uids returns the UIDs of the pods of group g in ns.
func (w *podWatch) uids(ns, g string) map[types.UID]bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := map[types.UID]bool{}
	for uid := range w.ns[ns].groups[g] {
		out[uid] = true
	}
	return out
}

func ready(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
