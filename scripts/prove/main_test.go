package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/onsi/ginkgo/v2/types"

	"example.com/redis-operator/chapters"
)

// step is a By step at a point of a spec's timeline.
func step(order int, text string) types.SpecEvent {
	return types.SpecEvent{SpecEventType: types.SpecEventByStart, Message: text,
		TimelineLocation: types.TimelineLocation{Order: order}}
}

// lessonSpec is a lesson spec with a setup step (order 1), its lesson
// step (3), its deciding check (4) and a step after it (5), in state,
// failing at order failAt in its body: in its deciding check, which
// records the failure's message, from order 4 on.
func lessonSpec(state types.SpecState, failAt int) types.SpecReport {
	s := types.SpecReport{
		LeafNodeType:   types.NodeTypeIt,
		LeafNodeText:   "comes back",
		LeafNodeLabels: []string{"lesson"},
		State:          state,
		SpecEvents: []types.SpecEvent{
			step(1, "creating a Redis"),
			step(3, "Lesson: the pod comes back"),
			step(5, "the other pods stay"),
		},
		ReportEntries: []types.ReportEntry{{Name: chapters.DecidingCheckEntry, TimelineLocation: types.TimelineLocation{Order: 4}}},
	}
	if state != types.SpecStatePassed {
		s.Failure = types.Failure{TimelineLocation: types.TimelineLocation{Order: failAt}, FailureNodeContext: types.FailureNodeIsLeafNode}
		failWith(&s, "Timed out after 20s.\npod cache-1 was not rebuilt", failAt >= 4)
	}
	return s
}

// failWith makes msg the spec's failure, and, if inCheck, its deciding
// check's, recorded as framework.DecidingCheck records it.
func failWith(s *types.SpecReport, msg string, inCheck bool) {
	s.Failure.Message = msg
	entries := s.ReportEntries[:0:0]
	for _, e := range s.ReportEntries {
		if e.Name != chapters.CheckFailedEntry {
			entries = append(entries, e)
		}
	}
	if inCheck {
		value, _ := json.Marshal(chapters.CheckFailure{Check: "cache-1 is a new pod", Message: msg})
		entries = append(entries, types.ReportEntry{Name: chapters.CheckFailedEntry, Value: types.ReportEntryValue{AsJSON: string(value)},
			TimelineLocation: types.TimelineLocation{Order: s.Failure.TimelineLocation.Order}})
	}
	s.ReportEntries = entries
}

// outsideCheck is a lesson spec that failed at failAt, after its deciding
// check began, in an assertion that is not the check's.
func outsideCheck(failAt int) types.SpecReport {
	s := lessonSpec(types.SpecStateFailed, failAt)
	failWith(&s, s.Failure.Message, false)
	return s
}

