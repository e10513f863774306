package framework

import (
	"slices"
	"testing"
)

// TestDeathIn: the lines of an operator's log that show it panicked or
// died, as controller-runtime, the Go runtime and the race detector write
// them, and none of the lines of an operator at work.
func TestDeathIn(t *testing.T) {
	log := `2026-11-29T01:00:00Z	INFO	Starting workers	{"controller": "redis", "worker count": 1}
2026-11-29T01:00:01Z	ERROR	Observed a panic	{"controller": "redis", "panic": "the Redis is gone", "panicGoValue": "\"the Redis is gone\""}
2026-11-29T01:00:01Z	ERROR	Reconciler error	{"controller": "redis", "error": "panic: the Redis is gone [recovered]"}
2026-11-29T01:00:02Z	INFO	Creating pod	{"Pod": {"name":"cache-0","namespace":"ch05-abcdef"}}
fatal error: concurrent map writes
WARNING: DATA RACE
2026-11-29T01:00:03Z	ERROR	Reconciler error	{"error": "Operation cannot be fulfilled on pods \"cache-1\": the object has been modified"}
`
	got := deathIn(log, 10)
	want := []string{
		`2026-11-29T01:00:01Z	ERROR	Observed a panic	{"controller": "redis", "panic": "the Redis is gone", "panicGoValue": "\"the Redis is gone\""}`,
		`2026-11-29T01:00:01Z	ERROR	Reconciler error	{"controller": "redis", "error": "panic: the Redis is gone [recovered]"}`,
		"fatal error: concurrent map writes",
		"WARNING: DATA RACE",
	}
	if !slices.Equal(got, want) {
		t.Errorf("deathIn = %q, want %q", got, want)
	}
	if got := deathIn(log, 2); len(got) != 2 {
		t.Errorf("deathIn(log, 2) gave %d lines, want 2", len(got))
	}
	if got := deathIn("2026-11-29T01:00:00Z	INFO	Starting workers\n", 10); got != nil {
		t.Errorf("deathIn of an operator at work = %q, want none", got)
	}
}
