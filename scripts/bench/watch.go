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
// namespace, and stamps every event with the moment it arrived, before
// anything else looks at it: the latencies are those of the watch, not of
// the bench's own bookkeeping.
type podWatch struct {
	mu          sync.Mutex
	byNS        map[string]map[types.UID]*corev1.Pod // pods by namespace
	added       map[types.UID]time.Time              // ADDED event (pods seen in the initial list have none)
	terminating map[types.UID]time.Time              // first event with a deletionTimestamp
	deleted     map[types.UID]time.Time              // DELETED event
	changed     chan struct{}                        // closed and replaced on every event
	failed      error                                // a watch that ended for good
	cancel      context.CancelFunc
	done        sync.WaitGroup
}

func startWatch(ctx context.Context, cs kubernetes.Interface, namespaces []string) (*podWatch, error) {
	ctx, cancel := context.WithCancel(ctx)
	w := &podWatch{
		byNS:        map[string]map[types.UID]*corev1.Pod{},
		added:       map[types.UID]time.Time{},
		terminating: map[types.UID]time.Time{},
		deleted:     map[types.UID]time.Time{},
		changed:     make(chan struct{}),
		cancel:      cancel,
	}
	for _, ns := range namespaces {
		list, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			cancel()
			return nil, fmt.Errorf("listing the pods of %s: %w", ns, err)
		}
		w.byNS[ns] = map[types.UID]*corev1.Pod{}
		for i := range list.Items {
			w.byNS[ns][list.Items[i].UID] = &list.Items[i]
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
				case <-rw.Done():
					w.fail(fmt.Errorf("the watch of the pods of %s ended", ns))
					return
				case ev := <-rw.ResultChan():
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
	if w.failed == nil && err != nil {
		w.failed = err
		close(w.changed)
		w.changed = make(chan struct{})
	}
}

// record applies one watch event that arrived at now.
func (w *podWatch) record(ns string, ev watch.Event, now time.Time) {
	if ev.Type == watch.Error {
		w.fail(fmt.Errorf("the watch of the pods of %s: %v", ns, ev.Object))
		return
	}
	p, ok := ev.Object.(*corev1.Pod)
	if !ok {
		return // a bookmark
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
	if ev.Type == watch.Deleted {
		delete(w.byNS[ns], p.UID)
	} else {
		w.byNS[ns][p.UID] = p
	}
	close(w.changed)
	w.changed = make(chan struct{})
}

func stampOnce(m map[types.UID]time.Time, uid types.UID, t time.Time) {
	if _, seen := m[uid]; !seen {
		m[uid] = t
	}
}

// waitFor evaluates cond after every event (under the watch's lock, so
// cond reads a consistent state) until it holds, timeout passes or a
// watch fails.
func (w *podWatch) waitFor(ctx context.Context, timeout time.Duration, cond func() bool) error {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		w.mu.Lock()
		ok, failed, changed := cond(), w.failed, w.changed
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

// podsLocked returns the pods of ns whose names start with prefix, by
// name; terminating ones too when withTerminating. Callers hold w.mu.
func (w *podWatch) podsLocked(ns, prefix string, withTerminating bool) []*corev1.Pod {
	var out []*corev1.Pod
	for _, p := range w.byNS[ns] {
		if strings.HasPrefix(p.Name, prefix) && (withTerminating || p.DeletionTimestamp == nil) {
			out = append(out, p)
		}
	}
	slices.SortFunc(out, func(a, b *corev1.Pod) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// pods returns the pods of ns named prefix* that are not being deleted.
func (w *podWatch) pods(ns, prefix string) []*corev1.Pod {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.podsLocked(ns, prefix, false)
}

// countLocked counts the pods of ns named prefix*: all of them, and those
// Running and Ready. Callers hold w.mu.
func (w *podWatch) countLocked(ns, prefix string) (all, running int) {
	for _, p := range w.byNS[ns] {
		if !strings.HasPrefix(p.Name, prefix) {
			continue
		}
		all++
		if p.DeletionTimestamp == nil && p.Status.Phase == corev1.PodRunning && ready(p) {
			running++
		}
	}
	return all, running
}

// waitRunning waits until ns has exactly n pods named prefix*, all Running
// and Ready and none being deleted.
func (w *podWatch) waitRunning(ctx context.Context, ns, prefix string, n int, timeout time.Duration) error {
	err := w.waitFor(ctx, timeout, func() bool {
		all, running := w.countLocked(ns, prefix)
		return all == n && running == n
	})
	if err != nil {
		w.mu.Lock()
		all, running := w.countLocked(ns, prefix)
		w.mu.Unlock()
		return fmt.Errorf("%s/%s*: %d pods, %d of them running, want %d running: %w", ns, prefix, all, running, n, err)
	}
	return nil
}

// waitGone waits until ns has no pods named prefix*.
func (w *podWatch) waitGone(ctx context.Context, ns, prefix string, timeout time.Duration) error {
	return w.waitFor(ctx, timeout, func() bool {
		all, _ := w.countLocked(ns, prefix)
		return all == 0
	})
}

// rebuilt is what the watch saw of one pod's replacement.
type rebuilt struct {
	added       time.Time // the replacement's ADDED event
	terminating time.Time // the victim's first event with a deletionTimestamp
	deleted     time.Time // the victim's DELETED event
}

// waitReplacement waits for the replacement of victim: a pod of ns that
// was not there before (of the victim's name when sameName) and, when
// sameName, for the victim's DELETED event too.
func (w *podWatch) waitReplacement(ctx context.Context, ns string, victim *corev1.Pod, before map[types.UID]bool, sameName bool, timeout time.Duration) (rebuilt, error) {
	var r rebuilt
	err := w.waitFor(ctx, timeout, func() bool {
		r = rebuilt{terminating: w.terminating[victim.UID], deleted: w.deleted[victim.UID]}
		for uid, p := range w.byNS[ns] {
			if before[uid] || (sameName && p.Name != victim.Name) {
				continue
			}
			if t := w.added[uid]; !t.IsZero() && (r.added.IsZero() || t.Before(r.added)) {
				r.added = t
			}
		}
		return !r.added.IsZero() && (!sameName || !r.deleted.IsZero())
	})
	if err != nil {
		return r, fmt.Errorf("no replacement for pod %s: %w", victim.Name, err)
	}
	return r, nil
}

// uids returns the UIDs of every pod of ns the watch holds.
func (w *podWatch) uids(ns string) map[types.UID]bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := map[types.UID]bool{}
	for uid := range w.byNS[ns] {
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
