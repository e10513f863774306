package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/onsi/ginkgo/v2/types"

	"example.com/redis-operator/chapters"
)

// exerciseFile is the name a learner's spec takes in the suite's
// directory, through the build overlay: it is never written there.
const exerciseFile = "zz_exercise_test.go"

// specOverlay writes a go build overlay that adds the learner's spec file
// to the suite's package, and returns its path.
func specOverlay(suite, specFile, outDir string) (string, error) {
	if _, err := os.Stat(specFile); err != nil {
		return "", fmt.Errorf("no spec to check (%v): make exercise-spec N writes its skeleton", err)
	}
	from, err := filepath.Abs(filepath.Join(suite, exerciseFile))
	if err != nil {
		return "", err
	}
	to, err := filepath.Abs(specFile)
	if err != nil {
		return "", err
	}
	data, err := json.Marshal(map[string]map[string]string{"Replace": {from: to}})
	if err != nil {
		return "", err
	}
	path, err := filepath.Abs(filepath.Join(outDir, "spec-exercise-overlay.json"))
	if err != nil {
		return "", err
	}
	return path, os.WriteFile(path, data, 0o644)
}

// checkSpecExercise judges a learner's spec the way prove judges the
// chapter's lesson specs, and as the mutants judge them: the specs of the
// file labelled exercise must fail against chapter N-1 after their lesson
// step, at their deciding check; pass against chapter N, with both marks;
// and fail, the same way, against each of the chapter's mutants of the
// spec the learner's stands for (target). A mutant that survives is named
// with the bug it has. againstMutants: the chapter is proven against its
// mutants (chapters 12 to 14), which then stand in for chapter N-1, at the
// deciding check too.
func checkSpecExercise(in mutantsInput, specFile, target string, againstMutants bool) error {
	chapter := in.run.chapter
	ms, err := readMutants(in.chapterDir, chapter, "")
	if err != nil {
		return err
	}
	ms = slices.DeleteFunc(ms, func(m *mutant) bool { return m.Spec != target })
	if len(ms) == 0 {
		return fmt.Errorf("chapter %d has no mutant of %q", chapter, target)
	}
	// Built while the runs against the chapters wait for the cluster.
	in.builds = buildAhead(in, ms)

	run := in.run
	run.labelFilter = chapters.LabelExercise
	var problems []string
	if againstMutants {
		// The chapter's lesson specs pass against the chapter before (its
		// faults are injected into any chapter), so its mutants stand in
		// for it: the learner's spec must fail against each at its
		// deciding check, as it would against chapter N-1.
		fmt.Printf("=== Checking your spec %s: against chapter %d (each must pass) and %d mutants of %q (each must fail after its lesson step, at its deciding check); Eventually waits %s\n",
			specFile, chapter, len(ms), target, run.timeout)
	} else {
		fmt.Printf("=== Checking your spec %s: against chapter %d (each must fail after its lesson step), chapter %d (each must pass), and %d mutants of %q; Eventually waits %s\n",
			specFile, chapter-1, chapter, len(ms), target, run.timeout)
		red := run
		red.operator, red.label = chapter-1, "spec-exercise-red"
		redRes, err := runSuite(red)
		if err != nil {
			return err
		}
		if len(redRes.specs) == 0 && redRes.setupErr == "" {
			return fmt.Errorf("%s has no spec labelled exercise (framework.Exercise): nothing to check", specFile)
		}
		fmt.Printf("Against chapter %d, the chapter before:\n", chapter-1)
		problems = append(problems, judgeSpecs(redRes, func(s types.SpecReport) redVerdict { return judgeRed(s, true) },
			fmt.Sprintf("must fail against chapter %d", chapter-1))...)
	}

	green := run
	green.operator, green.label = chapter, "spec-exercise-green"
	greenRes, err := runSuite(green)
	if err != nil {
		return err
	}
	fmt.Printf("Against chapter %d:\n", chapter)
	problems = append(problems, judgeSpecs(greenRes, judgeGreen, fmt.Sprintf("must pass against chapter %d", chapter))...)

	for _, m := range ms {
		b := <-in.builds[m.Name]
		if b.err != nil {
			return b.err
		}
		mr := run
		mr.operator, mr.variant, mr.label, mr.failFast = chapter, b.variant, "spec-exercise-mutant-"+m.Name, true
		res, err := runSuite(mr)
		if err != nil {
			return err
		}
		fmt.Printf("Against the mutant %s (%s):\n", m.Name, m.Bug)
		problems = append(problems, judgeSpecs(res, func(s types.SpecReport) redVerdict {
			v := judgeKill(s)
			if againstMutants {
				// In place of chapter N-1: at the deciding check.
				v = judgeRed(s, true)
			}
			if !v.ok {
				v.problem = "the mutant survived: " + v.problem
			}
			return v
		}, "must kill the mutant "+m.Name)...)
	}
	if len(problems) > 0 {
		return fmt.Errorf("your spec does not prove chapter %d's lesson yet:\n  - %s", chapter, strings.Join(problems, "\n  - "))
	}
	if againstMutants {
		fmt.Printf("=== Your spec proves chapter %d's lesson: green against chapter %d, and red after its lesson step, at its deciding check, against its %d mutants\n",
			chapter, chapter, len(ms))
		return nil
	}
	fmt.Printf("=== Your spec proves chapter %d's lesson: red against chapter %d after its lesson step, green against chapter %d, and it kills %d mutants\n",
		chapter, chapter-1, chapter, len(ms))
	return nil
}

