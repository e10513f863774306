package framework

import (
	"fmt"
	"strings"
	"testing"
)

// traceLine is a trace line as bin/operator --trace-pods writes it, at
// second s after midnight.
func traceLine(s int, stage, event, uid string) string {
	kv := fmt.Sprintf(`{"stage": %q, "namespace": "ns", "name": "cache-1", "uid": %q`, stage, uid)
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
// before the deletion, a reconcile that creates nothing (a), the one that
// creates the pod (b).
func deletion() []string {
	return []string{
		traceLine(1, "watch", "MODIFIED", "old"),
		traceLine(2, "watch", "DELETED", "old"),
		traceLine(3, "queued", "", "old"),
		traceLine(4, "indexed", "", "old"), // the update, popped late
		traceLine(5, "indexed", "", "old"), // the removal
		traceLine(6, "handler", "delete", "old"),
		reconcilingLine(7, "a"),
		reconcilingLine(8, "b"),
		createLine(9, "b"),
		traceLine(10, "watch", "ADDED", "new"),
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
	want := "watch@2 queued@3 indexed@5 handler@6 worker@8 create@9 new pod@10"
	if strings.Join(got, " ") != want {
		t.Errorf("stages = %q, want %q", strings.Join(got, " "), want)
	}
	if out := formatStages(stages); !strings.Contains(out, "+8000.000 ms  new pod") {
		t.Errorf("formatStages does not give the new pod 8 s after the watch:\n%s", out)
	}
}

func TestFollowPodDeletionMissingOrOutOfOrder(t *testing.T) {
	lines := deletion()
	for _, tc := range []struct {
		name string
		log  []string
		want string
	}{
		{"no handler call", append(append([]string{}, lines[:5]...), lines[6:]...), "stage handler"},
		{"the create before its reconcile", append(append(append([]string{}, lines[:6]...), createLine(7, "b"), reconcilingLine(8, "b")), lines[9]), "stage worker"},
		{"the new pod not seen", lines[:9], "stage new pod"},
		{"another pod's deletion", strings.Split(strings.ReplaceAll(strings.Join(lines, "\n"), `"old"`, `"other"`), "\n"), "stage watch"},
	} {
		if _, err := followPodDeletion(strings.Join(tc.log, "\n"), "ns", "cache-1", "cache", "old", "new"); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want one about the %s", tc.name, err, tc.want)
		}
	}
}