func TestJudgeRed(t *testing.T) {
	inBeforeEach := lessonSpec(types.SpecStateFailed, 2)
	inBeforeEach.Failure.FailureNodeContext, inBeforeEach.Failure.FailureNodeType = types.FailureNodeInContainer, types.NodeTypeBeforeEach
	inCleanup := lessonSpec(types.SpecStateFailed, 9)
	inCleanup.Failure.FailureNodeContext, inCleanup.Failure.FailureNodeType = types.FailureNodeAtTopLevel, types.NodeTypeCleanupAfterEach
	unmarked := lessonSpec(types.SpecStateFailed, 6)
	unmarked.SpecEvents = unmarked.SpecEvents[:1]
	unchecked := lessonSpec(types.SpecStateFailed, 6)
	unchecked.ReportEntries = nil
	checkedLate := outsideCheck(4)
	checkedLate.ReportEntries[0].TimelineLocation.Order = 5
	// The failure recorded by a check is another than the spec's: a
	// check's assertion failed in a goroutine after the spec had failed.
	otherFailure := lessonSpec(types.SpecStateFailed, 6)
	otherFailure.Failure.Message = "Expected\n    <int>: 2\nto equal\n    <int>: 3"
	withMessage := func(failAt int, msg string) types.SpecReport {
		s := lessonSpec(types.SpecStateFailed, failAt)
		failWith(&s, msg, true)
		return s
	}

	tests := []struct {
		name     string
		spec     types.SpecReport
		ran      bool
		wantRed  bool
		wantStep string
		wantWhy  string
	}{
		{"failed after its lesson step, in the step after it", lessonSpec(types.SpecStateFailed, 6), true, true, "the other pods stay", ""},
		{"failed in its lesson step, after its deciding check", lessonSpec(types.SpecStateFailed, 4), true, true, "Lesson: the pod comes back", ""},
		{"failed after its lesson step, before its deciding check", checkedLate, true, false, "Lesson: the pod comes back", "not in a deciding check"},
		{"failed after its deciding check began, outside it", outsideCheck(6), true, false, "the other pods stay", "not in a deciding check"},
		{"failed after its deciding check, which recorded another failure", otherFailure, true, false, "the other pods stay", "not in a deciding check"},
		{"failed with no deciding check", unchecked, true, false, "the other pods stay", "no deciding check"},
		{"ran out of its time after its deciding check", lessonSpec(types.SpecStateTimedout, 6), true, false, "the other pods stay", "ran out of its time"},
		{"panicked after its deciding check", lessonSpec(types.SpecStatePanicked, 6), true, false, "the other pods stay", "panicked"},
		{"a bare error after its deciding check", withMessage(6, "Unexpected error:\n    <*fmt.wrapError>: kubectl get pods: exit status 1\noccurred"), true, false, "the other pods stay", "no check describes"},
		{"a bare error in an Eventually", withMessage(6, "Timed out after 20.001s.\nThe function passed to Eventually failed at /x_test.go:1 with:\nUnexpected error:\n    dial tcp: connection refused"), true, false, "the other pods stay", "no check describes"},
		{"a bare error of Succeed", withMessage(6, "Expected success, but got an error:\n    some error"), true, false, "the other pods stay", "no check describes"},
		{"an error its check describes", withMessage(6, "Timed out after 20.000s.\nevery replica serves a certificate\nThe function passed to Eventually failed at /x_test.go:1 with:\nUnexpected error:\n    dial tcp 127.0.0.1:9443: connect: connection refused"), true, true, "the other pods stay", ""},
		{"the API server did not answer", withMessage(6, "pod cache-1 was not rebuilt\nUnexpected error:\n    Unable to connect to the server: EOF"), true, false, "the other pods stay", "API server did not answer"},
		{"failed in setup, before its lesson step", lessonSpec(types.SpecStateFailed, 2), true, false, "", `in setup (step "creating a Redis")`},
		{"failed before any step", lessonSpec(types.SpecStateFailed, 0), true, false, "", "(before any step)"},
		{"failed in a BeforeEach", inBeforeEach, true, false, "", "in its BeforeEach"},
		{"failed in a cleanup after its body passed", inCleanup, true, false, "", "not in its body"},
		{"failed with no lesson step", unmarked, true, false, "", "before its lesson step"},
		{"passed", lessonSpec(types.SpecStatePassed, 0), true, false, "", "it passed"},
		{"skipped, as when BeforeSuite failed", lessonSpec(types.SpecStateSkipped, 0), true, false, "", "it skipped"},
		{"did not run", types.SpecReport{}, false, false, "", "did not run"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := judgeRed(tt.spec, tt.ran)
			if v.ok != tt.wantRed {
				t.Fatalf("red = %v, want %v (%+v)", v.ok, tt.wantRed, v)
			}
			if v.step != tt.wantStep {
				t.Errorf("step = %q, want %q", v.step, tt.wantStep)
			}
			if !strings.Contains(v.problem, tt.wantWhy) {
				t.Errorf("problem = %q, want it to say %q", v.problem, tt.wantWhy)
			}
		})
	}
}