// judgeKill: a learner's spec kills a mutant when it fails after its
// lesson step, in one of its deciding checks: the way prove kills a
// mutant with the chapter's own spec. A spec may have a check for each
// thing a mutant can break (pods-without-namespace keeps the Redis from
// going at all, before the pods are looked at).
func judgeKill(s types.SpecReport) redVerdict {
	v, after := failedAfterLessonStep(s, true)
	if !after {
		return v
	}
	v.check, v.problem = theCheck(s, v.step)
	v.ok = v.problem == ""
	return v
}

// judgeGreen: a learner's spec passes against its chapter, and has both
// marks that make its failures count.
func judgeGreen(s types.SpecReport) redVerdict {
	v := redVerdict{state: s.State.String()}
	_, stepped := lessonStep(s)
	checked := hasDecidingCheck(s)
	switch {
	case s.State != types.SpecStatePassed:
		v.step = lastStep(s)
		v.problem = fmt.Sprintf("it %s in step %q: %s", s.State, v.step, why(s.Failure.Message))
	case !stepped:
		v.problem = "it has no lesson step (framework.LessonStep): nothing says where its setup ends"
	case !checked:
		v.problem = "it has no deciding check (framework.DecidingCheck): nothing says which assertion decides it"
	default:
		v.ok = true
	}
	return v
}

// judgeSpecs prints one line per spec of a run with judge's verdict, and
// returns the problems, each saying what the spec must do.
func judgeSpecs(res *runResult, judge func(types.SpecReport) redVerdict, must string) []string {
	if res.setupErr != "" {
		fmt.Printf("  NO  the suite's set-up failed (BeforeSuite): %s\n", why(res.setupErr))
		return []string{fmt.Sprintf("the run where your spec %s failed in BeforeSuite (see %s)", must, res.log)}
	}
	var problems []string
	for _, s := range res.specs {
		v := judge(s)
		fmt.Printf("  %-3s %-9s | %s\n", mark(v.ok), v.state, s.FullText())
		switch {
		case !v.ok:
			fmt.Printf("        %s\n", v.problem)
			problems = append(problems, fmt.Sprintf("%q %s, but %s (see %s)", s.FullText(), must, v.problem, res.log))
		case v.step != "":
			fmt.Printf("        failed in step %q, at its check %q: %s\n", v.step, v.check, why(s.Failure.Message))
		}
	}
	if len(res.specs) == 0 {
		problems = append(problems, "no spec labelled exercise ran")
	}
	return problems
}
