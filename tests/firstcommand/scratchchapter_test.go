//go:build e2e

package firstcommand

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"example.com/redis-operator/chapters"
)

// TestScratchChapter adds chapters to the course the way the table of
// chapters promises it is done: a row in chapters/chapters.go and the
// chapter's directories (a copy of a chapter's, and of its suite, under
// the next number), then make manifests. It adds three: a copy of the
// last chapter, one of a chapter whose suite deploys the operator and one
// of a chapter whose specs run it with faults, each suite running its
// operator as its row alone says. No other file is edited; then the
// operator runs the first (make run), make test-chapter runs each one's
// suite, make diff-chapter shows the first's diff and make
// chapter-branches makes their branches. In a fresh clone of the course,
// on the cluster that is up (make test-scratch-chapter).
func TestScratchChapter(t *testing.T) {
	clone, kubectl := freshClone(t, "scratch", "test-scratch-chapter")

	last := chapters.Latest()
	// The copies come after the last chapter, so each has what a chapter
	// there must have (running in the cluster, the webhook, once a chapter
	// before has them): the last chapter whose suite deploys the
	// operator, the first whose specs run it with faults (the crash
	// sweep's).
	deployedN := chapters.Where(func(c chapters.Chapter) bool { return c.Operator == chapters.OperatorDeployed })
	perSpec, ok := chapters.First(func(c chapters.Chapter) bool { return c.Operator == chapters.OperatorPerSpec })
	if len(deployedN) == 0 || !ok {
		t.Fatal("the table has no chapter whose suite deploys the operator, or none whose specs run it with faults")
	}
	deployed := mustGet(t, deployedN[len(deployedN)-1])
	// Each new chapter is a copy of from: its row (but its number, its
	// slug and the behaviours it teaches, which a copy does not teach
	// again), its package and its suite. The spec focused on is one of the
	// suite's, with a mark of the way its operator runs in the output.
	next := last.Number + 1
	added := []struct {
		from, to chapters.Chapter
		focus    string
		runs     string // in make test-chapter's output
	}{
		{from: last, to: chapters.Chapter{Number: next, Slug: "scratch", Rewrites: last.Rewrites},
			focus: "A.pod.deleted.with.kubectl", runs: "starting the chapter " + strconv.Itoa(next) + " operator"},
		{from: deployed, to: chapters.Chapter{Number: next + 1, Slug: "scratch-deployed"},
			focus: "A.pod.deleted.with.kubectl", runs: "make deploy OPERATOR_CHAPTER=" + strconv.Itoa(next+1)},
		{from: perSpec, to: chapters.Chapter{Number: next + 2, Slug: "scratch-faults"},
			focus: "once.started..on.the.last.state.only", runs: "make build-faults"},
	}
	var rows []string
	want := []string{"M chapters/chapters.go"}
	for _, a := range added {
		rows = append(rows, addChapter(t, clone, a.from, a.to))
		want = append(want, "?? "+a.to.Dir()+"/", "?? "+chapters.SuiteDir(a.to.Number)+"/")
	}
	addRows(t, clone, last, rows)

	// What a new chapter is: the row, its directories. Everything else
	// that changes, make manifests generates from them.
	slices.Sort(want)
	if got := status(t, clone); !slices.Equal(got, want) {
		t.Fatalf("adding the chapters changed %q, want %q", got, want)
	}
	if _, err := learnerMake(t, clone, 10*time.Minute, "manifests"); err != nil {
		t.Fatalf("make manifests with chapters %d to %d in the table: %v", next, next+2, err)
	}
	generated := []string{"M operator/controller/zz_generated.managers.go", "M scripts/chapters.mk"}
	if got := status(t, clone); !slices.Equal(got, slices.Sorted(slices.Values(append(want, generated...)))) {
		t.Fatalf("after make manifests, the clone has %q changed; want the new chapters and only the files generated from the table (%q)", got, generated)
	}
	run(t, clone, "git", "add", "-A")
	run(t, clone, "git", "-c", "user.name=Scratch", "-c", "user.email=scratch@example.com", "commit", "-q", "-m", "Add three scratch chapters")

	t.Run("make run", func(t *testing.T) { makeRun(t, clone, kubectl, next) })

	for _, a := range added {
		n := strconv.Itoa(a.to.Number)
		t.Run("make test-chapter "+n, func(t *testing.T) {
			// One spec of the suite. A learner's GINKGO_FLAGS are split at
			// spaces, so the regular expression has none.
			out, err := learnerMake(t, clone, 15*time.Minute, "test-chapter", n,
				"GINKGO_FLAGS=-v --timeout=15m --no-color=true --fail-on-empty --focus="+a.focus)
			if err != nil {
				t.Fatalf("make test-chapter %s (a copy of chapter %d): %v", n, a.from.Number, err)
			}
			if !strings.Contains(out, a.runs) || !strings.Contains(out, "SUCCESS!") {
				t.Errorf("make test-chapter %s passed without running chapter %s's operator as its row says (want %q, SUCCESS!)", n, n, a.runs)
			}
		})
	}

	first := added[0].to
	n := strconv.Itoa(first.Number)
	t.Run("make diff-chapter", func(t *testing.T) {
		// Its output is the diff, a few thousand lines: kept, not shown.
		cmd := exec.CommandContext(t.Context(), "make", "--no-print-directory", "diff-chapter", n)
		cmd.Dir, cmd.Env = clone, learnerEnv()
		var stderr strings.Builder
		cmd.Stderr = &stderr
		t.Logf("$ make diff-chapter %s (in %s)", n, clone)
		stdout, err := cmd.Output()
		out := string(stdout)
		if err != nil {
			t.Fatalf("make diff-chapter %s: %v\n%s", n, err, stderr.String())
		}
		t.Logf("make diff-chapter %s: %d lines", n, strings.Count(out, "\n"))
		baseDir, err := chapters.Get(first.Base())
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out, "--- "+baseDir.Dir()+"/") || !strings.Contains(out, "+++ "+first.Dir()+"/") {
			t.Errorf("make diff-chapter %s does not compare %s with %s", n, baseDir.Dir(), first.Dir())
		}
	})

	t.Run("make chapter-branches", func(t *testing.T) {
		out, err := learnerMake(t, clone, 15*time.Minute, "chapter-branches")
		if err != nil {
			t.Fatalf("make chapter-branches: %v", err)
		}
		for _, a := range added {
			branch := "chapter/" + a.to.Name()
			if !regexp.MustCompile(`(?m)^created\s+` + regexp.QuoteMeta(branch) + ` `).MatchString(out) {
				t.Fatalf("make chapter-branches did not create %s", branch)
			}
			// Its commit has the chapter's package where a kubebuilder
			// project has it.
			run(t, clone, "git", "cat-file", "-e", branch+":internal/controller/manager.go")
		}
		// The first's commit is the child of the chapter it builds on.
		parent := "chapter/" + mustGet(t, first.Base()).Name()
		run(t, clone, "git", "merge-base", "--is-ancestor", parent, "chapter/"+first.Name())
	})
}