// A mutant is killed by a failure after the lesson step in a deciding
// check; not by one outside it, in setup, nor by a panic.
func TestJudgeKill(t *testing.T) {
	tests := []struct {
		name     string
		spec     types.SpecReport
		wantKill bool
		wantWhy  string
	}{
		{"failed in its deciding check", lessonSpec(types.SpecStateFailed, 6), true, ""},
		{"failed after its lesson step, outside its deciding check", outsideCheck(6), false, "not in a deciding check"},
		{"failed in setup", lessonSpec(types.SpecStateFailed, 2), false, "before its lesson step"},
		{"panicked after its lesson step", lessonSpec(types.SpecStatePanicked, 6), false, "panicked"},
		{"passed", lessonSpec(types.SpecStatePassed, 0), false, "it passed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := judgeKill(tt.spec)
			if v.ok != tt.wantKill || !strings.Contains(v.problem, tt.wantWhy) {
				t.Errorf("killed = %v (%q), want %v, saying %q", v.ok, v.problem, tt.wantKill, tt.wantWhy)
			}
		})
	}
}

func TestVerdict(t *testing.T) {
	beforeSuite := func(state types.SpecState) types.SpecReport {
		s := types.SpecReport{LeafNodeType: types.NodeTypeBeforeSuite, State: state}
		if state != types.SpecStatePassed {
			s.Failure.Message = "the cluster did not start"
		}
		return s
	}
	run := func(operator int, specs ...types.SpecReport) *runResult {
		res := &runResult{runInput: runInput{operator: operator}}
		res.read(types.Report{SpecReports: specs})
		return res
	}
	green := run(5, beforeSuite(types.SpecStatePassed), lessonSpec(types.SpecStatePassed, 0))
	unmarkedGreen := lessonSpec(types.SpecStatePassed, 0)
	unmarkedGreen.SpecEvents = nil
	uncheckedGreen := lessonSpec(types.SpecStatePassed, 0)
	uncheckedGreen.ReportEntries = nil
	bareError := lessonSpec(types.SpecStateFailed, 6)
	failWith(&bareError, "Unexpected error:\n    kubectl get pods: exit status 1\noccurred", true)

	tests := []struct {
		name      string
		red       *runResult
		green     *runResult
		wantError string
	}{
		{"red after the lesson step, then green", run(4, beforeSuite(types.SpecStatePassed), lessonSpec(types.SpecStateFailed, 6)), green, ""},
		{"red after the lesson step, outside the deciding check", run(4, beforeSuite(types.SpecStatePassed), outsideCheck(6)), green, "not in a deciding check"},
		{"red in setup", run(4, beforeSuite(types.SpecStatePassed), lessonSpec(types.SpecStateFailed, 2)), green, "failed before its lesson step"},
		{"red with a bare error", run(4, beforeSuite(types.SpecStatePassed), bareError), green, "no check describes"},
		{"green without a deciding check", run(4, lessonSpec(types.SpecStateFailed, 6)), run(5, uncheckedGreen), "has no deciding check"},
		{"BeforeSuite failed: its specs were skipped", run(4, beforeSuite(types.SpecStateFailed), lessonSpec(types.SpecStateSkipped, 0)), green, "failed in BeforeSuite"},
		{"green without a lesson step", run(4, lessonSpec(types.SpecStateFailed, 6)), run(5, unmarkedGreen), "has no lesson step"},
		{"not green", run(4, lessonSpec(types.SpecStateFailed, 6)), run(5, lessonSpec(types.SpecStateFailed, 6)), "must pass against chapter 5"},
		{"no lesson spec at all", run(4), run(5), "no spec labelled lesson"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := verdict(5, tt.red, tt.green)
			switch {
			case tt.wantError == "" && err != nil:
				t.Fatalf("verdict: %v, want proven", err)
			case tt.wantError != "" && (err == nil || !strings.Contains(err.Error(), tt.wantError)):
				t.Fatalf("verdict: %v, want an error saying %q", err, tt.wantError)
			}
		})
	}
}

