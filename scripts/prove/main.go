// Command prove shows that a chapter's lesson specs prove its lesson: each
// spec labelled "lesson" in tests/chapterNN must fail against chapter N-1's
// operator (chapter 0 is no operator, for chapter 1), or against a variant
// of chapter N that breaks the lesson (--variant), and pass against
// chapter N's, where the whole suite must pass too. A failure counts as
// red only when it happened in the spec's body after its lesson step
// (framework.LessonStep) and after its deciding check
// (framework.DecidingCheck), in an assertion that says what it checks:
// what comes before the lesson step is setup, and a spec that fails in its
// setup proves nothing; nor does a panic, or an error of kubectl, the
// network or the cluster that no check describes. It runs the suite twice with the
// Ginkgo CLI, reads Ginkgo's JSON reports and prints, for each lesson
// spec, both outcomes and the step it failed in. `make prove-chapter N`
// runs it.
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
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

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}

// options are prove's flags but the chapter's.
type options struct {
	ginkgo, outDir, mutantsDir string
	timeout, suiteTO           string
	procs                      int
	variant                    variantFlags
	mutants, show, withMutants bool
	only                       string
	specFile, specTarget       string
	lessonsOnly, tooLow        bool
	fakeClient, check          bool
}

func run() error {
	var (
		o   options
		row chapters.Chapter
		rng string
	)
	flag.Var(&row, "chapter", "the chapter whose lesson to prove")
	flag.StringVar(&rng, "range", "", "prove chapters FROM-TO in turn (make prove-range), each as --chapter does, stopping at the first that fails")
	envtestRung := flag.Bool("envtest-rung", false, "on an API server alone (make test-envtest): prove with --lessons-only the chapters whose lessons need no more (APIServerRung in the table of chapters), then --too-low and --fake-client-misses those that have such a spec; each is run, whatever the others did")
	flag.StringVar(&o.ginkgo, "ginkgo", "", "the Ginkgo CLI")
	flag.StringVar(&o.outDir, "output-dir", "_output/prove", "where the runs' logs and JSON reports go")
	flag.StringVar(&o.mutantsDir, "mutants-dir", "_output/mutants", "where the mutants' copies of their chapter go")
	flag.StringVar(&o.timeout, "eventually-timeout", "", "Eventually's timeout in both runs (default: 20s on the local cluster, 90s elsewhere)")
	flag.StringVar(&o.suiteTO, "suite-timeout", "20m", "Ginkgo's timeout for one run")
	flag.IntVar(&o.procs, "procs", 1, "how many processes run the specs that are not Serial (Ginkgo's --procs)")
	flag.StringVar(&o.variant.dir, "variant", "", "prove the lesson against this variant of chapter N (make build-variant builds it) in place of chapter N-1")
	flag.StringVar(&o.variant.bin, "variant-bin", "", "with --variant: the operator built with it")
	flag.StringVar(&o.variant.role, "variant-role", "", "with --variant: the role generated from its markers")
	flag.StringVar(&o.variant.out, "variant-out", "", "with --variant: where its overlay was written, for the suites that build an image (make docker-build's VARIANT_OUT; default the Makefile's)")
	flag.BoolVar(&o.mutants, "mutants", false, "run chapter N's mutants (chapters/NN-slug/mutants/*.patch) instead, each against its spec; make build-variant builds each, ahead of its run, under --mutants-dir")
	flag.StringVar(&o.only, "mutant", "", "with --mutants: only this one")
	flag.BoolVar(&o.show, "show", false, "with --mutants: print each mutant's change first")
	flag.BoolVar(&o.withMutants, "with-mutants", false, "after proving the lesson, run the chapter's mutants, each against its spec (the whole suite's run against the chapter shows that those specs pass)")
	flag.StringVar(&o.specFile, "spec-exercise", "", "judge this file, a learner's spec of chapter N (make check-spec): its specs labelled exercise must fail against chapter N-1 after their lesson step, pass against chapter N, and kill the chapter's mutants of --spec-target")
	flag.StringVar(&o.specTarget, "spec-target", "", "with --spec-exercise: the full text of the chapter's spec that the learner's stands for (its mutants are the ones to kill)")
	flag.BoolVar(&o.lessonsOnly, "lessons-only", false, "prove the lesson with the lesson specs alone: red against chapter N-1, green against chapter N, without the rest of the suite (make test-envtest, on an API server alone, where the rest needs a cluster)")
	flag.BoolVar(&o.tooLow, "too-low", false, "run chapter N's spec that needs more than an API server (TooLow in the table of chapters) against chapter N itself, on the cluster that is up: it must fail at its check, for what the cluster lacks (make test-envtest)")
	flag.BoolVar(&o.fakeClient, "fake-client-misses", false, "run chapter N's unit tests against its mutant that a fake client cannot see (FakeClientMisses in the table of chapters), where they must pass, then its spec on the cluster that is up, which must kill it (make test-envtest)")
	flag.BoolVar(&o.check, "check", false, "with --variant: judge the variant as chapter N itself (make check, of an exercise): its lesson specs must pass, then the rest of its suite; one line per spec")
	flag.Parse()
	picked := 0
	for _, set := range []bool{row.Number != 0, rng != "", *envtestRung} {
		if set {
			picked++
		}
	}
	usage := errors.New("usage: prove --chapter N --ginkgo PATH [--eventually-timeout D] [--procs N] [--variant DIR --variant-bin PATH --variant-role PATH [--check]] [--with-mutants | --lessons-only]\n       prove --chapter N --ginkgo PATH --mutants [--mutant NAME] [--show]\n       prove --chapter N --ginkgo PATH --too-low | --fake-client-misses\n       prove --range FROM-TO --ginkgo PATH [--with-mutants]\n       prove --envtest-rung --ginkgo PATH")
	if picked != 1 || o.ginkgo == "" || o.procs < 1 || flag.NArg() > 0 ||
		o.variant.dir != "" && (o.variant.bin == "" || o.variant.role == "") || o.check && o.variant.dir == "" ||
		(o.specFile == "") != (o.specTarget == "") {
		return usage
	}
	if o.timeout == "" {
		o.timeout = "90s"
		if c := os.Getenv("CLUSTER"); c == "local" || c == "envtest" {
			// Pods on the hollow node end in about a second, and on an API
			// server alone at once; a lesson spec that fails against the
			// previous chapter waits this long.
			o.timeout = "20s"
		}
	}
	mutantNamed := false
	flag.Visit(func(f *flag.Flag) { mutantNamed = mutantNamed || f.Name == "mutant" })
	if mutantNamed && o.only == "" {
		ms, err := readMutants(row.Dir(), row.Number, "")
		if err != nil {
			return err
		}
		var names []string
		for _, m := range ms {
			names = append(names, m.Name)
		}
		return fmt.Errorf("name the mutant: make mutant %d NAME, one of: %s", row.Number, strings.Join(names, ", "))
	}
	switch {
	case rng != "":
		from, to, err := chapters.ParseRange(rng)
		if err != nil {
			return fmt.Errorf("--range: %w", err)
		}
		for _, c := range chapters.All[from.Number-1 : to.Number] {
			if err := prove(o, c); err != nil {
				return err
			}
		}
		return nil
	case *envtestRung:
		return proveEnvtestRung(o)
	}
	return prove(o, row)
}

