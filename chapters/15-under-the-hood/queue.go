package controller

import (
	"slices"
	"sync"

	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/tools/cache"
)

// rebuildFirst is where the workqueue keeps the keys waiting for a
// worker (client-go's workqueue.Queue, given in TypedQueueConfig.Queue):
// two lines, first the Redis objects whose pod was deleted, then the
// others, each in the order of arrival, as chapter 9's priority queue
// hands them out. A pod that is gone is a Redis short of a replica, which
// should not wait behind a thousand new Redis objects to get it back.
//
// The workqueue keeps deciding whether a key is added at all (once while
// it waits, never while a worker has it) and calls Push for a key that
// starts to wait, Touch for one added again while it waits, Len and Pop,
// all with its own lock held. The pod informer's handler urges a key
// before it adds it: the key's next Push, or Touch, puts it in the first
// line.
type rebuildFirst struct {
	mu    sync.Mutex
	urged sets.Set[cache.ObjectName]

	first, rest []cache.ObjectName
}

func newRebuildFirst() *rebuildFirst {
	return &rebuildFirst{urged: sets.New[cache.ObjectName]()}
}

// urge puts key in the first line when it is next added: right away if it
// waits, when a worker is done with it if one has it.
func (q *rebuildFirst) urge(key cache.ObjectName) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.urged.Insert(key)
}

// takeUrged reports whether key was urged, and forgets it.
func (q *rebuildFirst) takeUrged(key cache.ObjectName) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.urged.Has(key) {
		return false
	}
	q.urged.Delete(key)
	return true
}

// Push adds a key that starts to wait.
func (q *rebuildFirst) Push(key cache.ObjectName) {
	if q.takeUrged(key) {
		q.first = append(q.first, key)
		return
	}
	q.rest = append(q.rest, key)
}

// Touch is a key added again while it waits: urged, it moves to the
// first line.
func (q *rebuildFirst) Touch(key cache.ObjectName) {
	if !q.takeUrged(key) {
		return
	}
	if i := slices.Index(q.rest, key); i >= 0 {
		q.rest = slices.Delete(q.rest, i, i+1)
		q.first = append(q.first, key)
	}
}

// Len is how many keys wait.
func (q *rebuildFirst) Len() int { return len(q.first) + len(q.rest) }

// Pop takes the next key: the first line's, else the other's. The
// workqueue calls it only when a key waits.
func (q *rebuildFirst) Pop() cache.ObjectName {
	line := &q.rest
	if len(q.first) > 0 {
		line = &q.first
	}
	key := (*line)[0]
	(*line)[0] = cache.ObjectName{}
	*line = (*line)[1:]
	return key
}
