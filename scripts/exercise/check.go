package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"example.com/redis-operator/chapters"
)

type checkFlags struct {
	out, controllerGen, ginkgo, prove, cluster string
	stateDir, envFile                          string
	// kubernetesBin holds etcd and kube-apiserver; envtestOut is the
	// output directory of the lesson specs' run on an API server alone,
	// and envtestStateDir that API server's state directory.
	kubernetesBin, envtestOut, envtestStateDir string
	operatorMain, operatorBin                  string
	procs                                      int
	eventually                                 string
}

// check judges the workspace with chapter N's proofs, cheapest first, and
// stops at the first that fails.
func (ex *exercises) check(e *exercise, c checkFlags, w io.Writer) (err error) {
	if err := ex.requireWorkspace(e); err != nil {
		return err
	}
	stage := "at the build"
	defer func() {
		result := "passed"
		if err != nil {
			result = "stopped " + stage
		}
		if perr := ex.updateProgress(func(p *progress) { p.chapter(e.n).LastCheck = result }); perr != nil && err == nil {
			err = perr
		}
	}()

	// A chapter whose lesson an API server alone can judge has it judged
	// there first: seconds, before the cluster's minutes.
	row, err := chapters.Get(e.n)
	if err != nil {
		return err
	}
	stages, n := 4, 0
	next := func(what string, args ...any) {
		n++
		fmt.Fprintf(w, "--- %d/%d %s\n", n, stages, fmt.Sprintf(what, args...))
	}
	if row.APIServerRung {
		stages = 5
	}

	next("building %s", e.workspace)
	if err := ex.goCmd(w, "build", "./"+filepath.ToSlash(e.workspace)); err != nil {
		return fmt.Errorf("%s does not build (go's errors above)", e.workspace)
	}

	stage = "at the lesson unit tests"
	tests, err := lessonTests(ex.prevPath(e), ex.path(e.chapterDir))
	if err != nil {
		return err
	}
	next("chapter %d's lesson unit tests against %s: %s", e.n, e.workspace, strings.Join(tests, ", "))
	out := c.out
	if err := ex.run(io.Discard, os.Stderr, "go", "run", "./scripts/variant", "--chapter", fmt.Sprint(e.n), "--dir", e.workspace,
		"--out", out, "--controller-gen", c.controllerGen); err != nil {
		return fmt.Errorf("preparing the build of %s as chapter %d (scripts/variant): %w", e.workspace, e.n, err)
	}
	overlay := filepath.Join(out, "overlay.json")
	if len(tests) > 0 {
		if err := ex.unitTests(w, e, overlay, tests); err != nil {
			return err
		}
	}

	proveArgs := func(outDir string) []string {
		args := []string{"--chapter", fmt.Sprint(e.n), "--ginkgo", c.ginkgo, "--procs", fmt.Sprint(c.procs),
			"--output-dir", outDir, "--variant", e.workspace, "--variant-bin", c.operatorBin,
			"--variant-role", filepath.Join(out, "role.yaml"), "--variant-out", out, "--check"}
		if c.eventually != "" {
			args = append(args, "--eventually-timeout", c.eventually)
		}
		return args
	}
	built := false
	buildOperator := func() error {
		if built {
			return nil
		}
		if err := ex.goCmd(w, "build", "-ldflags=-s -w", "-overlay", overlay, "-o", c.operatorBin, c.operatorMain); err != nil {
			return fmt.Errorf("building the operator with %s: %w", e.workspace, err)
		}
		built = true
		return nil
	}

	if row.APIServerRung {
		stage = "at the lesson specs on an API server alone"
		next("chapter %d's lesson specs on an API server alone (envtest): the lowest rung that can fail them", e.n)
		if err := ex.envtestLessons(w, c, buildOperator, proveArgs(filepath.Join(out, "prove-envtest"))); err != nil {
			return err
		}
	}

	stage = "with no test cluster up"
	next("the test cluster")
	if err := ex.clusterUp(c); err != nil {
		return err
	}

	stage = "at the suite"
	next("chapter %d's suite against the operator built with %s", e.n, e.workspace)
	if err := buildOperator(); err != nil {
		return err
	}
	if err := ex.run(w, w, c.prove, proveArgs(filepath.Join(out, "prove"))...); err != nil {
		return errors.New("make check found what is still wrong (above)")
	}
	fmt.Fprintf(w, "Exercise %d done: %s passes everything that proves chapter %d. make solution shows how the chapter wrote it.\n", e.n, e.workspace, e.n)
	return nil
}

