package chapters

import (
	"fmt"
	"strconv"
	"strings"
)

// The suite protocol: what the tools that run a chapter's suite (make,
// prove, exercise) and the suites themselves (tests/framework) agree on.
// The suites import Ginkgo; the tools read Ginkgo's JSON reports and must
// not import the suites (their Ginkgo DSL would add its flags to every
// tool's), so both read it here. A chapter's branch has this file alone,
// as internal/chapters: its suite reads it, and it has no table.

// The environment a suite runs in.
const (
	// EnvChapter names the chapter whose operator runs, as its number
	// (Parse), or NoOperator. The operator reads it too
	// (operator/controller): without it, the Shipped chapter runs; a
	// suite without it runs its own chapter's.
	EnvChapter = "OPERATOR_CHAPTER"
	// EnvOperatorBin is the operator binary a suite runs (else it builds
	// bin/operator), EnvFaultsBin its test build that injects faults,
	// EnvOperatorRole the role a variant's markers generate, which the
	// suite binds the operator to instead of the chapter's.
	EnvOperatorBin  = "OPERATOR_BIN"
	EnvFaultsBin    = "OPERATOR_FAULTS_BIN"
	EnvOperatorRole = "OPERATOR_ROLE"
	// EnvEventuallyTimeout bounds every Eventually (a Go duration).
	EnvEventuallyTimeout = "E2E_EVENTUALLY_TIMEOUT"
	// EnvExpectFailure = "true": the run is expected to fail (prove's red
	// runs), so a failure dumps less.
	EnvExpectFailure = "E2E_EXPECT_FAILURE"
)

// NoOperator, as EnvChapter's value, runs no operator at all: the specs
// meet the CRD alone (chapter 1's lesson specs, proven red against no
// operator).
const NoOperator = "none"

// OperatorEnv is EnvChapter's value for chapter n's operator, 0 for none.
func OperatorEnv(n int) string {
	if n == 0 {
		return NoOperator
	}
	return strconv.Itoa(n)
}

// OperatorChapter reads EnvChapter's value v: the chapter whose operator
// runs, own if v is empty, 0 if v is NoOperator. A number is checked
// against the table (Parse) by whoever set it and by the operator that
// runs it.
func OperatorChapter(v string, own int) (int, error) {
	switch v {
	case "":
		return own, nil
	case NoOperator:
		return 0, nil
	}
	n, err := number(v)
	if err != nil {
		return 0, fmt.Errorf("%s must be a chapter's number or %q, got %q", EnvChapter, NoOperator, v)
	}
	return n, nil
}

// number is a chapter's number as it is typed (5 or 05): digits only.
func number(s string) (int, error) {
	if s == "" || strings.Trim(s, "0123456789") != "" {
		return 0, fmt.Errorf("not a number: %q", s)
	}
	return strconv.Atoi(s)
}

// What a suite's report says, for prove to find.
const (
	// LessonMark starts the step (a By) that marks where a lesson spec's
	// lesson begins: before it is set-up, which the chapter before must
	// pass too.
	LessonMark = "Lesson: "
	// DecidingCheckEntry names the report entry that a deciding check
	// (framework.DecidingCheck) adds when it begins: what it decides.
	DecidingCheckEntry = "deciding check"
	// CheckFailedEntry names the report entry that a deciding check adds
	// when its assertion fails, right before it fails the spec: a
	// CheckFailure.
	CheckFailedEntry = "deciding check failed"
)

// CheckFailure is the value of a CheckFailedEntry: the check that failed
// and the message it failed the spec with. A spec's failure is a deciding
// check's when its message is the one that check recorded: Ginkgo keeps
// only a spec's first failure.
type CheckFailure struct {
	Check   string `json:"check"`
	Message string `json:"message"`
}

// String is what Ginkgo prints of the entry: the check.
func (f CheckFailure) String() string { return f.Check }

// The labels of specs that tools select.
const (
	// LabelLesson: the specs that prove what a chapter teaches.
	LabelLesson = "lesson"
	// LabelExercise: a learner's own spec (make check-spec).
	LabelExercise = "exercise"
	// LabelCrashSweep: the spec that crashes the operator after each of
	// its writes in turn (make test-faults).
	LabelCrashSweep = "crash-sweep"
)