// proveEnvtestRung proves what the table says an API server alone can
// (make test-envtest), each proof whatever the others did.
func proveEnvtestRung(o options) error {
	var failed []string
	each := func(what string, has func(chapters.Chapter) bool, set func(*options)) {
		for _, n := range chapters.Where(has) {
			oo := o
			set(&oo)
			if err := prove(oo, chapters.All[n-1]); err != nil {
				fmt.Fprintln(os.Stderr, "error:", err)
				failed = append(failed, fmt.Sprintf("chapter %d %s", n, what))
			}
		}
	}
	each("(its lesson specs)", func(c chapters.Chapter) bool { return c.APIServerRung }, func(o *options) { o.lessonsOnly = true })
	each("(the spec that needs more)", func(c chapters.Chapter) bool { return c.TooLow != nil }, func(o *options) { o.tooLow = true })
	each("(what the fake client misses)", func(c chapters.Chapter) bool { return c.FakeClientMisses != nil }, func(o *options) { o.fakeClient = true })
	if len(failed) > 0 {
		return fmt.Errorf("the API server rung failed: %s", strings.Join(failed, ", "))
	}
	return nil
}

// prove proves chapter row's lesson as the options say.
func prove(o options, row chapters.Chapter) error {
	chapter := row.Number
	suite := chapters.SuiteDir(chapter)
	if err := os.MkdirAll(o.outDir, 0o755); err != nil {
		return err
	}
	// How the chapter is proven, as the table of chapters says. A chapter
	// that rewrites an earlier one has no lesson spec (none can fail
	// against the chapter it rewrites): its proof is its whole suite
	// passing against its own operator, then its mutants; judged as
	// itself (--check), the same. A chapter proven by its mutants has its
	// lesson specs proven red against its own mutants of them (each
	// lesson spec must have one) in place of chapter N-1; a spec exercise
	// of it is judged the same way. A variant that stands in for chapter
	// N-1 is neither: the lesson is proven against it.
	noLesson := row.Rewrites != 0 && (o.variant.dir == "" || o.check)
	byMutants := row.ProvedByMutants && o.variant.dir == ""
	// Every run below runs the same suite: compiled once, not once a run
	// (a link of some 12 s of CPU each, dozens of times with the mutants).
	var overlay string
	if o.specFile != "" {
		// What no run can make a proof, refused before any.
		problems, err := vetSpec(o.specFile, suite, filepath.Join(filepath.Dir(suite), "framework"))
		if err != nil {
			return err
		}
		if len(problems) > 0 {
			return fmt.Errorf("your spec %s cannot prove chapter %d's lesson as it is written:\n  - %s", o.specFile, chapter, strings.Join(problems, "\n  - "))
		}
		if overlay, err = specOverlay(suite, o.specFile, o.outDir); err != nil {
			return err
		}
	}
	compiled, err := compileSuite(o.ginkgo, suite, overlay, o.specFile)
	if err != nil {
		return err
	}
	defer os.Remove(compiled)
	start := time.Now()
	defer func() { fmt.Printf("=== chapter %d: %s of runs\n", chapter, time.Since(start).Round(time.Second)) }()
	base := runInput{ginkgo: o.ginkgo, suite: compiled, outDir: o.outDir, chapter: chapter,
		timeout: o.timeout, suiteTimeout: o.suiteTO, procs: o.procs}
	mutantsIn := mutantsInput{run: base, chapterDir: row.Dir(), only: o.only, show: o.show, dir: o.mutantsDir}
	if (o.mutants || o.withMutants || byMutants) && o.specFile == "" {
		// Built while the runs before theirs wait for the cluster (a spec
		// exercise builds the mutants of its target only).
		ms, err := readMutants(mutantsIn.chapterDir, chapter, o.only)
		if err != nil {
			return err
		}
		mutantsIn.builds = buildAhead(mutantsIn, ms)
	}
	if o.mutants {
		return runMutants(mutantsIn, nil)
	}
	if o.tooLow {
		return proveTooLow(base, row)
	}
	if o.fakeClient {
		return proveFakeClientMisses(mutantsIn, row)
	}
	if o.check {
		return checkVariant(base, o.variant, noLesson, o.lessonsOnly)
	}
	if o.specFile != "" {
		return checkSpecExercise(mutantsIn, o.specFile, o.specTarget, byMutants)
	}

	var green *runResult
	if noLesson {
		fmt.Printf("=== Proving chapter %d, which has no lesson spec (it rewrites an earlier chapter): its whole suite against its own operator (each spec must pass), then its mutants; Eventually waits %s\n",
			chapter, o.timeout)
		in := base
		in.operator = chapter
		var err error
		if green, err = runSuite(in); err != nil {
			return err
		}
		if err := noLessonVerdict(row, green); err != nil {
			return err
		}
	} else if byMutants {
		fmt.Printf("=== Proving chapter %d: its whole suite against its own operator (each spec must pass), then each lesson spec against the chapter's mutants of it (each must fail); Eventually waits %s\n",
			chapter, o.timeout)
		in := base
		in.operator = chapter
		var err error
		if green, err = runSuite(in); err != nil {
			return err
		}
		if err := proveByMutants(mutantsIn, green); err != nil {
			return err
		}
	} else {
		redIn := base
		redIn.operator, redIn.lessonsOnly, redIn.expectFailure = chapter-1, true, true
		if o.variant.dir != "" {
			redIn.operator, redIn.variant = chapter, o.variant
		}
		greenRun := "its whole suite"
		if o.lessonsOnly {
			greenRun = "its lesson specs"
		}
		fmt.Printf("=== Proving chapter %d: its lesson specs against %s (each must fail), then %s against its own (each must pass); Eventually waits %s\n",
			chapter, redIn.against(), greenRun, o.timeout)
		red, err := runSuite(redIn)
		if err != nil {
			return err
		}
		in := base
		in.operator, in.lessonsOnly = chapter, o.lessonsOnly
		if green, err = runSuite(in); err != nil {
			return err
		}
		if err := verdict(chapter, red, green); err != nil {
			return err
		}
	}
	if o.withMutants {
		if byMutants {
			// Those of the lesson specs ran above.
			mutantsIn.skipSpecs = map[string]bool{}
			for _, l := range green.lessons {
				mutantsIn.skipSpecs[l.FullText()] = true
			}
		}
		return runMutants(mutantsIn, green)
	}
	return nil
}

