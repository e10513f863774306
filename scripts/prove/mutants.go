package main

import (
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2/types"

	"example.com/redis-operator/chapters"
	"example.com/redis-operator/internal/proc"
)

// mutant is a chapter's mutant (chapters.Mutant: the format of its
// patch is there).
type mutant = chapters.Mutant

// readMutants reads the mutants of chapter in dir (chapters/NN-slug), in
// the order of their names; only, if not empty, names the one to read.
func readMutants(chapterDir string, chapter int, only string) ([]*mutant, error) {
	return chapters.ReadMutants(chapterDir, chapter, only)
}

// applyMutant writes the chapter's package with the mutant's patch
// applied into dir: its Go files (not its tests) and its crd/, if it has
// one.
func applyMutant(m *mutant, chapterDir, dir string) error {
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	err := filepath.WalkDir(chapterDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(chapterDir, p)
		switch {
		case d.IsDir():
			if rel == "." || rel == "crd" || strings.HasPrefix(rel, "crd/") {
				return os.MkdirAll(filepath.Join(dir, rel), 0o755)
			}
			return filepath.SkipDir
		case rel == filepath.Base(rel) && (!strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go")):
			return nil // the README, the role, the tests: not the variant's
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dir, rel), data, 0o644)
	})
	if err != nil {
		return err
	}
	input, err := filepath.Abs(m.Path) // patch reads it from dir
	if err != nil {
		return err
	}
	cmd := exec.Command("patch", "-p1", "--quiet", "--no-backup-if-mismatch", "--directory", dir, "--input", input)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%s does not apply to chapter %d: %v\n%s", m.Path, m.Chapter, err, out)
	}
	return nil
}

// mutantResult is one mutant's run.
type mutantResult struct {
	m *mutant
	// spec is its spec's report, if it ran.
	spec    types.SpecReport
	ran     bool
	verdict redVerdict
	took    time.Duration
	log     string
}

// mutantsInput is what runMutants needs beyond the suite runs' own.
type mutantsInput struct {
	run        runInput // the runs' ginkgo, suite, outDir, chapter, timeouts
	chapterDir string
	// dir holds each mutant's copy of its chapter, in chapterNN/name.
	dir  string
	only string
	show bool
	// builds, if set, holds the mutants' builds, made ahead.
	builds mutantBuilds
	// skipSpecs are specs whose mutants runMutants leaves out.
	skipSpecs map[string]bool
}

// runMutants runs each of a chapter's mutants against its spec, after
// running those specs against the chapter itself (unless green, a run of
// the whole suite against the chapter, already did), and prints a table.
func runMutants(in mutantsInput, green *runResult) error {
	ms, err := readMutants(in.chapterDir, in.run.chapter, in.only)
	if err != nil {
		return err
	}
	all := len(ms)
	ms = slices.DeleteFunc(ms, func(m *mutant) bool { return in.skipSpecs[m.Spec] })
	switch {
	case all == 0:
		fmt.Printf("=== Chapter %d has no mutants (chapters/%s/mutants/*.patch)\n", in.run.chapter, filepath.Base(in.chapterDir))
		return nil
	case len(ms) == 0:
		fmt.Printf("=== Chapter %d's %d mutants are all of its lesson specs: each ran above\n", in.run.chapter, all)
		return nil
	}
	if in.show {
		for _, m := range ms {
			fmt.Printf("=== Mutant %s of chapter %d (%s)\nBug: %s\nWhy: %s\nSpec: %s\nStep: %s\n\n%s\n", m.Name, m.Chapter, m.Path, m.Bug, m.Why, m.Spec, m.Step, m.Diff)
		}
	}
	var specs []string
	for _, m := range ms {
		if !slices.Contains(specs, m.Spec) {
			specs = append(specs, m.Spec)
		}
	}
	res := green
	if res == nil {
		fmt.Printf("=== Chapter %d's mutants: %d, caught by %d specs; first those specs against chapter %d itself (each must pass); Eventually waits %s\n",
			in.run.chapter, len(ms), len(specs), in.run.chapter, in.run.timeout)
		clean := in.run
		clean.operator, clean.focus, clean.label = in.run.chapter, specs, "mutant-specs"
		var err error
		if res, err = runSuite(clean); err != nil {
			return err
		}
	} else {
		fmt.Printf("=== Chapter %d's mutants: %d, caught by %d specs, which passed against chapter %d above\n", in.run.chapter, len(ms), len(specs), in.run.chapter)
	}
	if res.setupErr != "" || res.exitErr != nil {
		fmt.Printf("--- %s ends with:\n%s\n", res.log, proc.Tail(res.log, 150))
		return fmt.Errorf("the specs that catch chapter %d's mutants do not pass against chapter %d itself (see %s)", in.run.chapter, in.run.chapter, res.log)
	}
	for _, s := range specs {
		if _, ok := res.byText[s]; !ok {
			return fmt.Errorf("no spec of %s is %q (a mutant's Spec: must be a spec's full text)", in.run.suite, s)
		}
	}

	var results []mutantResult
	for _, m := range ms {
		r, err := runMutant(in, m)
		if err != nil {
			return err
		}
		results = append(results, r)
	}
	return mutantsVerdict(in.run.chapter, results)
}

