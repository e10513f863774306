package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/onsi/ginkgo/v2/types"

	"example.com/redis-operator/chapters"
	"example.com/redis-operator/internal/proc"
)

// checkVariant judges a variant of chapter N as chapter N itself: make
// check runs it on a learner's exercise (make exercise N), whose workspace
// is the variant. The lesson specs run first and each must pass; only
// then the rest of the suite, which must pass too. Each spec gets one
// line, and a failure the step it failed in and why, as prove's verdicts
// do; a failure of the suite's set-up, or an operator that crashed, its
// own lines.
//
// A chapter without lesson specs (noLesson: a rewrite) runs its whole
// suite at once. With lessonsOnly, the lesson specs are all: make check
// runs them so on an API server alone, before the cluster.
func checkVariant(base runInput, v variantFlags, noLesson, lessonsOnly bool) error {
	if noLesson {
		fmt.Printf("=== Checking %s as chapter %d, which has no lesson spec: its whole suite; Eventually waits %s\n", v.dir, base.chapter, base.timeout)
		in := base
		in.operator, in.variant, in.label = base.chapter, v, "check-suite"
		opLog := newOperatorLog(base.chapter)
		res, err := runSuite(in)
		if err != nil {
			return err
		}
		if !judgeChecked(res, opLog) {
			return fmt.Errorf("%s does not pass chapter %d's suite yet (make hint %d gives a hint)", v.dir, base.chapter, base.chapter)
		}
		fmt.Printf("%s %s passes chapter %d's suite: %d specs\n", lessonsPassed, v.dir, base.chapter, len(res.specs))
		return nil
	}
	on := ""
	switch c := os.Getenv("CLUSTER"); c {
	case "", "auto":
	case "envtest":
		on = " on an API server alone (envtest)"
	default:
		on = " on the " + c + " cluster"
	}
	if lessonsOnly {
		fmt.Printf("=== Checking %s as chapter %d: its lesson specs%s; Eventually waits %s\n", v.dir, base.chapter, on, base.timeout)
	} else {
		fmt.Printf("=== Checking %s as chapter %d: its lesson specs, then the rest of the suite%s; Eventually waits %s\n",
			v.dir, base.chapter, on, base.timeout)
	}
	in := base
	in.operator, in.variant, in.lessonsOnly, in.label = base.chapter, v, true, "check-lessons"
	opLog := newOperatorLog(base.chapter)
	lessons, err := runSuite(in)
	if err != nil {
		return err
	}
	if !judgeChecked(lessons, opLog) {
		return fmt.Errorf("%s does not pass chapter %d's lesson specs yet (make hint %d gives a hint)", v.dir, base.chapter, base.chapter)
	}
	if lessonsOnly {
		fmt.Printf("%s %s passes chapter %d's %d lesson specs%s\n", lessonsPassed, v.dir, base.chapter, len(lessons.specs), on)
		return nil
	}
	fmt.Printf("%s %s passes chapter %d's %d lesson specs; now the rest of its suite\n", lessonsPassed, v.dir, base.chapter, len(lessons.specs))
	in.lessonsOnly, in.labelFilter, in.label = false, "!"+chapters.LabelLesson, "check-rest"
	opLog = newOperatorLog(base.chapter)
	rest, err := runSuite(in)
	if err != nil {
		return err
	}
	if !judgeChecked(rest, opLog) {
		return fmt.Errorf("%s passes chapter %d's lesson specs, but not the rest of its suite: what the chapters before taught must still hold", v.dir, base.chapter)
	}
	fmt.Printf("=== %s passes chapter %d's suite: %d lesson specs and %d more\n", v.dir, base.chapter, len(lessons.specs), len(rest.specs))
	return nil
}

// lessonsPassed starts the line that says the lesson specs passed
// (make bench-check times make check up to it).
const lessonsPassed = "=== Lessons:"

// judgeChecked prints one line per spec of a check's run and reports
// whether every one passed and the run itself did.
func judgeChecked(res *runResult, opLog operatorLog) bool {
	if res.setupErr != "" {
		fmt.Printf("  FAIL  the suite's set-up (BeforeSuite), before any spec: %s\n", why(res.setupErr))
		opLog.explain()
		return false
	}
	ok := res.exitErr == nil
	for _, s := range res.specs {
		if s.State == types.SpecStatePassed {
			fmt.Printf("  ok    %s\n", s.FullText())
			continue
		}
		ok = false
		fmt.Printf("  FAIL  %s\n        %s in step %q: %s\n", s.FullText(), s.State, lastStep(s), why(s.Failure.Message))
	}
	if !ok {
		if len(res.specs) == 0 {
			fmt.Printf("  FAIL  no spec ran; the run's log %s ends with:\n%s\n", res.log, proc.Tail(res.log, 30))
		}
		opLog.explain()
		fmt.Printf("        (the whole run: %s)\n", res.log)
	}
	return ok
}

// operatorLog is the log the suite's operator appends to
// (framework.operatorLogPath), and its size before a run: what the run
// added comes after.
type operatorLog struct {
	path   string
	offset int64
}

func newOperatorLog(chapter int) operatorLog {
	out := os.Getenv("OUTPUT_DIR")
	if out == "" {
		out = "_output"
	}
	l := operatorLog{path: chapters.OperatorLog(out, chapter)}
	if fi, err := os.Stat(l.path); err == nil {
		l.offset = fi.Size()
	}
	return l
}

// explain prints, from what the operator logged during the run, the end
// of it when the operator crashed, or what a "forbidden" there means.
func (l operatorLog) explain() {
	data, err := os.ReadFile(l.path)
	if err != nil || int64(len(data)) < l.offset {
		return
	}
	lines := strings.Split(strings.TrimRight(string(data[l.offset:]), "\n"), "\n")
	for i, line := range lines {
		if strings.HasPrefix(line, "panic: ") {
			end := min(len(lines), i+15)
			fmt.Printf("  Your operator crashed (%s):\n    %s\n", l.path, strings.Join(lines[i:end], "\n    "))
			return
		}
	}
	for _, line := range lines {
		if strings.Contains(line, "is forbidden") {
			fmt.Printf("  Your operator was refused a request: it runs with the role that its +kubebuilder:rbac markers ask for, and one is missing (%s):\n    %s\n", l.path, line)
			return
		}
	}
}