// compileSuite compiles the suite in directory suite into an executable
// in that directory, where Ginkgo runs it as it runs a suite it compiled
// itself (the suites find the repository from their working directory),
// under a name of its own, so that a `ginkgo` run meanwhile does not
// replace it.
//
// overlay, if set, is a go build overlay that adds a learner's spec file
// (specFile) to the suite; the compiler's errors then name that file.
func compileSuite(ginkgo, suite, overlay, specFile string) (string, error) {
	out, err := filepath.Abs(filepath.Join(suite, filepath.Base(suite)+"-prove.test"))
	if err != nil {
		return "", err
	}
	fmt.Printf("--- compiling %s once for its runs\n", suite)
	// --vet=off: make vet vets the suites; go test's own vet, with other
	// settings, vetted every dependency again (3 CPU-minutes of a cold CI).
	cmd := exec.Command(ginkgo, "build", "--tags=e2e", "--vet=off", "-o", out, "./"+suite)
	if overlay != "" {
		// The Ginkgo CLI has no overlay flag; go reads it from GOFLAGS.
		cmd.Env = append(os.Environ(), "GOFLAGS=-overlay="+overlay)
	}
	if msg, err := cmd.CombinedOutput(); err != nil {
		if specFile != "" {
			// go names the file from the suite's directory.
			msg = []byte(strings.ReplaceAll(string(msg), "../../"+filepath.ToSlash(specFile), specFile))
			return "", fmt.Errorf("your spec does not compile with the chapter's suite (%s): %v\n%s", suite, err, msg)
		}
		return "", fmt.Errorf("compiling %s: %v\n%s", suite, err, msg)
	}
	return out, nil
}

