package chapters

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
)

// The suite protocol: what the tools that run a chapter's suite (make,
// prove, exercise) and the suites themselves (tests/framework) agree on.
// The suites import Ginkgo; the tools read Ginkgo's JSON reports and must
// not import the suites (their Ginkgo DSL would add its flags to every
// tool's), so both read it here. A chapter's branch has this file alone,
// as internal/chapters: its suite reads it, and it has no table.

// OperatorRun is how a chapter's suite runs the operator under test.
type OperatorRun int

const (
	// OperatorOnHost: one host process for the whole suite, started
	// before its specs as `make run` starts it (without its webhook), and
	// shared by its parallel specs.
	OperatorOnHost OperatorRun = iota
	// OperatorDeployed: `make deploy`, as a user deploys it: the
	// Deployment's pods, or, where nodes run no containers (the local
	// backend), host processes of the image's binary with its flags.
	OperatorDeployed
	// OperatorPerSpec: each spec starts it on the host, crashes it and
	// restarts it, in the test build that injects faults.
	OperatorPerSpec
)

// Suite is what a chapter's suite needs to know of its chapter: the
// chapter's row of the table, as far as its suite reads it (SuiteOf).
type Suite struct {
	Number int
	// Title is what the chapter is about ("rebuild pods").
	Title string
	// Operator is how the suite runs the operator under test.
	Operator OperatorRun
	// Faults: the chapter has a test build that injects faults; its
	// suite waits, before any spec, until the API server can admit a pod
	// owned by a Redis (a refused create would be counted as a write).
	Faults bool
	// Carries names the behaviour specs of the chapters before it that
	// the suite runs too, unchanged (the framework's behaviours).
	Carries []string
}

// Description is what the suite's report is called.
func (s Suite) Description() string { return fmt.Sprintf("Chapter %d: %s", s.Number, s.Title) }

// Label is the label of every spec of the suite.
func (s Suite) Label() string { return fmt.Sprintf("chapter-%02d", s.Number) }

// SuiteName names chapter n's suite: its directory under tests/, and the
// files it writes under the output directory.
func SuiteName(n int) string { return fmt.Sprintf("chapter%02d", n) }

// Tag is chapter n's short name in the names of what a tool makes for it
// (ch05-3fa2c1, a suite's namespace; bench-ch05, the benchmark's).
func Tag(n int) string { return fmt.Sprintf("ch%02d", n) }

// OperatorLog is the log of the operator that chapter n's suite runs on
// the host, under the output directory out: prove reads it too.
func OperatorLog(out string, n int) string {
	return filepath.Join(out, "logs", SuiteName(n)+"-operator.log")
}

// RoleName is the name of the ClusterRole generated from every chapter's
// RBAC markers (make manifests), which the suites bind the operator to.
const RoleName = "redis-operator"

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