func TestWhy(t *testing.T) {
	tests := map[string]string{
		"Timed out after 20.001s.\nthe pods were not deleted with their Redis\nExpected ...":                                                              "Timed out after 20.001s. the pods were not deleted with their Redis",
		"Failed after 0.002s.\nThe function passed to Consistently failed at /x_test.go:75 with:\nthe Redis recorded a pod it does not control\nExpected": "Failed after 0.002s. the Redis recorded a pod it does not control",
		"pod cache-0 is not controlled by its Redis\nExpected\n    <[]v1.OwnerReference | len:0, cap:0>: []":                                              "pod cache-0 is not controlled by its Redis",
		"Told to stop trying after 0.294s.\npod cache-0 was created after its Redis was deleted\nAt one point, however":                                   "Told to stop trying after 0.294s. pod cache-0 was created after its Redis was deleted",
	}
	for msg, want := range tests {
		if got := why(msg); got != want {
			t.Errorf("why(%q) = %q, want %q", msg, got, want)
		}
	}
}

// A spec one rung too low counts only when it fails as the table says:
// red, at its check, with its message.
func TestJudgeTooLow(t *testing.T) {
	tooLow := chapters.TooLow{Check: "cache-1 is a new pod", Message: "was not rebuilt", Lacks: "a kubelet"}
	other := lessonSpec(types.SpecStateFailed, 6)
	failWith(&other, "Timed out after 20s.\nthe pod is another one", true)
	tests := []struct {
		name    string
		spec    types.SpecReport
		tooLow  chapters.TooLow
		wantWhy string
	}{
		{"failed at its check, with its message", lessonSpec(types.SpecStateFailed, 6), tooLow, ""},
		{"passed: the rung is not too low", lessonSpec(types.SpecStatePassed, 0), tooLow, "it passed"},
		{"failed in setup", lessonSpec(types.SpecStateFailed, 2), tooLow, "in setup"},
		{"failed outside its checks", outsideCheck(6), tooLow, "not in a deciding check"},
		{"failed at another check", lessonSpec(types.SpecStateFailed, 6), chapters.TooLow{Check: "the Redis goes", Message: "was not rebuilt"}, `not at "the Redis goes"`},
		{"failed at its check, for another reason", other, tooLow, `without "was not rebuilt"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, problem := judgeTooLow(tt.tooLow, tt.spec, true)
			if tt.wantWhy == "" && problem != "" || !strings.Contains(problem, tt.wantWhy) {
				t.Errorf("problem = %q, want it to say %q", problem, tt.wantWhy)
			}
		})
	}
}

// What the table of chapters names for make test-envtest exists: the
// spec run one rung too low, with its check, and the mutant a fake client
// misses.
func TestTheLadderRowsNameWhatExists(t *testing.T) {
	texts := specTexts(t, "../../tests")
	for _, c := range chapters.All {
		if tl := c.TooLow; tl != nil {
			if !slices.Contains(texts, tl.Spec) {
				t.Errorf("chapter %d's TooLow names %q, which no spec is", c.Number, tl.Spec)
			}
			src, err := os.ReadFile(fmt.Sprintf("../../tests/chapter%02d/chapter%02d_test.go", c.Number, c.Number))
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range []string{strconv.Quote(tl.Check), strconv.Quote(tl.Message)} {
				if !strings.Contains(string(src), s) {
					t.Errorf("chapter %d's TooLow names %s, which its suite does not say", c.Number, s)
				}
			}
		}
		if miss := c.FakeClientMisses; miss != nil {
			if _, err := os.Stat(filepath.Join("../..", c.Dir(), "mutants", miss.Mutant+".patch")); err != nil {
				t.Errorf("chapter %d's FakeClientMisses names a mutant it does not have: %v", c.Number, err)
			}
		}
	}
}