type runInput struct {
	ginkgo, suite, outDir string
	chapter, operator     int
	// variant, if set, stands in for chapter operator's package.
	variant     variantFlags
	lessonsOnly bool
	// labelFilter, if set, selects the specs to run (Ginkgo's
	// --label-filter), as lessonsOnly does the lesson specs.
	labelFilter string
	// focus, if set, are the full texts of the only specs to run; label
	// then names the run's files.
	focus                 []string
	label                 string
	timeout, suiteTimeout string
	procs                 int
	// failFast: the run's spec may stop at its first failure (Ginkgo's
	// --fail-fast; the crash sweep reads it), for a run whose verdict
	// one failure decides.
	failFast bool
	// expectFailure: the run's specs are meant to fail (a red run, a
	// mutant's), so the suite skips kubectl's dumps of what a failed spec
	// saw (E2E_EXPECT_FAILURE): CPU that a proof does not need.
	expectFailure bool
}

// variantFlags name a variant of a chapter: its directory, the operator
// built with it and the role generated from its markers; out, if set, is
// where make build-variant wrote them (its VARIANT_OUT, whose overlay
// make docker-build reads).
type variantFlags struct{ dir, bin, role, out string }

// against names the operator a run is against, for the reader.
func (in runInput) against() string {
	if in.variant.dir != "" {
		return fmt.Sprintf("the variant %s of chapter %d", in.variant.dir, in.operator)
	}
	return fmt.Sprintf("chapter %d", in.operator)
}

// name is the base name of a run's log and report.
func (in runInput) name() string {
	if in.label != "" {
		return chapters.SuiteName(in.chapter) + "-" + in.label
	}
	if in.variant.dir != "" {
		return chapters.SuiteName(in.chapter) + "-against-variant"
	}
	return chapters.SuiteName(in.chapter) + "-against-" + chapters.SuiteName(in.operator)
}

type runResult struct {
	runInput
	log      string
	exitErr  error
	lessons  []types.SpecReport
	setupErr string
	// byText holds every spec that ran, by its full text; specs, the
	// same in the order they ran.
	byText map[string]types.SpecReport
	specs  []types.SpecReport
}