// builtMutant is a mutant applied to a copy of its chapter and built.
type builtMutant struct {
	variant variantFlags
	err     error
}

// mutantBuilds holds each mutant's build, by name, made ahead of its run.
type mutantBuilds map[string]chan builtMutant

// buildAhead applies and builds ms, one after the other, in the
// background: a suite run mostly waits for the cluster, so the builds
// (niced) take the CPU it leaves, and each mutant's run finds its
// operator built. Each builds into a directory of its own.
func buildAhead(in mutantsInput, ms []*mutant) mutantBuilds {
	builds := mutantBuilds{}
	for _, m := range ms {
		builds[m.Name] = make(chan builtMutant, 1)
	}
	go func() {
		for _, m := range ms {
			builds[m.Name] <- buildMutant(in, m)
		}
	}()
	return builds
}

// buildMutant applies a mutant to a copy of its chapter and builds the
// operator with it (make build-variant), with the role from its markers.
func buildMutant(in mutantsInput, m *mutant) builtMutant {
	base := filepath.Join(in.dir, chapters.SuiteName(m.Chapter), m.Name)
	out, err := filepath.Abs(base + ".build")
	if err != nil {
		return builtMutant{err: err}
	}
	v := variantFlags{dir: base, bin: filepath.Join(out, "operator"), role: filepath.Join(out, "role.yaml"), out: out}
	if err := applyMutant(m, in.chapterDir, v.dir); err != nil {
		return builtMutant{err: err}
	}
	build := exec.Command("nice", "-n", "10", "make", "--no-print-directory", "build-variant", fmt.Sprintf("CHAPTER=%d", m.Chapter),
		"VARIANT="+v.dir, "VARIANT_OUT="+v.out, "VARIANT_BIN="+v.bin)
	if msg, err := build.CombinedOutput(); err != nil {
		return builtMutant{err: fmt.Errorf("building the mutant %s: %v\n%s", m.Name, err, msg)}
	}
	return builtMutant{variant: v}
}

// runMutant runs a mutant's spec against the operator built with it
// (by buildAhead, or here if it did not).
func runMutant(in mutantsInput, m *mutant) (mutantResult, error) {
	fmt.Printf("--- mutant %s: %s\n", m.Name, m.Bug)
	var b builtMutant
	if ch, ok := in.builds[m.Name]; ok {
		b = <-ch
	} else {
		b = buildMutant(in, m)
	}
	if b.err != nil {
		return mutantResult{}, b.err
	}
	start := time.Now()
	run := in.run
	run.operator, run.focus, run.label = m.Chapter, []string{m.Spec}, "mutant-"+m.Name
	// One failure kills the mutant, or shows it failed elsewhere: a spec
	// that collects its failures (the crash sweep) need not go on.
	run.failFast, run.expectFailure = true, true
	run.variant = b.variant
	res, err := runSuite(run)
	if err != nil {
		return mutantResult{}, err
	}
	s, ran := res.byText[m.Spec]
	r := mutantResult{m: m, spec: s, ran: ran, verdict: judgeMutant(s, ran, m.Step), took: time.Since(start), log: res.log}
	if res.setupErr != "" {
		r.verdict = redVerdict{state: "setup failed", problem: "the suite failed in BeforeSuite: " + why(res.setupErr)}
	}
	return r, nil
}

