package makefile_test

import (
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"example.com/redis-operator/internal/makefile"
)

// A command is a make command line of the course, and what Make must
// build before its recipe runs: targets ("build"), or files ("$(GINKGO)",
// expanded with the Makefile's variables).
type command struct {
	goals string
	vars  []string
	needs []string
}

// commands are the targets whose recipes run something the course
// builds (bin/operator, a variant, bin/prove, ...): each with every way
// of calling it that changes what it builds. TestEveryTargetThatRunsAToolIsHere
// finds the targets; this table says what each must build.
var commands = []command{
	{goals: "demo", needs: []string{"build"}},
	{goals: "run 3", needs: []string{"build"}},
	{goals: "run 3", vars: []string{"FAULTS=true"}, needs: []string{"build", "build-faults"}},
	{goals: "run 3", vars: []string{"VARIANT=dir"}, needs: []string{"build-variant"}},
	{goals: "run 12", vars: []string{"VARIANT=dir", "FAULTS=true"}, needs: []string{"build-variant"}},
	{goals: "test-chapter 3", needs: []string{"build", "$(GINKGO)", "cluster-tool", "course-tool"}},
	{goals: "test-chapter 3", vars: []string{"VARIANT=dir"}, needs: []string{"build-variant", "$(GINKGO)"}},
	{goals: "test-chapters", needs: []string{"build", "$(GINKGO)", "course-tool"}},
	{goals: "check-test-chapters", needs: []string{"course-tool"}},
	{goals: "check-deploy-chapter", needs: []string{"course-tool"}},
	{goals: "test-faults", needs: []string{"build", "build-faults", "$(GINKGO)", "course-tool"}},
	{goals: "test-replicas", needs: []string{"build", "$(GINKGO)"}},
	{goals: "try-it", needs: []string{"build", "cluster-tool"}},
	{goals: "try-it 3", needs: []string{"build"}},
	{goals: "prove-chapter 5", needs: []string{"build", "prove-tool", "$(GINKGO)", "$(CONTROLLER_GEN)"}},
	{goals: "prove-chapter 5", vars: []string{"VARIANT=dir"}, needs: []string{"build", "build-variant", "prove-tool", "$(GINKGO)"}},
	{goals: "prove-chapters", needs: []string{"build", "course-tool", "prove-tool", "$(GINKGO)", "$(CONTROLLER_GEN)"}},
	{goals: "prove-range", vars: []string{"RANGE=1-3"}, needs: []string{"build", "prove-tool", "$(GINKGO)", "$(CONTROLLER_GEN)"}},
	{goals: "envtest-proofs", needs: []string{"build", "prove-tool", "$(GINKGO)", "$(CONTROLLER_GEN)"}},
	{goals: "mutants 5", needs: []string{"build", "prove-tool", "$(GINKGO)", "$(CONTROLLER_GEN)"}},
	{goals: "mutant 5 name", needs: []string{"build", "prove-tool", "$(GINKGO)", "$(CONTROLLER_GEN)"}},
	{goals: "build-variant 5", vars: []string{"VARIANT=dir"}, needs: []string{"$(CONTROLLER_GEN)"}},
	{goals: "bench", needs: []string{"build"}},
	{goals: "bench-check", needs: []string{"exercise-tool", "prove-tool", "cluster-tool", "$(GINKGO)", "$(CONTROLLER_GEN)"}},
	{goals: "exercise 5", needs: []string{"exercise-tool"}},
	{goals: "check", needs: []string{"exercise-tool", "prove-tool", "cluster-tool", "$(GINKGO)", "$(CONTROLLER_GEN)"}},
	{goals: "check 5", needs: []string{"exercise-tool", "prove-tool", "cluster-tool", "$(GINKGO)", "$(CONTROLLER_GEN)"}},
	{goals: "exercise-spec 5", needs: []string{"exercise-tool"}},
	{goals: "check-spec 5", needs: []string{"exercise-tool", "prove-tool", "cluster-tool", "$(GINKGO)", "$(CONTROLLER_GEN)"}},
	{goals: "hint", needs: []string{"exercise-tool"}},
	{goals: "hint-spec", needs: []string{"exercise-tool"}},
	{goals: "solution", needs: []string{"exercise-tool"}},
	{goals: "progress", needs: []string{"exercise-tool"}},
	{goals: "test-exercise", needs: []string{"exercise-tool", "cluster-tool"}},
	{goals: "test-local-cluster", needs: []string{"cluster-tool"}},
	{goals: "cluster-up", needs: []string{"cluster-tool"}},
	{goals: "cluster-down", needs: []string{"cluster-tool"}},
	{goals: "clean", needs: []string{"cluster-tool"}},
	{goals: "apiserver-stop", needs: []string{"cluster-tool"}},
	{goals: "apiserver-start", needs: []string{"cluster-tool"}},
	{goals: "deploy 11", needs: []string{"docker-build", "cluster-tool"}},
	{goals: "load-image", needs: []string{"docker-build", "cluster-tool"}},
	{goals: "manifests", needs: []string{"$(CONTROLLER_GEN)"}},
	{goals: "verify-manifests", needs: []string{"$(CONTROLLER_GEN)"}},
	{goals: "verify-chapter-branches", needs: []string{"$(CONTROLLER_GEN)"}},
	{goals: "lint", needs: []string{"$(GOLANGCI_LINT)"}},
	{goals: "tools", needs: []string{"$(GOLANGCI_LINT)", "$(GINKGO)", "$(CONTROLLER_GEN)"}},
	{goals: "test-tools", needs: []string{"$(GINKGO)", "$(CONTROLLER_GEN)"}},
}