func runSuite(in runInput) (*runResult, error) {
	name := in.name()
	res := &runResult{runInput: in, log: filepath.Join(in.outDir, name+".log")}
	procs := in.procs
	if len(in.focus) == 1 {
		// One spec: the other processes would only start and wait, on
		// cores that another lane may be using.
		procs = 1
	}
	args := []string{"-v", "--no-color", fmt.Sprintf("--procs=%d", procs), "--timeout=" + in.suiteTimeout,
		"--json-report=" + name + ".json", "--output-dir=" + in.outDir}
	if in.failFast {
		args = append(args, "--fail-fast")
	}
	what := "the whole suite"
	switch {
	case len(in.focus) > 0:
		args = append(args, "--focus="+focusOn(in.focus))
		what = "its spec"
		if len(in.focus) > 1 {
			what = fmt.Sprintf("those %d specs", len(in.focus))
		}
	case in.lessonsOnly:
		args = append(args, "--label-filter="+chapters.LabelLesson, "--fail-on-empty")
		what = "the lesson specs"
	case in.labelFilter != "":
		args = append(args, "--label-filter="+in.labelFilter)
		what = fmt.Sprintf("the specs %s selects", in.labelFilter)
	}
	args = append(args, in.suite)
	fmt.Printf("--- %s against %s (OPERATOR_CHAPTER=%d; log: %s)\n", what, in.against(), in.operator, res.log)
	logf, err := os.Create(res.log)
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	cmd := exec.Command(in.ginkgo, args...)
	// A variant named in the environment applies to the variant's run
	// only.
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool {
		return strings.HasPrefix(kv, "VARIANT=") || strings.HasPrefix(kv, "VARIANT_OUT=") || strings.HasPrefix(kv, "OPERATOR_ROLE=") ||
			strings.HasPrefix(kv, "OPERATOR_FAULTS_BIN=")
	})
	cmd.Env = append(env, chapters.EnvChapter+"="+chapters.OperatorEnv(in.operator), chapters.EnvEventuallyTimeout+"="+in.timeout)
	if in.expectFailure {
		cmd.Env = append(cmd.Env, chapters.EnvExpectFailure+"=true")
	}
	if in.variant.dir != "" {
		// The variant's operator, its test build that injects faults (make
		// build-variant makes it for the chapters whose suites run one) and
		// its role; VARIANT for the suite's make install (the variant's
		// crd/, if any) and make docker-build.
		cmd.Env = append(cmd.Env, chapters.EnvOperatorBin+"="+in.variant.bin, chapters.EnvFaultsBin+"="+in.variant.bin+"-faults",
			chapters.EnvOperatorRole+"="+in.variant.role, "VARIANT="+in.variant.dir)
		if in.variant.out != "" {
			cmd.Env = append(cmd.Env, "VARIANT_OUT="+in.variant.out)
		}
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	res.exitErr = cmd.Run()
	printSummary(res.log)

	data, err := os.ReadFile(filepath.Join(in.outDir, name+".json"))
	if err != nil {
		return nil, fmt.Errorf("ginkgo wrote no report (%v); its log %s ends with:\n%s", err, res.log, proc.Tail(res.log, 40))
	}
	var reports []types.Report
	if err := json.Unmarshal(data, &reports); err != nil || len(reports) != 1 {
		return nil, fmt.Errorf("reading %s: want one suite report (%v)", name+".json", err)
	}
	res.read(reports[0])
	return res, nil
}

// read takes from a suite's report its lesson specs and, if BeforeSuite
// failed, why.
func (res *runResult) read(report types.Report) {
	res.byText = map[string]types.SpecReport{}
	for _, s := range report.SpecReports {
		if s.LeafNodeType == types.NodeTypeIt && s.State != types.SpecStateSkipped {
			res.byText[s.FullText()] = s
			res.specs = append(res.specs, s)
		}
		switch {
		case s.LeafNodeType.Is(types.NodeTypeBeforeSuite | types.NodeTypeSynchronizedBeforeSuite):
			if s.State != types.SpecStatePassed {
				res.setupErr = s.Failure.Message
			}
		case s.LeafNodeType == types.NodeTypeIt && slices.Contains(s.Labels(), chapters.LabelLesson):
			res.lessons = append(res.lessons, s)
		}
	}
}

// summaryLine matches Ginkgo's closing lines: "Ran 4 of 9 Specs in ...",
// "FAIL! -- 0 Passed | 4 Failed ..." or "SUCCESS! -- ...".
var summaryLine = regexp.MustCompile(`^(Ran \d+ of \d+ Specs|SUCCESS!|FAIL!)`)