// proveByMutants proves a chapter's lesson against its mutants instead of
// the chapter before: each lesson spec of green (the whole suite's run
// against the chapter) must have a mutant, and each of its mutants must
// fail it after its lesson step, in the mutant's step. It is for a
// chapter whose lesson the chapter before cannot show as red for the
// right reason (the fault chapters: each has the package of the chapter
// before, which passes its lesson specs, or, before the first of them,
// fails them for want of a fault switch, not of a fix).
func proveByMutants(in mutantsInput, green *runResult) error {
	ms, err := readMutants(in.chapterDir, in.run.chapter, "")
	if err != nil {
		return err
	}
	chapter := in.run.chapter
	var problems []string
	if green.exitErr != nil {
		problems = append(problems, fmt.Sprintf("chapter %d's suite does not pass against chapter %d (see %s)", chapter, chapter, green.log))
	}
	if len(green.lessons) == 0 {
		problems = append(problems, chapters.SuiteDir(chapter)+" has no spec labelled lesson")
	}
	fmt.Printf("Chapter %d's lesson specs: against their mutants | against chapter %d | spec\n", chapter, chapter)
	for _, g := range green.lessons {
		var mine []*mutant
		for _, m := range ms {
			if m.Spec == g.FullText() {
				mine = append(mine, m)
			}
		}
		greenOK := g.State == types.SpecStatePassed
		if !greenOK {
			problems = append(problems, fmt.Sprintf("%q must pass against chapter %d, but it %s: %s", g.FullText(), chapter, g.State, why(g.Failure.Message)))
		} else if !hasDecidingCheck(g) {
			problems = append(problems, fmt.Sprintf("%q has no deciding check (framework.DecidingCheck): nothing says which assertion decides it", g.FullText()))
		}
		if len(mine) == 0 {
			fmt.Printf("  NO  no mutant | %-9s | %s\n", g.State.String(), g.FullText())
			problems = append(problems, fmt.Sprintf("%q has no mutant in %s/mutants that it must catch", g.FullText(), in.chapterDir))
			continue
		}
		for _, m := range mine {
			r, err := runMutant(in, m)
			if err != nil {
				return err
			}
			if r.verdict.ok {
				// At the mutant's step, and after the lesson's.
				if lesson := judgeRed(r.spec, r.ran); !lesson.ok {
					r.verdict.ok, r.verdict.problem = false, lesson.problem
				}
			}
			fmt.Printf("  %-3s %-9s | %-9s | %s\n", mark(r.verdict.ok && greenOK), "mutant "+m.Name, g.State.String(), g.FullText())
			if r.verdict.ok {
				fmt.Printf("        killed in step %q, at its check %q (%.0f s)\n", r.verdict.step, r.verdict.check, r.took.Seconds())
			} else {
				fmt.Printf("        %s (log: %s)\n", r.verdict.problem, r.log)
				problems = append(problems, fmt.Sprintf("%q must fail against the mutant %s after its lesson step, in step %q, but %s", g.FullText(), m.Name, m.Step, r.verdict.problem))
			}
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("chapter %d is not proven:\n  - %s", chapter, strings.Join(problems, "\n  - "))
	}
	fmt.Printf("=== Chapter %d proven: each of its %d lesson specs failed against its mutants and passed against chapter %d, with the rest of its suite\n",
		chapter, len(green.lessons), chapter)
	return nil
}

// judgeMutant counts a mutant killed when its spec failed in its own body
// in the step the mutant names (the last step before the failure), in one
// of its deciding checks, as judgeRed asks of a lesson: not outside them,
// not a panic, not an error that no check describes.
func judgeMutant(s types.SpecReport, ran bool, step string) redVerdict {
	v, failed := failedInBody(s, ran, "its spec")
	switch {
	case !ran:
		return v
	case !endedInFailure(s):
		v.problem = "it survived: " + v.problem
		return v
	}
	v.step = lastStep(s)
	if !failed {
		return v
	}
	if !sameStep(v.step, step) {
		v.problem = fmt.Sprintf("its spec failed in step %q, not in %q: %s", v.step, step, why(s.Failure.Message))
		return v
	}
	v.check, v.problem = theCheck(s, v.step)
	v.problem = strings.Replace(v.problem, "it ", "its spec ", 1)
	v.ok = v.problem == ""
	return v
}

// sameStep: a step as the report has it, and as a mutant names it, with
// or without LessonStep's mark; the mutant may give the step's beginning.
func sameStep(got, want string) bool {
	got, want = strings.TrimPrefix(got, chapters.LessonMark), strings.TrimPrefix(want, chapters.LessonMark)
	return strings.HasPrefix(got, strings.TrimSuffix(want, "…"))
}

// mutantsVerdict prints the table and fails unless every mutant was
// killed where it should be.
func mutantsVerdict(chapter int, results []mutantResult) error {
	fmt.Printf("Chapter %d's mutants | spec | caught in step | at check | s\n", chapter)
	var problems []string
	for _, r := range results {
		fmt.Printf("  %-3s %s | %s | %s | %s | %.0f\n", mark(r.verdict.ok), r.m.Name, r.m.Spec, r.verdict.step, r.verdict.check, r.took.Seconds())
		if !r.verdict.ok {
			fmt.Printf("        %s (log: %s)\n", r.verdict.problem, r.log)
			problems = append(problems, fmt.Sprintf("mutant %s: %s", r.m.Name, r.verdict.problem))
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("chapter %d's specs do not kill its mutants where they should:\n  - %s", chapter, strings.Join(problems, "\n  - "))
	}
	fmt.Printf("=== Chapter %d: every mutant (%d) killed by its spec, in its step\n", chapter, len(results))
	return nil
}

// focusOn is a --focus regular expression that matches these specs' full
// texts, as a whole: Ginkgo matches it against a text that may start with
// more than the spec's (a space), so the start is a space or the start.
func focusOn(specs []string) string {
	quoted := make([]string, len(specs))
	for i, s := range specs {
		quoted[i] = regexp.QuoteMeta(s)
	}
	return `(^|\s)(` + strings.Join(quoted, "|") + ")$"
}
