package framework

import (
	"fmt"
	"strings"
	"testing"
)

// logLine is a line as bin/operator writes it at --zap-log-level=5 (the
// console encoder: time, level, message, key/values).
func logLine(msg, ns, name, id string) string {
	return fmt.Sprintf("2026-11-24T00:01:15Z\tLEVEL(-5)\t%s\t"+
		`{"controller": "redis", "controllerGroup": "myapp.example.com", "controllerKind": "Redis", "Redis": {"name":%q,"namespace":%q}, "namespace": %q, "name": %q, "reconcileID": %q}`,
		msg, name, ns, ns, name, id)
}

func TestReconcileCalls(t *testing.T) {
	log := strings.Join([]string{
		logLine("Reconcile successful", "ns", "before", "0"), // started before the log
		logLine("Reconciling", "ns", "cache", "1"),
		"2026-11-24T00:01:15Z\tINFO\tCreating pod\t" + `{"controller": "redis", "namespace": "ns", "name": "cache", "reconcileID": "1", "Pod": {"name":"cache-0","namespace":"ns"}}`,
		logLine("Reconcile successful", "ns", "cache", "1"),
		logLine("Reconciling", "other", "cache", "2"),
		"2026-11-24T00:01:16Z\tERROR\tReconciler error\t" + `{"controller": "redis", "namespace": "other", "name": "cache", "reconcileID": "2", "error": "boom"}`,
		"sigs.k8s.io/controller-runtime/pkg/internal/controller.(*Controller[...]).reconcileHandler",
		"\t/root/go/pkg/mod/sigs.k8s.io/controller-runtime@v0.25.2/pkg/internal/controller/controller.go:497",
		strings.Replace(logLine("Reconciling", "ns", "web", "3"), `"controller": "redis"`, `"controller": "other"`, 1),
		logLine("Reconciling", "ns", "cache", "4"),
		logLine("Reconciling", "ns", "cache", "5"),
		logLine("Reconcile done, requeueing", "ns", "cache", "5"),
		logLine("Reconciling", "ns", "cache", "6"),
		logLine("Reconcile done, requeueing after 1s", "ns", "cache", "6"),
		"not a log line",
	}, "\n")

	got := reconcileCalls(log)
	want := []ReconcileCall{
		{ID: "1", Namespace: "ns", Name: "cache", Done: true},
		{ID: "2", Namespace: "other", Name: "cache", Done: true, Failed: true},
		{ID: "4", Namespace: "ns", Name: "cache", Done: false},
		{ID: "5", Namespace: "ns", Name: "cache", Done: true, Requeued: true},
		{ID: "6", Namespace: "ns", Name: "cache", Done: true, Requeued: true},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("reconcileCalls =\n%v\nwant\n%v", got, want)
	}
}

func TestReconcileOverlap(t *testing.T) {
	lines := func(events ...string) string {
		var out []string
		for _, ev := range events {
			// "+a1" is the start of reconcile 1 of Redis a, "-1" its end.
			if ev[0] == '+' {
				out = append(out, logLine("Reconciling", "ns", ev[1:2], ev[2:]))
			} else {
				out = append(out, logLine("Reconcile done, requeueing after 1s", "ns", "?", ev[1:]))
			}
		}
		return strings.Join(out, "\n")
	}
	tests := []struct {
		name string
		log  string
		want Overlap
	}{
		{"one after the other", lines("+a1", "-1", "+b2", "-2", "+a3", "-3"), Overlap{MaxObjects: 1}},
		{"two at once", lines("+a1", "+b2", "-1", "-2"), Overlap{MaxObjects: 2}},
		{"three at once, then one", lines("+a1", "+b2", "+c3", "-2", "-1", "-3", "+d4"), Overlap{MaxObjects: 3}},
		{"an end whose start came before the log", lines("-0", "+a1", "-1"), Overlap{MaxObjects: 1}},
		{"one Redis twice at once", lines("+a1", "+a2", "-1", "-2"), Overlap{MaxObjects: 2, SameObject: "ns/a"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := reconcileOverlap(tt.log); got != tt.want {
				t.Errorf("reconcileOverlap = %+v, want %+v", got, tt.want)
			}
		})
	}
}