// notRun are the paths under bin/ that a target's recipe names without
// running them: where it tells a tool it runs to build something.
var notRun = map[string][]string{
	// bin/exercise builds the operator with the learner's package into
	// bin/operator-exercise itself (--operator-bin).
	"check":       {"operator-exercise"},
	"check-spec":  {"operator-exercise"},
	"bench-check": {"operator-exercise"},
	// The branches' checks build their tools into --bin.
	"verify-chapter-branches": {"chapter-branches"},
	// bin/prove builds each mutant, as a variant, into --variant-bin.
	"prove-chapter":  {"operator-variant"},
	"prove-range":    {"operator-variant"},
	"envtest-proofs": {"operator-variant"},
	"mutants":        {"operator-variant"},
	"mutant":         {"operator-variant"},
}

// read is the course's Makefile read for one command line, once.
var read = struct {
	sync.Mutex
	dbs map[string]*makefile.Database
}{dbs: map[string]*makefile.Database{}}

// course reads the course's Makefile for a command line.
func course(t *testing.T, goals string, vars ...string) *makefile.Database {
	t.Helper()
	key := goals + "\x00" + strings.Join(vars, "\x00")
	read.Lock()
	defer read.Unlock()
	if db, ok := read.dbs[key]; ok {
		return db
	}
	// What the command line does not set is empty, whatever the
	// environment of the test says.
	for _, name := range []string{"VARIANT", "FAULTS"} {
		if !slices.ContainsFunc(vars, func(v string) bool { return strings.HasPrefix(v, name+"=") }) {
			vars = append(vars, name+"=")
		}
	}
	db, err := makefile.Read(makefile.Input{Dir: filepath.Join("..", ".."), Goals: goals, Vars: vars})
	if err != nil {
		t.Fatal(err)
	}
	read.dbs[key] = db
	return db
}

// TestNoVariableIsReadBeforeItIsDefined: while Make reads the Makefile,
// for each command line of the table and with none, it expands no
// variable that nothing has defined yet. That is how a rule lost its
// build: `test-chapter: ... $(build_under_test)` with build_under_test
// defined 200 lines further down, so empty when Make read the rule.
func TestNoVariableIsReadBeforeItIsDefined(t *testing.T) {
	for _, c := range append([]command{{}}, commands...) {
		db := course(t, c.goals, c.vars...)
		for _, w := range db.Undefined {
			t.Errorf("make %s %s: %s", c.goals, strings.Join(c.vars, " "), w)
		}
	}
}

// TestTargetsBuildWhatTheyRun: each command of the table has its builds
// among the prerequisites Make read, its prerequisites' included, so an
// edit to a chapter is built before the suite (or make run) runs it.
func TestTargetsBuildWhatTheyRun(t *testing.T) {
	for _, c := range commands {
		db := course(t, c.goals, c.vars...)
		target := strings.Fields(c.goals)[0]
		if _, ok := db.Rules[target]; !ok {
			t.Errorf("make %s: the Makefile has no target %s", c.goals, target)
			continue
		}
		for _, need := range db.Missing(target, c.needs...) {
			t.Errorf("make %s %s: %s is not among its prerequisites (Make read: %s: %s)",
				c.goals, strings.Join(c.vars, " "), need, target, strings.Join(db.Rules[target].Prereqs, " "))
		}
	}
}

// TestEveryTargetThatRunsAToolIsHere: every target whose recipe names a
// file under bin/ (once its variables are expanded) that it does not
// build itself has, for at least one of its command lines in the table,
// a prerequisite that builds that file (go build -o FILE, or the file's
// own rule); so a target that runs a tool is in the table, and a tool it
// runs is built.
func TestEveryTargetThatRunsAToolIsHere(t *testing.T) {
	db := course(t, "")
	bin := db.Vars["BIN"]
	if bin == "" || !filepath.IsAbs(bin) {
		t.Fatalf("BIN is %q, want the checkout's bin/", bin)
	}
	byTarget := map[string][]*makefile.Database{}
	for _, c := range commands {
		target := strings.Fields(c.goals)[0]
		byTarget[target] = append(byTarget[target], course(t, c.goals, c.vars...))
	}
	found := 0
	for target := range db.Rules {
		if strings.HasPrefix(target, bin+"/") {
			continue // a tool's own rule
		}
		for _, path := range db.PathsUnder(target, bin) {
			if db.Builds(target, path) || slices.Contains(notRun[target], strings.TrimPrefix(path, bin+"/")) {
				continue
			}
			found++
			dbs, ok := byTarget[target]
			if !ok {
				t.Errorf("make %s runs %s: add the target to the table of commands in this test, with what it must build", target, path)
				continue
			}
			built := false
			for _, cdb := range dbs {
				for dep := range cdb.Closure(target) {
					if dep != target && cdb.Builds(dep, path) {
						built = true
					}
				}
			}
			if !built {
				t.Errorf("make %s runs %s, which none of its prerequisites builds (go build -o %s, or its own rule)", target, path, path)
			}
		}
	}
	if found < 10 {
		t.Errorf("only %d tools found run by the Makefile's recipes; the check finds too little to mean anything", found)
	}
}
