//go:build e2e

// Package exercise checks the exercises' tools the way a learner uses
// them, on the test cluster, in a scratch directory: every exercise's
// start must fail make check at its lesson unit tests, and stop there;
// chapter 5's must pass, lesson specs and the rest of the suite, once the
// workspace holds chapter 5's own package; chapter 2's too, its lesson
// specs judged first on an API server alone. That the lesson specs fail
// against chapter 5's start is prove's red run of chapter 5 (chapter 4 is
// the start); this checks make check's own path.
// Chapter 5's spec exercise too: make check-spec must refuse the skeleton,
// and three wrong answers before any run, and pass an answer (testdata),
// which kills the chapter's mutant of the spec it stands for; and chapter
// 13's, judged against its mutant in place of chapter 12. Run it with `make test-exercise` (CI does, on the
// local backend).
package exercise

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestExerciseFive(t *testing.T) {
	root, rel, runMake, mustSay := setup(t)

	out, err := runMake("exercise", "5")
	if err != nil {
		t.Fatalf("make exercise 5: %v", err)
	}
	ws := filepath.Join(rel, "05-rebuild-pods")
	mustSay(out, "your workspace is "+ws+", chapter 4's package")

	// The start fails at its lesson unit tests:
	// TestEveryStartFailsItsLessonUnitTests. The reference, chapter 5's
	// own package in the workspace, passes all of make check.
	solve(t, root, ws, "05-rebuild-pods")
	out, err = runMake("check", "5")
	if err != nil {
		t.Fatalf("make check failed with chapter 5's own package: %v", err)
	}
	mustSay(out, "  ok    TestReconcileRebuildsADeletedRecordedPod",
		"  ok    A pod deleted with kubectl comes back with the same name, a new UID, and runs, and the operator says it rebuilt it",
		"passes chapter 5's suite", "Exercise 5 done")

	out, err = runMake("progress")
	if err != nil {
		t.Fatalf("make progress: %v", err)
	}
	mustSay(out, "* 05-rebuild-pods", "last make check: passed")

	// With the learner's changes in the workspace, a new start is refused
	// and changes nothing.
	out, err = runMake("exercise", "5")
	if err == nil {
		t.Fatal("make exercise 5 over a changed workspace succeeded")
	}
	mustSay(out, "has your changes (", "redis_controller.go", "FORCE=yes")
}

// Every exercise's start fails make check at its lesson unit tests, which
// need no cluster: chapter N-1's package, with the stubs of its
// start.patch, is not chapter N's yet. (That it stops there, before the
// cluster, TestExerciseFive checks; that chapter N's own package passes
// them, make unit does, and its suite, prove.)
func TestEveryStartFailsItsLessonUnitTests(t *testing.T) {
	root, _, runMake, mustSay := setup(t)
	tasks, err := filepath.Glob(filepath.Join(root, "chapters", "*", "exercise", "TASK.md"))
	if err != nil || len(tasks) == 0 {
		t.Fatalf("no exercise: %v", err)
	}
	for _, task := range tasks {
		chapter := filepath.Base(filepath.Dir(filepath.Dir(task)))
		n := strings.TrimLeft(chapter[:2], "0")
		t.Run(chapter, func(t *testing.T) {
			if _, err := runMake("exercise", n); err != nil {
				t.Fatalf("make exercise %s: %v", n, err)
			}
			out, err := runMake("check", n)
			if err == nil {
				t.Fatalf("make check %s passed with the start", n)
			}
			// 2/4, or 2/5 where an API server alone judges the lesson
			// specs first.
			mustSay(out, "chapter "+n+"'s lesson unit tests against", "  FAIL  Test", "does not pass chapter "+n+"'s lesson unit tests yet")
			if !strings.Contains(out, "--- 2/") || strings.Contains(out, "--- 3/") {
				t.Error("make check did not stop at its second step, the lesson unit tests, when a unit test failed")
			}
		})
	}
}