// addChapter copies chapter from's directory and suite under to's number,
// and returns to's row for the table: from's, with to's number and slug,
// and no behaviours (a copy teaches none anew).
func addChapter(t *testing.T, clone string, from, to chapters.Chapter) string {
	t.Helper()
	run(t, clone, "cp", "-R", from.Dir(), to.Dir())
	// The suite names its chapter in its package (its directory's name)
	// and in NewSuite's number; the rest (its title, its label, how it
	// runs the operator) is the row's. The copy names the new one.
	fromSuite, toSuite := chapters.SuiteDir(from.Number), chapters.SuiteDir(to.Number)
	run(t, clone, "cp", "-R", fromSuite, toSuite)
	renames := strings.NewReplacer(
		filepath.Base(fromSuite), filepath.Base(toSuite),
		"NewSuite("+strconv.Itoa(from.Number)+")", "NewSuite("+strconv.Itoa(to.Number)+")")
	files, err := os.ReadDir(filepath.Join(clone, toSuite))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		old := filepath.Join(clone, toSuite, f.Name())
		src, err := os.ReadFile(old)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Remove(old); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(clone, toSuite, renames.Replace(f.Name())), []byte(renames.Replace(string(src))), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	row := regexp.MustCompile(`(?m)^\t\{Number: ` + strconv.Itoa(from.Number) + `, Slug: "` + from.Slug + `"(.*\},)$`)
	m := row.FindAllSubmatch(readTable(t, clone), -1)
	if len(m) != 1 {
		t.Fatalf("chapters/chapters.go has no row {Number: %d, Slug: %q, ...} on a line of its own", from.Number, from.Slug)
	}
	rest := regexp.MustCompile(`Behaviours: \[\]string\{[^}]*\}, `).ReplaceAllString(string(m[0][1]), "")
	t.Logf("added %s (a copy of %s) and %s", to.Dir(), from.Dir(), toSuite)
	return "\t{Number: " + strconv.Itoa(to.Number) + `, Slug: "` + to.Slug + `"` + rest
}

// addRows adds rows to the table, right after last's.
func addRows(t *testing.T, clone string, last chapters.Chapter, rows []string) {
	t.Helper()
	src := readTable(t, clone)
	row := regexp.MustCompile(`(?m)^\t\{Number: ` + strconv.Itoa(last.Number) + `, Slug: "` + last.Slug + `".*\},$`)
	if len(row.FindAll(src, -1)) != 1 {
		t.Fatalf("chapters/chapters.go has no row {Number: %d, Slug: %q, ...} on a line of its own", last.Number, last.Slug)
	}
	src = row.ReplaceAllFunc(src, func(r []byte) []byte { return []byte(string(r) + "\n" + strings.Join(rows, "\n")) })
	if err := os.WriteFile(filepath.Join(clone, "chapters", "chapters.go"), src, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("added their rows to chapters/chapters.go:\n%s", strings.Join(rows, "\n"))
}

func readTable(t *testing.T, clone string) []byte {
	t.Helper()
	src, err := os.ReadFile(filepath.Join(clone, "chapters", "chapters.go"))
	if err != nil {
		t.Fatal(err)
	}
	return src
}

func mustGet(t *testing.T, n int) chapters.Chapter {
	t.Helper()
	c, err := chapters.Get(n)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// status is git status --porcelain of the clone, directories untracked
// as a whole, sorted.
func status(t *testing.T, clone string) []string {
	t.Helper()
	cmd := exec.Command("git", "status", "--porcelain", "--untracked-files=normal")
	cmd.Dir = clone
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for l := range strings.Lines(string(out)) {
		lines = append(lines, strings.TrimSpace(l))
	}
	slices.Sort(lines)
	return lines
}
