package framework

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/types"

	"example.com/redis-operator/operator/trace"
)

// TraceArgs are the operator's flags in a suite that runs TraceSpec
// (TraceSpec adds them): the trace lines of operator/trace, and log
// times to the nanosecond, since a pod event crosses the informer in
// microseconds.
var TraceArgs = []string{"--trace-pods", "--zap-time-encoding=rfc3339nano"}

// TraceStage is one stage of a pod's deletion on its way through the
// operator, as its log shows it.
type TraceStage struct {
	// Name is the stage's, e.g. "indexer".
	Name string
	// What says what happened there.
	What string
	// At is when the operator logged it.
	At time.Time
}

// operatorLine is one line of the operator's log (splitLogLine), its
// key/values decoded.
type operatorLine struct {
	at  time.Time
	msg string
	kv  map[string]any
}

func parseLogLines(log string) []operatorLine {
	var lines []operatorLine
	for _, text := range strings.Split(log, "\n") {
		stamp, msg, kvJSON, ok := splitLogLine(text)
		if !ok {
			continue
		}
		l := operatorLine{msg: msg}
		if json.Unmarshal([]byte(kvJSON), &l.kv) != nil {
			continue
		}
		for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.000Z0700"} {
			if at, err := time.Parse(layout, stamp); err == nil {
				l.at = at
				break
			}
		}
		lines = append(lines, l)
	}
	return lines
}

func (l operatorLine) str(key string) string {
	s, _ := l.kv[key].(string)
	return s
}

// isTrace says whether l is a trace line of stage for the given pod
// (empty values match any).
func (l operatorLine) isTrace(stage, event, ns, name string, uid types.UID) bool {
	return l.msg == trace.Message && l.str("stage") == stage &&
		(event == "" || l.str("event") == event) && (ns == "" || l.str("namespace") == ns) &&
		(name == "" || l.str("name") == name) && (uid == "" || l.str("uid") == string(uid))
}

// followPodDeletion reads from an operator's log the way of one deleted
// pod (ns/pod, the old UID), whose Redis is redis, until its new pod
// (newUID) was seen: the watch event, the informer's FIFO, the indexer, the
// handler, the reconcile that created the pod again, its create, and the
// new pod's watch event. It returns the stages in that order, or an error
// that says which stage is missing where it must be.
func followPodDeletion(log, ns, pod, redis string, oldUID, newUID types.UID) ([]TraceStage, error) {
	lines := parseLogLines(log)
	var stages []TraceStage
	from := 0
	// find returns the index of the first line from `from` on for which
	// match holds, or the last one when last is set.
	find := func(last bool, match func(operatorLine) bool) int {
		found := -1
		for i := from; i < len(lines); i++ {
			if match(lines[i]) {
				found = i
				if !last {
					break
				}
			}
		}
		return found
	}
	step := func(name, what string, last bool, match func(operatorLine) bool) error {
		i := find(last, match)
		if i < 0 {
			after := "in the log"
			if len(stages) > 0 {
				after = "after the stage " + stages[len(stages)-1].Name
			}
			return fmt.Errorf("no line of the stage %s (%s) %s", name, what, after)
		}
		stages = append(stages, TraceStage{Name: name, What: what, At: lines[i].at})
		from = i + 1
		return nil
	}
	var createdBy, deletedVersion string
	steps := []struct {
		name, what string
		last       bool
		match      func(operatorLine) bool
	}{
		{"watch", "the reflector's watch delivers DELETED", false,
			func(l operatorLine) bool {
				if !l.isTrace(trace.StageWatch, "DELETED", ns, pod, oldUID) {
					return false
				}
				deletedVersion = l.str("resourceVersion")
				return true
			}},
		// An update of the pod (its deletion begun, its status) can still
		// be on its way through the informer after the watch delivered
		// DELETED: the FIFO's line of the deletion is the one with the
		// DELETED event's resourceVersion.
		{"queued", "the reflector queues the deletion in the informer's FIFO", false,
			func(l operatorLine) bool {
				return l.isTrace(trace.StageQueued, "", ns, pod, oldUID) && l.str("resourceVersion") == deletedVersion
			}},
		// The indexer sees the pod for each of its updates too; its last
		// sight of the old pod is its removal.
		{"indexed", "the informer pops it and removes the pod from its indexer", true,
			func(l operatorLine) bool { return l.isTrace(trace.StageIndexed, "", ns, pod, oldUID) }},
		{"handler", "the informer calls the delete handler, which enqueues the Redis", false,
			func(l operatorLine) bool { return l.isTrace(trace.StageHandler, "delete", ns, pod, oldUID) }},
		{"worker", "a worker takes the Redis off the queue and reconciles it", false,
			func(l operatorLine) bool {
				if l.msg != "Reconciling" || l.str("controller") != "redis" || l.str("namespace") != ns || l.str("name") != redis {
					return false
				}
				// The reconcile that sends the create, not one that
				// finds nothing to do.
				id := l.str("reconcileID")
				for _, later := range lines {
					if later.isTrace(trace.StageCreate, "", ns, "", "") && later.str("reconcileID") == id {
						createdBy = id
						return true
					}
				}
				return false
			}},
		{"create", "the reconcile sends the create of the pod", false,
			func(l operatorLine) bool {
				return l.isTrace(trace.StageCreate, "", ns, "", "") && l.str("reconcileID") == createdBy
			}},
		{"new pod", "the watch delivers the new pod, ADDED", false,
			func(l operatorLine) bool { return l.isTrace(trace.StageWatch, "ADDED", ns, pod, newUID) }},
	}
	for _, s := range steps {
		if err := step(s.name, s.what, s.last, s.match); err != nil {
			return stages, err
		}
	}
	return stages, nil
}