func printSummary(log string) {
	f, err := os.Open(log)
	if err != nil {
		return
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if summaryLine.MatchString(sc.Text()) {
			fmt.Println("    " + sc.Text())
		}
	}
}

// noLessonVerdict judges the run of a chapter without lesson specs (a
// rewrite, in the table of chapters) against its own operator: every spec passed, and none is
// labelled lesson, since no run would show it red.
func noLessonVerdict(row chapters.Chapter, green *runResult) error {
	chapter := row.Number
	var problems []string
	if green.setupErr != "" {
		problems = append(problems, fmt.Sprintf("the run failed in BeforeSuite: %s", why(green.setupErr)))
	}
	if green.exitErr != nil {
		problems = append(problems, fmt.Sprintf("chapter %d's suite does not pass against chapter %d (see %s)", chapter, chapter, green.log))
	}
	for _, l := range green.lessons {
		problems = append(problems, fmt.Sprintf("%q is labelled lesson, but chapter %d has none: it rewrites chapter %d (chapters/chapters.go)", l.FullText(), chapter, row.Rewrites))
	}
	if len(problems) > 0 {
		return fmt.Errorf("chapter %d is not proven:\n  - %s", chapter, strings.Join(problems, "\n  - "))
	}
	fmt.Printf("=== chapter %d's suite passes against its own operator: %d specs\n", chapter, len(green.specs))
	return nil
}

// verdict prints one line per lesson spec and fails unless every one
// failed in the red run and passed in the green one.
func verdict(chapter int, red, green *runResult) error {
	var problems []string
	if red.setupErr != "" {
		problems = append(problems, fmt.Sprintf("the run against %s failed in BeforeSuite, so its failures prove nothing: %s", red.against(), why(red.setupErr)))
	}
	if len(green.lessons) == 0 {
		problems = append(problems, chapters.SuiteDir(chapter)+" has no spec labelled lesson")
	}
	if green.exitErr != nil {
		problems = append(problems, fmt.Sprintf("chapter %d's suite does not pass against chapter %d (see %s)", chapter, chapter, green.log))
	}
	redByName := map[string]types.SpecReport{}
	for _, s := range red.lessons {
		redByName[s.FullText()] = s
	}

	fmt.Printf("Chapter %d's lesson specs: against %s | against chapter %d | spec\n", chapter, red.against(), green.operator)
	for _, g := range green.lessons {
		r, ran := redByName[g.FullText()]
		rv := judgeRed(r, ran)
		greenOK := g.State == types.SpecStatePassed
		_, greenStepped := lessonStep(g)
		greenChecked := hasDecidingCheck(g)
		fmt.Printf("  %-3s %-9s | %-9s | %s\n", mark(rv.ok && greenOK && greenStepped && greenChecked), rv.state, g.State.String(), g.FullText())
		if rv.ok {
			fmt.Printf("        failed against %s in step %q, at its check %q: %s\n", red.against(), rv.step, rv.check, why(r.Failure.Message))
		} else {
			fmt.Printf("        not red against %s: %s\n", red.against(), rv.problem)
			problems = append(problems, fmt.Sprintf("%q must fail against %s after its lesson step, but %s", g.FullText(), red.against(), rv.problem))
		}
		if !greenOK {
			problems = append(problems, fmt.Sprintf("%q must pass against chapter %d, but it %s: %s", g.FullText(), chapter, g.State, why(g.Failure.Message)))
		} else if !greenStepped {
			problems = append(problems, fmt.Sprintf("%q has no lesson step (framework.LessonStep): nothing says where its setup ends", g.FullText()))
		} else if !greenChecked {
			problems = append(problems, fmt.Sprintf("%q has no deciding check (framework.DecidingCheck): nothing says which assertion decides it", g.FullText()))
		}
	}
	if len(problems) > 0 {
		if red.setupErr != "" {
			fmt.Printf("--- %s ends with:\n%s\n", red.log, proc.Tail(red.log, 150))
		}
		if green.exitErr != nil {
			fmt.Printf("--- %s ends with:\n%s\n", green.log, proc.Tail(green.log, 150))
		}
		return fmt.Errorf("chapter %d is not proven:\n  - %s", chapter, strings.Join(problems, "\n  - "))
	}
	specs := "specs"
	if len(green.lessons) == 1 {
		specs = "spec"
	}
	rest := ", with the rest of its suite"
	if green.lessonsOnly {
		rest = ""
	}
	fmt.Printf("=== Chapter %d proven: %d lesson %s failed against %s and passed against chapter %d%s\n",
		chapter, len(green.lessons), specs, red.against(), chapter, rest)
	return nil
}

