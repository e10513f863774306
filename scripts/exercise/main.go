// Command exercise runs the course's exercises: a learner writes chapter
// N's lesson into a copy of chapter N-1's package, and the proofs of
// chapter N judge it. `make exercise N` starts one, `make check` judges it,
// `make hint` and `make solution` help, `make progress` says where the
// learner is.
//
//   - start: copies chapter N-1's Go files (not its tests) into the
//     workspace, _exercise/NN-slug, applies the exercise's start.patch
//     (stubs of what chapter N's tests call and chapter N-1 lacks), and
//     records what it wrote, so that a second start never overwrites the
//     learner's changes unasked.
//   - check: builds the workspace (go's errors name its files); runs
//     chapter N's lesson unit tests (the tests that chapter N adds or
//     changes) against it, with a go build overlay that puts the
//     workspace's files in place of the chapter's (scripts/variant); then,
//     on the cluster that is up, builds the operator with the workspace
//     and runs chapter N's suite against it, lesson specs first (prove
//     --check).
//   - hint: the next of the chapter's hints (exercise/HINTS.md, one per
//     "## " section), never its code.
//   - solution: the diff from the workspace to chapter N's package.
//   - progress: a line per exercise: hints taken, solution seen, the
//     last check.
//
// The workspace and the progress file live in _exercise/, which git
// ignores and `go ... ./...` skips (a directory whose name starts with _).
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"example.com/redis-operator/chapters"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}

const usage = `usage: exercise COMMAND [flags]
  start      --chapter N [--force]   start chapter N's exercise in _exercise/
             [--continue]            from your own chapter N-1, once make check passed it
  check      [--chapter N] --controller-gen PATH --ginkgo PATH --prove PATH --cluster PATH ...
  hint       [--chapter N]           the next hint
  solution   [--chapter N]           the diff from your workspace to the chapter
  start-spec --chapter N [--force]   start chapter N's spec exercise: a skeleton in _exercise/spec-NN-slug/
  check-spec [--chapter N] (check's flags)  judge your spec: red, green, mutants killed
  hint-spec  [--chapter N]           the spec exercise's next hint
  progress                           where you are
  bench      --chapter N [--rounds R] --dir SCRATCH (check's flags)  time make check of the chapter's own package
(with no --chapter: the exercise started last)`

func run(args []string) error {
	if len(args) == 0 {
		return errors.New(usage)
	}
	cmd := args[0]
	fs := flag.NewFlagSet(cmd, flag.ContinueOnError)
	var (
		chapterArg = fs.String("chapter", "", "the chapter of the exercise (default: the one started last)")
		dir        = fs.String("dir", "_exercise", "where the workspaces and the progress file are")
		force      = fs.Bool("force", false, "start: overwrite the workspace even if you changed it")
		cont       = fs.Bool("continue", false, "start: from your own workspace of the chapter before, once it passed make check, not from that chapter's package")
		c          checkFlags
	)
	fs.StringVar(&c.out, "out", "_output/exercise", "check: where the overlay, the role and the runs' logs go")
	fs.StringVar(&c.controllerGen, "controller-gen", "", "check: controller-gen")
	fs.StringVar(&c.ginkgo, "ginkgo", "", "check: the Ginkgo CLI")
	fs.StringVar(&c.prove, "prove", "", "check: bin/prove")
	fs.StringVar(&c.cluster, "cluster", "", "check: bin/cluster")
	fs.StringVar(&c.stateDir, "state-dir", "", "check: the local cluster's state directory (bin/cluster's --state-dir)")
	fs.StringVar(&c.envFile, "env-file", "", "check: the file make cluster-up wrote (bin/cluster's --env-file)")
	fs.StringVar(&c.kubernetesBin, "kubernetes-bin", "", "check: the directory with etcd and kube-apiserver, for the chapters whose lesson an API server alone judges")
	fs.StringVar(&c.envtestOut, "envtest-out", "", "check: the output directory of their run there")
	fs.StringVar(&c.envtestStateDir, "envtest-state-dir", "", "check: the API server's state directory (bin/cluster's --envtest-state-dir)")
	fs.StringVar(&c.operatorMain, "operator-main", "./operator", "check: the operator's main package")
	fs.StringVar(&c.operatorBin, "operator-bin", "bin/operator-exercise", "check: where the operator built with the workspace goes")
	fs.IntVar(&c.procs, "procs", 4, "check: Ginkgo's --procs for the suite")
	fs.StringVar(&c.eventually, "eventually-timeout", "", "check: Eventually's timeout (prove's default if empty)")
	rounds := fs.Int("rounds", 3, "bench: the timed runs of make check, after a warm-up")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q\n%s", fs.Args(), usage)
	}
	// The workspace is built as a package of the module: its directory
	// must be in the checkout.
	rel := *dir
	if filepath.IsAbs(rel) {
		wd, err := os.Getwd()
		if err != nil {
			return err
		}
		if rel, err = filepath.Rel(wd, rel); err != nil {
			return err
		}
	}
	if rel = filepath.Clean(rel); rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return fmt.Errorf("the exercises' directory (EXERCISE_DIR=%s) must be a directory inside this checkout", *dir)
	}
	ex := &exercises{root: ".", dir: rel}
	switch cmd {
	case "progress":
		return ex.printProgress(os.Stdout)
	case "start", "check", "hint", "solution", "bench", "start-spec", "check-spec", "hint-spec":
	default:
		return fmt.Errorf("unknown command %q\n%s", cmd, usage)
	}
	n, err := ex.chapterNumber(*chapterArg, cmd == "start" || cmd == "bench" || cmd == "start-spec")
	if err != nil {
		return err
	}
	page := taskFile
	if strings.HasSuffix(cmd, "-spec") {
		page = specTaskFile
	}
	e, err := ex.exercise(n, page)
	if err != nil {
		return err
	}
	if cmd == "check" || cmd == "bench" || cmd == "check-spec" {
		for name, v := range map[string]string{"--controller-gen": c.controllerGen, "--ginkgo": c.ginkgo, "--prove": c.prove, "--cluster": c.cluster} {
			if v == "" {
				return fmt.Errorf("%s needs %s (make sets it)", cmd, name)
			}
		}
	}
	switch cmd {
	case "start":
		return ex.start(e, *force, *cont, os.Stdout)
	case "check":
		return ex.check(e, c, os.Stdout)
	case "bench":
		if *rounds < 1 {
			return errors.New("bench: --rounds must be 1 or more")
		}
		return ex.bench(e, c, *rounds, os.Stdout)
	case "hint":
		return ex.hint(e, false, os.Stdout)
	case "start-spec":
		return ex.startSpec(e, *force, os.Stdout)
	case "check-spec":
		return ex.checkSpec(e, c, os.Stdout)
	case "hint-spec":
		return ex.hint(e, true, os.Stdout)
	default:
		return ex.solution(e, os.Stdout)
	}
}

// chapterNumber reads --chapter, or, without one, the exercise started
// last (start needs one).
func (ex *exercises) chapterNumber(arg string, required bool) (int, error) {
	if arg == "" {
		if required {
			return 0, errors.New("name the chapter: make exercise 5")
		}
		p, err := ex.readProgress()
		if err != nil {
			return 0, err
		}
		if p.Current == 0 {
			return 0, errors.New("no exercise started yet: make exercise N starts chapter N's")
		}
		return p.Current, nil
	}
	c, err := chapters.Parse(arg)
	if err != nil {
		return 0, err
	}
	return c.Number, nil
}
