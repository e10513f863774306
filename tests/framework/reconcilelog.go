package framework

import (
	"encoding/json"
	"strings"
)

// The suites start the operator with --zap-log-level=5, at which
// controller-runtime logs every call of Reconcile twice: "Reconciling"
// before it, and "Reconcile successful", "Reconcile done, requeueing…" or
// "Reconciler error" after it, each line with the request's namespace and
// name and a reconcileID that ties the two together. That is how a spec
// sees, from outside the process, which Redis was reconciled and which
// reconciles overlapped: the metrics only count them.

// verbosityArgs are the flags the suites add to bin/operator.
var verbosityArgs = []string{"--zap-log-level=5"}

// ReconcileCall is one call of the redis controller's Reconcile, as the
// operator logged it.
type ReconcileCall struct {
	ID, Namespace, Name string
	// Done is false while the call has not returned (yet).
	Done bool
	// Failed is true when the call returned an error ("Reconciler
	// error").
	Failed bool
	// Requeued is true when the call returned a result that asks for
	// another reconcile ("Reconcile done, requeueing…"): Requeue or
	// RequeueAfter.
	Requeued bool
}

// reconcileEvent is one log line of a reconcile: its start or its end.
type reconcileEvent struct {
	call  ReconcileCall
	start bool
}

// splitLogLine splits a line as the console encoder writes it: a time,
// a level, maybe a logger's name, a message, then the key/values as one
// JSON object. ok is false for any other line (a stack trace, say).
func splitLogLine(line string) (at, msg, kvJSON string, ok bool) {
	fields := strings.Split(line, "\t")
	if len(fields) < 3 || !strings.HasPrefix(fields[len(fields)-1], "{") {
		return "", "", "", false
	}
	return fields[0], fields[len(fields)-2], fields[len(fields)-1], true
}

// parseReconcileLog reads the start and end lines of the redis
// controller's reconciles from an operator log, in the order they were
// written. Other lines (the chapters' own messages, stack traces, other
// controllers) are skipped.
func parseReconcileLog(log string) []reconcileEvent {
	var events []reconcileEvent
	for _, line := range strings.Split(log, "\n") {
		_, msg, kvJSON, ok := splitLogLine(line)
		if !ok {
			continue
		}
		start := msg == "Reconciling"
		if !start && msg != "Reconcile successful" && msg != "Reconciler error" && !strings.HasPrefix(msg, "Reconcile done") {
			continue
		}
		var kv struct {
			Controller  string `json:"controller"`
			Namespace   string `json:"namespace"`
			Name        string `json:"name"`
			ReconcileID string `json:"reconcileID"`
		}
		if err := json.Unmarshal([]byte(kvJSON), &kv); err != nil || kv.Controller != "redis" || kv.ReconcileID == "" {
			continue
		}
		events = append(events, reconcileEvent{
			call: ReconcileCall{ID: kv.ReconcileID, Namespace: kv.Namespace, Name: kv.Name, Done: !start,
				Failed: msg == "Reconciler error", Requeued: strings.HasPrefix(msg, "Reconcile done")},
			start: start,
		})
	}
	return events
}

// reconcileCalls lists the reconciles that started in log, in the order
// they started; Done says whether each has returned.
func reconcileCalls(log string) []ReconcileCall {
	var calls []ReconcileCall
	index := map[string]int{}
	for _, ev := range parseReconcileLog(log) {
		if ev.start {
			index[ev.call.ID] = len(calls)
			calls = append(calls, ev.call)
		} else if i, ok := index[ev.call.ID]; ok {
			calls[i].Done, calls[i].Failed, calls[i].Requeued = true, ev.call.Failed, ev.call.Requeued
		}
	}
	return calls
}

// Overlap is what a log shows of reconciles that ran at the same time.
type Overlap struct {
	// MaxObjects is the most reconciles of different Redis objects that had
	// started and not yet returned at one point of the log.
	MaxObjects int
	// SameObject names a Redis that was reconciled twice at once, which
	// controller-runtime's workqueue never allows; empty if none was.
	SameObject string
}

// reconcileOverlap walks the start and end lines of log in order. A
// reconcile that started before the log begins is not seen, so one whose
// end comes first is ignored.
func reconcileOverlap(log string) Overlap {
	var o Overlap
	running := map[string]string{} // reconcileID -> namespace/name
	for _, ev := range parseReconcileLog(log) {
		key := ev.call.Namespace + "/" + ev.call.Name
		if !ev.start {
			delete(running, ev.call.ID)
			continue
		}
		for _, other := range running {
			if other == key {
				o.SameObject = key
			}
		}
		running[ev.call.ID] = key
		o.MaxObjects = max(o.MaxObjects, len(running))
	}
	return o
}
