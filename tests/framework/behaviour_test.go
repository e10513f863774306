package framework

import (
	"maps"
	"slices"
	"testing"

	"example.com/redis-operator/chapters"
)

// TestBehavioursAreTheTables: every behaviour spec a chapter's row says
// it teaches is one the framework has, and the framework has no other, so
// that a suite that carries them carries each.
func TestBehavioursAreTheTables(t *testing.T) {
	var taught []string
	for _, c := range chapters.All {
		taught = append(taught, c.Behaviours...)
	}
	slices.Sort(taught)
	if have := slices.Sorted(maps.Keys(behaviours)); !slices.Equal(taught, have) {
		t.Errorf("the table's chapters teach the behaviours %q, the framework has %q", taught, have)
	}
}
