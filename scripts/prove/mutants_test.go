package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/onsi/ginkgo/v2/types"

	"example.com/redis-operator/chapters"
)

func TestJudgeMutant(t *testing.T) {
	failedIn := func(failAt int) types.SpecReport { return lessonSpec(types.SpecStateFailed, failAt) }
	inBeforeEach := failedIn(2)
	inBeforeEach.Failure.FailureNodeContext, inBeforeEach.Failure.FailureNodeType = types.FailureNodeInContainer, types.NodeTypeBeforeEach
	bareError := failedIn(6)
	failWith(&bareError, "Unexpected error:\n    pods \"cache-2\" not found\noccurred", true)
	tests := []struct {
		name   string
		spec   types.SpecReport
		ran    bool
		step   string
		killed bool
		why    string
	}{
		{"killed at its step", failedIn(4), true, "Lesson: the pod comes back", true, ""},
		{"killed at its step named without the mark", failedIn(4), true, "the pod comes", true, ""},
		{"killed at a later step", failedIn(6), true, "the other pods stay", true, ""},
		{"failed at its step, outside its deciding check", outsideCheck(6), true, "the other pods stay", false, "not in a deciding check"},
		{"failed at another step", failedIn(6), true, "Lesson: the pod comes back", false, `failed in step "the other pods stay"`},
		{"failed in setup", inBeforeEach, true, "creating a Redis", false, "not in its body"},
		{"survived", lessonSpec(types.SpecStatePassed, 0), true, "Lesson: the pod comes back", false, "it survived"},
		{"panicked at its step", lessonSpec(types.SpecStatePanicked, 6), true, "the other pods stay", false, "its spec panicked"},
		{"a bare error at its step", bareError, true, "the other pods stay", false, "its spec failed with an error that no check describes"},
		{"did not run", types.SpecReport{}, false, "x", false, "did not run"},
	}
	for _, tt := range tests {
		v := judgeMutant(tt.spec, tt.ran, tt.step)
		if v.ok != tt.killed || !strings.Contains(v.problem, tt.why) {
			t.Errorf("%s: got ok=%v problem %q, want ok=%v and a problem with %q", tt.name, v.ok, v.problem, tt.killed, tt.why)
		}
	}
}

func TestFocusOnMatchesExactlyTheSpecs(t *testing.T) {
	got := focusOn([]string{"A Redis' status is not written (ever)", "A pod comes back"})
	want := `(^|\s)(A Redis' status is not written \(ever\)|A pod comes back)$`
	if got != want {
		t.Errorf("focusOn = %q, want %q", got, want)
	}
}

// Every mutant in the course parses, and names a spec and a step.
func TestTheCoursesMutantsParse(t *testing.T) {
	paths, _ := filepath.Glob("../../chapters/*/mutants/*.patch")
	if len(paths) == 0 {
		t.Fatal("no mutant found in chapters/*/mutants")
	}
	for _, p := range paths {
		if _, err := chapters.ParseMutant(p); err != nil {
			t.Error(err)
		}
	}
}