// redVerdict is what a lesson spec's run against the previous chapter
// proves.
type redVerdict struct {
	ok bool
	// state is the spec's state, or "did not run".
	state string
	// step is the step the spec failed in, when it failed after its lesson
	// step: the last step (By or LessonStep) before the failure.
	step string
	// check is the deciding check the spec failed in, when it did.
	check string
	// problem says why the run is not red, when it is not.
	problem string
}

// judgeRed counts a lesson spec's run against the previous chapter as red
// only when the spec failed in its own body (not in a BeforeEach, an
// AfterEach or a cleanup) after its lesson step, and the failure is one
// of its deciding checks'. A failure before the step is setup that the
// previous chapter could not pass: it proves nothing about the lesson;
// one outside its checks is not the verdict the spec says it gives.
func judgeRed(s types.SpecReport, ran bool) redVerdict {
	v, after := failedAfterLessonStep(s, ran)
	if !after {
		return v
	}
	v.check, v.problem = theCheck(s, v.step)
	v.ok = v.problem == ""
	return v
}

// theCheck returns the deciding check a spec's failure is, or "" and why
// the failure is not a check's verdict: it is none of the spec's checks',
// or notTheCheck says why it is not a verdict.
func theCheck(s types.SpecReport, step string) (check, problem string) {
	f, ok := failedCheck(s)
	switch {
	case ok:
		if problem := notTheCheck(s); problem != "" {
			return "", problem
		}
		return f.Check, ""
	case !hasDecidingCheck(s):
		return "", fmt.Sprintf("it failed in step %q with no deciding check (framework.DecidingCheck): nothing says which assertion decides it: %s", step, why(s.Failure.Message))
	default:
		return "", fmt.Sprintf("it failed in step %q, in an assertion that is not in a deciding check (outside framework.DecidingCheck): %s", step, why(s.Failure.Message))
	}
}

// failedAfterLessonStep reports whether the spec failed in its own body
// after its lesson step, with the step it failed in; if not, v says why.
func failedAfterLessonStep(s types.SpecReport, ran bool) (v redVerdict, after bool) {
	v, failed := failedInBody(s, ran, "it")
	if !failed {
		return v, false
	}
	if mark, ok := lessonStep(s); !ok || mark.TimelineLocation.Order > s.Failure.TimelineLocation.Order {
		v.problem = fmt.Sprintf("it failed before its lesson step, in setup (step %q): %s", lastStep(s), why(s.Failure.Message))
		return v, false
	}
	v.step = lastStep(s)
	return v, true
}

// notTheCheck says why a failure is not the verdict of the check it
// happened in, or "" if it is: a panic is a bug of the spec or of the
// framework; a spec that ran out of its own time did not finish its
// check; an error that no description explains (Gomega's "Unexpected
// error:" of a bare Expect(err).NotTo(HaveOccurred()), or Succeed's) is
// kubectl's, the network's or the cluster's, as is one that says the API
// server could not be reached or answer. A check that fails says what it
// checked.
func notTheCheck(s types.SpecReport) string {
	msg := s.Failure.Message
	switch {
	case s.State.Is(types.SpecStatePanicked):
		return "it panicked, which is a bug of the spec or of the framework, not a verdict: " + why(msg)
	case s.State.Is(types.SpecStateTimedout):
		return "it ran out of its time before its check could decide: " + why(msg)
	case undescribedError(msg):
		return "it failed with an error that no check describes (of kubectl, the network or the cluster): " + why(msg)
	}
	if said := apiServerUnreachable(msg); said != "" {
		return fmt.Sprintf("it failed because the API server did not answer (%s): %s", said, why(msg))
	}
	return ""
}

// undescribedError: the failure's first words, after Gomega's timing and
// "The function passed to" lines, are its message for an error that an
// assertion without a description did not expect.
func undescribedError(msg string) bool {
	first := firstLine(msg)
	return strings.HasPrefix(first, "Unexpected error:") || strings.HasPrefix(first, "Expected success, but got an error:")
}