// The spec exercise: the skeleton is not a proof; an answer is red against
// chapter 4, green against chapter 5, and kills the mutant of the spec it
// stands for.
func TestSpecExerciseFive(t *testing.T) {
	root, rel, runMake, mustSay := setup(t)

	out, err := runMake("exercise-spec", "5")
	if err != nil {
		t.Fatalf("make exercise-spec 5: %v", err)
	}
	spec := filepath.Join(rel, "spec-05-rebuild-pods", "spec_test.go")
	mustSay(out, "your spec is "+spec)

	out, err = runMake("check-spec")
	if err == nil {
		t.Fatal("make check-spec passed with the skeleton")
	}
	mustSay(out, "failed before its lesson step", "your spec does not prove chapter 5's lesson yet")

	answer, err := os.ReadFile(filepath.Join("testdata", "spec05_test.go.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, spec), answer, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err = runMake("check-spec", "5")
	if err != nil {
		t.Fatalf("make check-spec failed with an answer: %v", err)
	}
	mustSay(out, "Against the mutant trusts-the-record", "Your spec proves chapter 5's lesson", "it kills 1 mutants")
}

// Three wrong answers to chapter 5's spec exercise (testdata), each
// refused by make check-spec before any run, saying why: a deciding check
// that asserts nothing, a call of the chapter's own spec, a spec that
// reads which chapter it runs against.
func TestSpecExerciseRefusesWrongAnswers(t *testing.T) {
	root, rel, runMake, mustSay := setup(t)

	if _, err := runMake("exercise-spec", "5"); err != nil {
		t.Fatalf("make exercise-spec 5: %v", err)
	}
	for file, says := range map[string][]string{
		"wrong-asserts-nothing05_test.go.txt": {"its deciding check asserts nothing"},
		"wrong-own-spec05_test.go.txt":        {"calls ExpectPodComesBack, one of the framework's specs"},
		"wrong-reads-env05_test.go.txt":       {"names OPERATOR_CHAPTER", "reads Chapter"},
	} {
		answer, err := os.ReadFile(filepath.Join("testdata", file))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, rel, "spec-05-rebuild-pods", "spec_test.go"), answer, 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := runMake("check-spec", "5")
		if err == nil {
			t.Fatalf("make check-spec 5 passed with %s", file)
		}
		mustSay(out, append(says, "cannot prove chapter 5's lesson as it is written")...)
		if strings.Contains(out, "Against chapter 4") {
			t.Errorf("make check-spec 5 ran %s against chapter 4: it is refused before any run", file)
		}
	}
}

// Chapter 13's spec exercise, whose chapter is proven against its
// mutants, not against chapter 12 (which passes its specs: the same
// package): an answer (testdata) passes against chapter 13 and fails
// against the mutant of the spec it stands for, at its deciding check; no
// run against chapter 12. (The skeleton's refusal is chapter 5's path,
// above.)
func TestSpecExerciseThirteen(t *testing.T) {
	root, rel, runMake, mustSay := setup(t)

	if _, err := runMake("exercise-spec", "13"); err != nil {
		t.Fatalf("make exercise-spec 13: %v", err)
	}
	answer, err := os.ReadFile(filepath.Join("testdata", "spec13_test.go.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, rel, "spec-13-cache-behind", "spec_test.go"), answer, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := runMake("check-spec", "13")
	if err != nil {
		t.Fatalf("make check-spec 13 failed with an answer: %v", err)
	}
	mustSay(out, "Against chapter 13:", "Against the mutant delete-by-name", "Your spec proves chapter 13's lesson", "against its 1 mutants")
	if strings.Contains(out, "Against chapter 12") {
		t.Error("make check-spec 13 ran the spec against chapter 12, which passes chapter 13's specs")
	}
}

// Chapter 2's lesson needs an API server alone (the table of chapters):
// make check judges its lesson specs there first, on an API server it
// starts, then the whole suite on the cluster that is up.
func TestExerciseTwoOnAnAPIServerFirst(t *testing.T) {
	root, rel, runMake, mustSay := setup(t)
	// make check leaves the API server running, for the next one.
	t.Cleanup(func() { _, _ = runMake("cluster-down", "CLUSTER=envtest") })
	if _, err := runMake("exercise", "2"); err != nil {
		t.Fatalf("make exercise 2: %v", err)
	}
	solve(t, root, filepath.Join(rel, "02-finalizer-tracking"), "02-finalizer-tracking")
	out, err := runMake("check", "2")
	if err != nil {
		t.Fatalf("make check failed with chapter 2's own package: %v", err)
	}
	envtest := "--- 3/5 chapter 2's lesson specs on an API server alone (envtest)"
	verdict := "passes chapter 2's 2 lesson specs on an API server alone (envtest)"
	cluster := "--- 4/5 the test cluster"
	mustSay(out, envtest, "API server alone (envtest) ready", verdict, cluster, "passes chapter 2's suite", "Exercise 2 done")
	if i, j := strings.Index(out, verdict), strings.Index(out, cluster); i < 0 || j < 0 || i > j {
		t.Error("make check did not judge the lesson specs on the API server alone before the cluster")
	}
}

// solve puts chapter's own package (its files but its tests) in the
// workspace ws, relative to root: the reference answer.
func solve(t *testing.T, root, ws, chapter string) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(root, "chapters", chapter, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, ws, filepath.Base(f)), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// setup makes a scratch exercises' directory in the checkout and returns
// the checkout, that directory (relative) and how to run make with it.
func setup(t *testing.T) (root, rel string, runMake func(...string) (string, error), mustSay func(string, ...string)) {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	// A directory of the checkout, as the workspace must be; not the
	// learner's _exercise. The same one each time, so that go's build
	// cache, which keys a package on its files' paths too, serves the
	// next run.
	dir := filepath.Join(root, "_output", "exercise-test", t.Name())
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	rel, _ = filepath.Rel(root, dir)
	runMake = func(args ...string) (string, error) {
		cmd := exec.Command("make", append([]string{"--no-print-directory"}, args...)...)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "EXERCISE_DIR="+rel)
		out, err := cmd.CombinedOutput()
		t.Logf("$ make %s\n%s", strings.Join(args, " "), out)
		return string(out), err
	}
	mustSay = func(out string, wants ...string) {
		t.Helper()
		for _, w := range wants {
			if !strings.Contains(out, w) {
				t.Errorf("the output does not say %q", w)
			}
		}
	}
	return root, rel, runMake, mustSay
}
