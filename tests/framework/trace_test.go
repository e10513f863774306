package framework

import (
	"fmt"
	"strings"
	"testing"
)

// traceLine is a trace line as bin/operator --trace-pods writes it, at
// second s after midnight, of the pod's version rv.
func traceLine(s int, stage, event, uid, rv string) string {
	kv := fmt.Sprintf(`{"stage": %q, "namespace": "ns", "name": "cache-1", "uid": %q, "resourceVersion": %q`, stage, uid, rv)
	if event != "" {
		kv += fmt.Sprintf(`, "event": %q`, event)
	}
	return fmt.Sprintf("2026-11-28T00:00:%02d.000001Z\tINFO\ttrace\tTrace\t%s}", s, kv)
}

func reconcilingLine(s int, id string) string {
	return fmt.Sprintf("2026-11-28T00:00:%02dZ\tLEVEL(-5)\tReconciling\t"+
		`{"controller": "redis", "namespace": "ns", "name": "cache", "reconcileID": %q}`, s, id)
}

func createLine(s int, id string) string {
	return fmt.Sprintf("2026-11-28T00:00:%02dZ\tINFO\tTrace\t"+
		`{"controller": "redis", "namespace": "ns", "name": "cache", "reconcileID": %q, "stage": "create", "namespace": "ns"}`, s, id)
}

// deletion is the log of one pod deleted and created again: an update
// (version 10) still on its way through the informer after the watch
// delivered DELETED (version 11), a reconcile that creates nothing (a),
// the one that creates the pod (b).
func deletion() []string {
	return []string{
		traceLine(1, "watch", "MODIFIED", "old", "10"),
		traceLine(2, "watch", "DELETED", "old", "11"),
		traceLine(3, "queued", "", "old", "10"), // the update, queued late
		traceLine(4, "queued", "", "old", "11"),
		traceLine(5, "indexed", "", "old", "10"), // the update
		traceLine(6, "indexed", "", "old", "10"), // the removal: the stored pod
		traceLine(7, "handler", "delete", "old", "11"),
		reconcilingLine(8, "a"),
		reconcilingLine(9, "b"),
		createLine(10, "b"),
		traceLine(11, "watch", "ADDED", "new", "12"),
	}
}

func TestFollowPodDeletion(t *testing.T) {
	stages, err := followPodDeletion(strings.Join(deletion(), "\n"), "ns", "cache-1", "cache", "old", "new")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range stages {
		got = append(got, fmt.Sprintf("%s@%d", s.Name, s.At.Second()))
	}
	want := "watch@2 queued@4 indexed@6 handler@7 worker@9 create@10 new pod@11"
	if strings.Join(got, " ") != want {
		t.Errorf("stages = %q, want %q", strings.Join(got, " "), want)
	}
	if out := formatStages(stages); !strings.Contains(out, "+9000.000 ms  new pod") {
		t.Errorf("formatStages does not give the new pod 9 s after the watch:\n%s", out)
	}
}

func TestFollowPodDeletionMissingOrOutOfOrder(t *testing.T) {
	lines := deletion()
	for _, tc := range []struct {
		name string
		log  []string
		want string
	}{
		{"the deletion not queued, only the update", append(append([]string{}, lines[:3]...), lines[4:]...), "stage queued"},
		{"no handler call", append(append([]string{}, lines[:6]...), lines[7:]...), "stage handler"},
		{"the create before its reconcile", append(append(append([]string{}, lines[:7]...), createLine(8, "b"), reconcilingLine(9, "b")), lines[10]), "stage worker"},
		{"the new pod not seen", lines[:10], "stage new pod"},
		{"another pod's deletion", strings.Split(strings.ReplaceAll(strings.Join(lines, "\n"), `"old"`, `"other"`), "\n"), "stage watch"},
	} {
		if _, err := followPodDeletion(strings.Join(tc.log, "\n"), "ns", "cache-1", "cache", "old", "new"); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want one about the %s", tc.name, err, tc.want)
		}
	}
}