// envtestLessons runs the lesson specs with prove (proveArgs) on an API
// server alone, which it starts (bin/cluster up --cluster envtest: a few
// seconds) unless one runs, and leaves running for the next make check
// (make cluster-down stops it).
// Without the binaries (make kubernetes builds them) it says so and
// leaves the lesson to the cluster.
func (ex *exercises) envtestLessons(w io.Writer, c checkFlags, buildOperator func() error, proveArgs []string) error {
	if c.kubernetesBin == "" || c.envtestOut == "" || c.envtestStateDir == "" {
		return errors.New("make check needs --kubernetes-bin, --envtest-out and --envtest-state-dir for a chapter judged on an API server alone (make sets them)")
	}
	for _, bin := range []string{"etcd", "kube-apiserver"} {
		if _, err := os.Stat(filepath.Join(c.kubernetesBin, bin)); err != nil {
			fmt.Fprintf(w, "  no %s in %s (make kubernetes builds it): the lesson specs are judged on the test cluster alone\n", bin, c.kubernetesBin)
			return nil
		}
	}
	if err := buildOperator(); err != nil {
		return err
	}
	stateDir, envFile := c.envtestStateDir, filepath.Join(c.envtestOut, "cluster.env")
	if err := ex.run(io.Discard, w, c.cluster, "up", "--cluster", "envtest", "--bin-dir", c.kubernetesBin,
		"--envtest-state-dir", stateDir, "--env-file", envFile); err != nil {
		return fmt.Errorf("starting an API server alone (bin/cluster up --cluster envtest): %w", err)
	}
	cmd := exec.Command(c.prove, append(proveArgs, "--lessons-only")...)
	cmd.Dir = ex.root
	cmd.Stdout, cmd.Stderr = w, w
	// The suite runs make (make install): what make was told on the
	// command line that ran this check (make check CLUSTER=local
	// OUTPUT_DIR=...), which it passes on in MAKEFLAGS, must not send that
	// make to the other cluster.
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool {
		name, _, _ := strings.Cut(kv, "=")
		return slices.Contains([]string{"MAKEFLAGS", "MFLAGS", "MAKEOVERRIDES", "MAKELEVEL"}, name)
	})
	cmd.Env = append(env, "CLUSTER=envtest", "OUTPUT_DIR="+c.envtestOut, "ENVTEST_CLUSTER_DIR="+stateDir, "KUBECONFIG="+filepath.Join(stateDir, "kubeconfig"))
	if err := cmd.Run(); err != nil {
		return errors.New("make check found what is still wrong, on an API server alone (above)")
	}
	return nil
}

// clusterUp fails, saying what to do, unless the test cluster is up: make
// check never starts one, which takes minutes.
func (ex *exercises) clusterUp(c checkFlags) error {
	var status bytes.Buffer
	if err := ex.run(io.Discard, &status, c.cluster, "status", "--state-dir", c.stateDir, "--env-file", c.envFile); err != nil {
		return fmt.Errorf("no test cluster is up: make cluster-up, then try again\n(bin/cluster status: %s)", strings.TrimSpace(strings.TrimPrefix(status.String(), "error: ")))
	}
	return nil
}

func (ex *exercises) run(stdout, stderr io.Writer, name string, args ...string) error {
	cmd := exec.Command(name, args...)
	cmd.Dir = ex.root
	cmd.Stdout, cmd.Stderr = stdout, stderr
	return cmd.Run()
}

// goCmd runs go with its output to w.
func (ex *exercises) goCmd(w io.Writer, args ...string) error { return ex.run(w, w, "go", args...) }

// unitTests runs the lesson unit tests of chapter N against the
// workspace, through the overlay, and prints one line per test; a test
// that fails, its output. A compiler error in one of the chapter's files
// that the workspace replaces names the workspace's file.
func (ex *exercises) unitTests(w io.Writer, e *exercise, overlay string, tests []string) error {
	cmd := exec.Command("go", "test", "-overlay", overlay, "-json", "-run", "^("+strings.Join(tests, "|")+")$", "./"+filepath.ToSlash(e.chapterDir))
	cmd.Dir = ex.root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	results, other := readTestEvents(stdout)
	runErr := cmd.Wait()

	rewrite := workspacePaths(e)
	if len(results) == 0 {
		// Nothing ran: the package did not compile with the workspace.
		fmt.Fprintln(w, "  The chapter's tests do not compile against your workspace (keep the names that TASK.md lists):")
		printLines(w, append(other, strings.Split(stderr.String(), "\n")...), rewrite)
		return fmt.Errorf("chapter %d's unit tests do not compile against %s", e.n, e.workspace)
	}
	failed := 0
	for _, t := range tests {
		r, ok := results[t]
		switch {
		case !ok:
			failed++
			fmt.Fprintf(w, "  FAIL  %s did not run\n", t)
		case r.action == "pass":
			fmt.Fprintf(w, "  ok    %s\n", t)
		default:
			failed++
			fmt.Fprintf(w, "  FAIL  %s\n", t)
			for _, l := range r.output {
				fmt.Fprintf(w, "        %s\n", rewrite(l))
			}
		}
	}
	if failed == 0 && runErr == nil {
		return nil
	}
	if failed == 0 {
		// Every lesson test passed, yet go test failed: a panic, say.
		printLines(w, append(other, strings.Split(stderr.String(), "\n")...), rewrite)
	}
	return fmt.Errorf("%s does not pass chapter %d's lesson unit tests yet (make hint %d gives a hint)", e.workspace, e.n, e.n)
}