// apiServerUnreachable returns what, in a failure, says that the API
// server could not be reached or could not answer, or "".
func apiServerUnreachable(msg string) string {
	for _, s := range []string{
		"Unable to connect to the server",
		"the server is currently unable to handle the request",
		"the server was unable to return a response in the time allotted",
		"etcdserver: ",
		"http2: client connection lost",
	} {
		if strings.Contains(msg, s) {
			return s
		}
	}
	return ""
}

// The lines Gomega writes before a failure's own words: how long an
// Eventually or Consistently ran, and where the function it polled failed.
var (
	gomegaTiming   = regexp.MustCompile(`^(Timed out|Failed|Told to stop trying) after [0-9.]+s\.$`)
	gomegaFunction = regexp.MustCompile(`^The function passed to \w+ failed at .* with:$`)
)

// firstLine is a failure's first line that is not Gomega's preamble.
func firstLine(msg string) string {
	for _, l := range strings.Split(msg, "\n") {
		if l = strings.TrimSpace(l); l != "" && !gomegaTiming.MatchString(l) && !gomegaFunction.MatchString(l) {
			return l
		}
	}
	return ""
}

// failedInBody is what a run that must fail shows first: the spec ran,
// and failed, panicked or timed out in its body, not in a node around it.
// If it did not, failed is false and v.problem says why, naming the spec
// as who ("it", "its spec").
func failedInBody(s types.SpecReport, ran bool, who string) (v redVerdict, failed bool) {
	if !ran {
		return redVerdict{state: "did not run", problem: who + " did not run"}, false
	}
	v = redVerdict{state: s.State.String()}
	if !endedInFailure(s) {
		v.problem = who + " " + s.State.String()
		return v, false
	}
	if s.Failure.FailureNodeContext != types.FailureNodeIsLeafNode {
		v.problem = fmt.Sprintf("%s failed in its %s, not in its body: %s", who, s.Failure.FailureNodeType, why(s.Failure.Message))
		return v, false
	}
	return v, true
}

// endedInFailure: the spec failed, panicked or timed out.
func endedInFailure(s types.SpecReport) bool {
	return s.State.Is(types.SpecStateFailed | types.SpecStatePanicked | types.SpecStateTimedout)
}

// hasDecidingCheck: the spec ran a deciding check (framework.DecidingCheck).
func hasDecidingCheck(s types.SpecReport) bool {
	for _, e := range s.ReportEntries {
		if e.Name == chapters.DecidingCheckEntry {
			return true
		}
	}
	return false
}

// failedCheck returns the deciding check whose assertion is the spec's
// failure: the one that recorded the failure's message as it failed.
func failedCheck(s types.SpecReport) (chapters.CheckFailure, bool) {
	for _, e := range s.ReportEntries {
		if e.Name != chapters.CheckFailedEntry {
			continue
		}
		var f chapters.CheckFailure
		if err := json.Unmarshal([]byte(e.Value.AsJSON), &f); err == nil && f.Message == s.Failure.Message {
			return f, true
		}
	}
	return chapters.CheckFailure{}, false
}

// lessonStep finds the step that framework.LessonStep wrote.
func lessonStep(s types.SpecReport) (types.SpecEvent, bool) {
	for _, ev := range s.SpecEvents {
		if ev.SpecEventType == types.SpecEventByStart && strings.HasPrefix(ev.Message, chapters.LessonMark) {
			return ev, true
		}
	}
	return types.SpecEvent{}, false
}

// lastStep is the last step that started before the spec's failure, or
// "(before any step)".
func lastStep(s types.SpecReport) string {
	step := "(before any step)"
	for _, ev := range s.SpecEvents {
		if ev.SpecEventType == types.SpecEventByStart && ev.TimelineLocation.Order < s.Failure.TimelineLocation.Order {
			step = ev.Message
		}
	}
	return step
}

func mark(ok bool) string {
	if ok {
		return "ok"
	}
	return "NO"
}

// why shortens a failure message to what a reader needs: Gomega's
// "Timed out after 30s." or "Failed after 0.2s." is followed by the
// spec's own description, after "The function passed to Consistently
// failed at FILE:LINE with:" when a function's assertion failed.
func why(msg string) string {
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(msg), "\n") {
		l = strings.TrimSpace(l)
		if l == "" || gomegaFunction.MatchString(l) {
			continue
		}
		lines = append(lines, l)
		if len(lines) == 2 || !gomegaTiming.MatchString(lines[0]) {
			break
		}
	}
	return strings.Join(lines, " ")
}