// formatStages writes the stages one a line, each with its time since the
// first.
func formatStages(stages []TraceStage) string {
	var b strings.Builder
	for _, s := range stages {
		fmt.Fprintf(&b, "%+10.3f ms  %-10s %s\n", float64(s.At.Sub(stages[0].At).Microseconds())/1000, s.Name, s.What)
	}
	return b.String()
}

// TraceSpec follows one `kubectl delete pod` through the operator's
// layers, from the reflector's watch to the new pod's watch event, and
// prints the stages with their times. It has the suite run its operator
// with TraceArgs. It is no lesson: every chapter that rebuilds pods passes it,
// controller-runtime's through the cache's informer hook and chapter 15's
// client-go controller through the same hook, so that their prints can
// be set side by side.
func TraceSpec(in SpecInput) bool {
	checkEnv("TraceSpec", in.Env)
	in.Env.operatorArgs = append(in.Env.operatorArgs, TraceArgs...)
	return Describe("One pod deleted with kubectl, followed through the operator", Serial, func() {
		e := in.Env
		It("goes from the watch through the informer's FIFO, the indexer, the handler, the workqueue and a worker to a create, in that order", func(ctx SpecContext) {
			ns := newCache(ctx, e, false)
			e.WaitForIdle(ctx, ns, "cache")
			old, err := e.Pod(ctx, ns, "cache-1")
			Expect(err).NotTo(HaveOccurred())
			offset := e.Operator.LogOffset()

			By("deleting pod cache-1 with kubectl")
			e.MustKubectl(ctx, "delete", "pod", "cache-1", "-n", ns)
			e.ExpectRebuilt(ctx, ns, "cache-1", old.UID)
			rebuilt, err := e.Pod(ctx, ns, "cache-1")
			Expect(err).NotTo(HaveOccurred())

			By("reading its way through the operator from the operator's log")
			var stages []TraceStage
			DecidingCheck("the operator's log shows every stage of the deletion, in order", func() {
				Eventually(func() error {
					var err error
					stages, err = followPodDeletion(e.Operator.LogSince(offset), ns, "cache-1", "cache", old.UID, rebuilt.UID)
					return err
				}).WithContext(ctx).Should(Succeed(), "the operator's log does not show every stage of the deletion, in order; is it running with %v?", TraceArgs)
			})
			AddReportEntry(fmt.Sprintf("chapter %d: one kubectl delete pod, stage by stage", e.Operator.Chapter), formatStages(stages))
		})
	})
}