// printLines prints the lines that are not empty, indented and rewritten.
func printLines(w io.Writer, lines []string, rewrite func(string) string) {
	for _, l := range lines {
		if l = strings.TrimRight(l, "\n"); strings.TrimSpace(l) != "" {
			fmt.Fprintf(w, "        %s\n", rewrite(l))
		}
	}
}

// testResult is what go test -json said of one top-level test.
type testResult struct {
	action string
	output []string
}

// readTestEvents reads go test -json's events: the top-level tests' last
// action and output (without go's own === and --- lines), and every
// other line of output (the compiler's errors, a panic).
func readTestEvents(r io.Reader) (map[string]*testResult, []string) {
	results := map[string]*testResult{}
	var other []string
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var ev struct{ Action, Test, Output string }
		if json.Unmarshal(sc.Bytes(), &ev) != nil {
			other = append(other, sc.Text())
			continue
		}
		top, _, _ := strings.Cut(ev.Test, "/")
		if top == "" {
			if ev.Action == "output" || ev.Action == "build-output" {
				other = append(other, strings.TrimRight(ev.Output, "\n"))
			}
			continue
		}
		res := results[top]
		if res == nil {
			res = &testResult{}
			results[top] = res
		}
		switch ev.Action {
		case "output":
			l := strings.TrimRight(ev.Output, "\n")
			if t := strings.TrimSpace(l); t != "" && !strings.HasPrefix(t, "=== ") && !strings.HasPrefix(t, "--- ") {
				res.output = append(res.output, strings.TrimSpace(l))
			}
		case "pass", "fail", "skip":
			if ev.Test == top {
				res.action = ev.Action
			}
		}
	}
	return results, other
}

// workspacePaths rewrites the chapter's paths of the files that the
// workspace replaces to the workspace's.
func workspacePaths(e *exercise) func(string) string {
	chapter := filepath.ToSlash(e.chapterDir) + "/"
	ws := filepath.ToSlash(e.workspace) + "/"
	goFile := regexp.MustCompile(regexp.QuoteMeta(chapter) + `([\w.-]+\.go)\b`)
	return func(line string) string {
		return goFile.ReplaceAllStringFunc(line, func(m string) string {
			if strings.HasSuffix(m, "_test.go") {
				return m
			}
			return ws + strings.TrimPrefix(m, chapter)
		})
	}
}

// lessonTests lists the top-level Test functions of chapter N's package
// that chapter N adds or changes against chapter N-1: the unit tests of
// its lesson. Their code is compared, not their comments.
func lessonTests(prevDir, dir string) ([]string, error) {
	prev := map[string]string{} // chapter 1's: every test is the lesson's
	if prevDir != "" {
		var err error
		if prev, err = testFuncs(prevDir); err != nil {
			return nil, err
		}
	}
	cur, err := testFuncs(dir)
	if err != nil {
		return nil, err
	}
	var tests []string
	for name, body := range cur {
		if prev[name] != body {
			tests = append(tests, name)
		}
	}
	slices.Sort(tests)
	return tests, nil
}

// testFuncs returns the Test functions of a directory's _test.go files,
// each as its printed code.
func testFuncs(dir string) (map[string]string, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*_test.go"))
	if err != nil {
		return nil, err
	}
	funcs := map[string]string{}
	fset := token.NewFileSet()
	for _, f := range files {
		file, err := parser.ParseFile(fset, f, nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		for _, d := range file.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv != nil || !strings.HasPrefix(fn.Name.Name, "Test") {
				continue
			}
			var b strings.Builder
			if err := printer.Fprint(&b, fset, fn.Body); err != nil {
				return nil, err
			}
			funcs[fn.Name.Name] = b.String()
		}
	}
	return funcs, nil
}
