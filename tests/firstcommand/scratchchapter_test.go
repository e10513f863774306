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

// TestScratchChapter adds a chapter to the course the way the table of
// chapters promises it is done: a row in chapters/chapters.go and the
// chapter's directories (a copy of the last chapter's, and of its suite,
// under the next number), then make manifests. No other file is edited;
// then the operator runs the new chapter (make run), make test-chapter
// runs its suite, make diff-chapter shows its diff and make
// chapter-branches makes its branch. In a fresh clone of the course, on
// the cluster that is up (make test-scratch-chapter).
func TestScratchChapter(t *testing.T) {
	clone, kubectl := freshClone(t, "scratch", "test-scratch-chapter")

	last := chapters.Latest()
	next := chapters.Chapter{Number: last.Number + 1, Slug: "scratch", Rewrites: last.Rewrites}
	addChapter(t, clone, last, next)

	// What a new chapter is: the row, its directories. Everything else
	// that changes, make manifests generates from them.
	want := slices.Sorted(slices.Values([]string{"M chapters/chapters.go", "?? " + next.Dir() + "/", "?? " + suiteDir(next.Number) + "/"}))
	if got := status(t, clone); !slices.Equal(got, want) {
		t.Fatalf("adding the chapter changed %q, want %q", got, want)
	}
	if _, err := learnerMake(t, clone, 10*time.Minute, "manifests"); err != nil {
		t.Fatalf("make manifests with chapter %d in the table: %v", next.Number, err)
	}
	generated := []string{"M operator/controller/zz_generated.managers.go", "M scripts/chapters.mk"}
	if got := status(t, clone); !slices.Equal(got, slices.Sorted(slices.Values(append(want, generated...)))) {
		t.Fatalf("after make manifests, the clone has %q changed; want the new chapter and only the files generated from the table (%q)", got, generated)
	}
	run(t, clone, "git", "add", "-A")
	run(t, clone, "git", "-c", "user.name=Scratch", "-c", "user.email=scratch@example.com", "commit", "-q", "-m", "Add chapter "+next.Name())

	t.Run("make run", func(t *testing.T) { makeRun(t, clone, kubectl, next.Number) })

	n := strconv.Itoa(next.Number)
	t.Run("make test-chapter", func(t *testing.T) {
		// The rebuild specs alone. A learner's GINKGO_FLAGS are split at
		// spaces, so the regular expression has none.
		out, err := learnerMake(t, clone, 15*time.Minute, "test-chapter", n,
			"GINKGO_FLAGS=-v --timeout=15m --no-color=true --fail-on-empty --focus=A.pod.deleted.with.kubectl")
		if err != nil {
			t.Fatalf("make test-chapter %s: %v", n, err)
		}
		if !strings.Contains(out, "starting the chapter "+n+" operator") || !strings.Contains(out, "SUCCESS!") {
			t.Errorf("make test-chapter %s passed without running chapter %s's operator (want \"starting the chapter %s operator\", SUCCESS!)", n, n, n)
		}
	})

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
		baseDir, err := chapters.Get(next.Base())
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out, "--- "+baseDir.Dir()+"/") || !strings.Contains(out, "+++ "+next.Dir()+"/") {
			t.Errorf("make diff-chapter %s does not compare %s with %s", n, baseDir.Dir(), next.Dir())
		}
	})

	t.Run("make chapter-branches", func(t *testing.T) {
		out, err := learnerMake(t, clone, 15*time.Minute, "chapter-branches")
		if err != nil {
			t.Fatalf("make chapter-branches: %v", err)
		}
		branch := "chapter/" + next.Name()
		if !regexp.MustCompile(`(?m)^created\s+` + regexp.QuoteMeta(branch) + ` `).MatchString(out) {
			t.Fatalf("make chapter-branches did not create %s", branch)
		}
		// Its commit is the child of the chapter it builds on, and has
		// the chapter's package where a kubebuilder project has it.
		parent := "chapter/" + mustGet(t, next.Base()).Name()
		run(t, clone, "git", "merge-base", "--is-ancestor", parent, branch)
		run(t, clone, "git", "cat-file", "-e", branch+":internal/controller/manager.go")
	})
}

// addChapter copies chapter last's directory and suite under next's
// number and adds next's row to the table, right after last's.
func addChapter(t *testing.T, clone string, last, next chapters.Chapter) {
	t.Helper()
	run(t, clone, "cp", "-R", last.Dir(), next.Dir())
	// The suite names its chapter: its package, NewSuite's number, its
	// label and its title. The copy names the new one.
	from, to := suiteDir(last.Number), suiteDir(next.Number)
	run(t, clone, "cp", "-R", from, to)
	renames := strings.NewReplacer(
		filepath.Base(from), filepath.Base(to),
		"NewSuite("+strconv.Itoa(last.Number), "NewSuite("+strconv.Itoa(next.Number),
		"chapter-"+strconv.Itoa(last.Number), "chapter-"+strconv.Itoa(next.Number),
		"Chapter "+strconv.Itoa(last.Number), "Chapter "+strconv.Itoa(next.Number))
	files, err := os.ReadDir(filepath.Join(clone, to))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		old := filepath.Join(clone, to, f.Name())
		src, err := os.ReadFile(old)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Remove(old); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(clone, to, renames.Replace(f.Name())), []byte(renames.Replace(string(src))), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	table := filepath.Join(clone, "chapters", "chapters.go")
	src, err := os.ReadFile(table)
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile(`(?m)^(\t\{Number: )` + strconv.Itoa(last.Number) + `(, Slug: )"` + last.Slug + `"(.*\},)$`)
	if len(row.FindAll(src, -1)) != 1 {
		t.Fatalf("%s has no row {Number: %d, Slug: %q, ...} on a line of its own", table, last.Number, last.Slug)
	}
	src = row.ReplaceAll(src, []byte("$0\n${1}"+strconv.Itoa(next.Number)+`${2}"`+next.Slug+`"${3}`))
	if err := os.WriteFile(table, src, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("added %s (a copy of %s) and %s, and its row to chapters/chapters.go", next.Dir(), last.Dir(), to)
}

func suiteDir(n int) string { return "tests/chapter" + strconv.Itoa(100 + n)[1:] }

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
