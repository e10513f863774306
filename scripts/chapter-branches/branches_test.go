package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// git runs git in dir, with no user or system configuration, and returns
// its trimmed output.
func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL="+os.DevNull, "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=Learner", "GIT_AUTHOR_EMAIL=learner@example.com",
		"GIT_COMMITTER_NAME=Learner", "GIT_COMMITTER_EMAIL=learner@example.com")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

func writeFile(t *testing.T, dir, p, content string, mode os.FileMode) {
	t.Helper()
	p = filepath.Join(dir, filepath.FromSlash(p))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
}

// newCourse makes a course repository with two small chapters and their
// suites, around the real files that the rules copy or transform:
// operator/main.go, the course's operator/controller, tests/framework, the
// Makefile, go.mod and .golangci.yml.
func newCourse(t *testing.T) string {
	t.Helper()
	// The fixture is not a whole module (its framework's imports are
	// missing): its branches keep the course's go.mod. TestGoModTidy runs
	// the real go mod tidy.
	tidy := goModTidy
	goModTidy = func(files map[string][]byte) (map[string][]byte, error) {
		return map[string][]byte{"go.mod": files["go.mod"]}, nil
	}
	t.Cleanup(func() { goModTidy = tidy })
	t.Setenv("GIT_CONFIG_GLOBAL", os.DevNull)
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	dir := t.TempDir()
	real := []string{"operator/main.go", "operator/controller/controller.go", "Makefile", "go.mod", ".golangci.yml"}
	framework, _ := filepath.Glob(filepath.Join("..", "..", "tests", "framework", "*.go"))
	for _, f := range framework {
		real = append(real, "tests/framework/"+filepath.Base(f))
	}
	for _, p := range real {
		writeFile(t, dir, p, string(readCourse(t, p)), 0o644)
	}
	for _, c := range []chapter{{Number: 1, Slug: "one"}, {Number: 2, Slug: "two"}} {
		n := string(rune('0' + c.Number))
		writeFile(t, dir, c.Dir()+"/doc.go", "// Package controller is the Redis operator as of chapter "+n+
			", \""+c.Slug+"\": it does\n// thing "+n+".\n//\n// More.\npackage controller\n", 0o644)
		writeFile(t, dir, c.Dir()+"/redis_controller.go", "package controller\n\n// N is the chapter.\nconst N = "+n+"\n", 0o644)
		writeFile(t, dir, c.Dir()+"/role.yaml", "rules: "+n+"\n", 0o644)
		writeFile(t, dir, c.Dir()+"/README.md", "# Chapter "+n+": "+c.Slug+"\n\n[Chapter 1](../01-one/README.md), [code](redis_controller.go).\n", 0o644)
		suite := "tests/chapter0" + n
		writeFile(t, dir, suite+"/suite_test.go", "// Package chapter0"+n+" is a suite.\npackage chapter0"+n+
			"\n\nimport _ \"example.com/redis-operator/tests/framework\"\n", 0o644)
		writeFile(t, dir, suite+"/chapter0"+n+"_test.go", "package chapter0"+n+"\n", 0o644)
	}
	writeFile(t, dir, "chapters/02-two/README.zh-CN.md", "# 第 2 章\n", 0o644)
	writeFile(t, dir, "scripts/build-kubernetes.sh", "#!/bin/sh\n", 0o755)
	writeFile(t, dir, "scripts/prove/main.go", "package main\n", 0o644)
	git(t, dir, "init", "-q", "-b", "main")
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-q", "-m", "The course")
	return dir
}

// commitChange changes a file of the course and commits that file alone.
func commitChange(t *testing.T, dir, p, content string) {
	t.Helper()
	writeFile(t, dir, p, content, 0o644)
	git(t, dir, "commit", "-q", "-m", "Change "+p, "--", p)
}

func TestMakeBranches(t *testing.T) {
	dir := newCourse(t)
	writeFile(t, dir, "untracked.txt", "mine\n", 0o644)
	writeFile(t, dir, "chapters/01-one/README.md", "# edited, not committed\n", 0o644)
	status := git(t, dir, "status", "--porcelain")
	head := git(t, dir, "rev-parse", "HEAD")

	lines, err := makeBranches(t.Context(), &repo{dir: dir}, "HEAD")
	if err != nil {
		t.Fatal(err)
	}
	one, two := git(t, dir, "rev-parse", "chapter/01-one"), git(t, dir, "rev-parse", "chapter/02-two")
	if want := []string{"created   chapter/01-one " + short(one), "created   chapter/02-two " + short(two)}; strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("lines = %q, want %q", lines, want)
	}

	// One linear history, one commit per chapter.
	if got := git(t, dir, "rev-list", "--parents", "-n1", one); got != one {
		t.Errorf("chapter/01-one has parents: %s", got)
	}
	if got := git(t, dir, "rev-list", "--parents", "-n1", two); got != two+" "+one {
		t.Errorf("chapter/02-two's parents = %s, want %s", got, one)
	}
	if got, want := git(t, dir, "log", "-1", "--format=%an <%ae> %aI|%cn <%ce> %cI|%B", two),
		"redis-operator course <course@redis-operator.example.com> 2026-01-01T02:00:00+00:00|"+
			"redis-operator course <course@redis-operator.example.com> 2026-01-01T02:00:00+00:00|"+
			"Chapter 2: two\n\nThe Redis operator as of chapter 2, \"two\": it does thing 2.\n\nGenerated-by: make chapter-branches"; got != want {
		t.Errorf("chapter/02-two's commit:\n%s\nwant\n%s", got, want)
	}

	// The layout of one chapter alone.
	tree := git(t, dir, "ls-tree", "-r", "--name-only", two)
	for _, want := range []string{".golangci.yml", "Makefile", "README.md", "README.zh-CN.md", "cmd/main.go", "config/rbac/role.yaml",
		"go.mod", "internal/controller/doc.go", "internal/controller/redis_controller.go", "scripts/build-kubernetes.sh",
		"test/e2e/e2e_suite_test.go", "test/e2e/e2e_test.go", "test/e2e/framework/operator.go"} {
		if !strings.Contains("\n"+tree+"\n", "\n"+want+"\n") {
			t.Errorf("chapter/02-two lacks %s:\n%s", want, tree)
		}
	}
	for _, gone := range []string{"chapters/", "tests/", "operator/", "internal/controller/controller.go", "scripts/prove", "untracked.txt"} {
		if strings.Contains("\n"+tree, "\n"+gone) {
			t.Errorf("chapter/02-two has %s:\n%s", gone, tree)
		}
	}
	// cmd/main.go is the course's operator/main.go, importing the
	// chapter's package (and the trace at its place); the Makefile knows
	// its chapter.
	course := git(t, dir, "show", "HEAD:operator/main.go")
	want := strings.Replace(course, "/operator/controller\"", "/internal/controller\"", 1)
	want = strings.Replace(want, "/operator/trace\"", "/internal/trace\"", 1)
	if got := git(t, dir, "show", two+":cmd/main.go"); got != want || got == course {
		t.Error("cmd/main.go is not the course's operator/main.go importing internal/controller")
	}
	for branch, want := range map[string]string{one: "\nCHAPTER := 1\n", two: "\nCHAPTER := 2\n"} {
		if mk := git(t, dir, "show", branch+":Makefile"); !strings.Contains(mk, want) {
			t.Errorf("%s's Makefile lacks %q", branch, want)
		}
	}
	if got := git(t, dir, "show", two+":config/rbac/role.yaml"); got != "rules: 2" {
		t.Errorf("chapter/02-two's role is %q, want chapter 2's", got)
	}
	for branch, want := range map[string][]string{
		one: {"# Chapter 1: one\n\n> **Branch `chapter/01-one`**", "[Chapter 1](README.md)", "[code](internal/controller/redis_controller.go)"},
		two: {"# Chapter 2: two\n\n> **Branch `chapter/02-two`**", "Chapter 1 (branch `chapter/01-one`)", "中文：[README.zh-CN.md](README.zh-CN.md)"},
	} {
		readme := git(t, dir, "show", branch+":README.md")
		for _, w := range want {
			if !strings.Contains(readme, w) {
				t.Errorf("the README lacks %q:\n%s", w, readme)
			}
		}
	}
	if got := git(t, dir, "ls-tree", two, "scripts/build-kubernetes.sh"); !strings.HasPrefix(got, "100755 ") {
		t.Errorf("the script lost its mode: %s", got)
	}
	// A file that is the same in every chapter is the same blob.
	for _, p := range []string{"cmd/main.go", "test/e2e/framework/operator.go", ".golangci.yml"} {
		if a, b := git(t, dir, "rev-parse", one+":"+p), git(t, dir, "rev-parse", two+":"+p); a != b {
			t.Errorf("%s differs between the branches", p)
		}
	}

	// Nothing of the user's changed.
	if got := git(t, dir, "rev-parse", "HEAD"); got != head {
		t.Errorf("HEAD moved from %s to %s", head, got)
	}
	if got := git(t, dir, "symbolic-ref", "HEAD"); got != "refs/heads/main" {
		t.Errorf("the current branch is %s", got)
	}
	if got := git(t, dir, "status", "--porcelain"); got != status {
		t.Errorf("git status was\n%s\nand is\n%s", status, got)
	}

	// Again: nothing to do.
	lines, err = makeBranches(t.Context(), &repo{dir: dir}, "HEAD")
	if err != nil {
		t.Fatal(err)
	}
	if want := "unchanged chapter/01-one " + short(one) + "\nunchanged chapter/02-two " + short(two); strings.Join(lines, "\n") != want {
		t.Errorf("second run: %q, want %q", lines, want)
	}

	// A change to chapter 2 moves its branch only.
	commitChange(t, dir, "chapters/02-two/role.yaml", "rules: two\n")
	lines, err = makeBranches(t.Context(), &repo{dir: dir}, "HEAD")
	if err != nil {
		t.Fatal(err)
	}
	newTwo := git(t, dir, "rev-parse", "chapter/02-two")
	if want := "unchanged chapter/01-one " + short(one) + "\nupdated   chapter/02-two " + short(newTwo) + " (was " + short(two) + ")"; strings.Join(lines, "\n") != want {
		t.Errorf("after a change: %q, want %q", lines, want)
	}
}

// TestSameCommitsEverywhere: the same course commit gives the same commit
// IDs in another clone, whatever the repository's configuration says about
// signing, hooks and encodings.
func TestSameCommitsEverywhere(t *testing.T) {
	dir := newCourse(t)
	lines, err := makeBranches(t.Context(), &repo{dir: dir}, "HEAD")
	if err != nil {
		t.Fatal(err)
	}

	clone := filepath.Join(t.TempDir(), "clone")
	git(t, dir, "clone", "-q", dir, clone)
	hooks := filepath.Join(t.TempDir(), "hooks")
	writeFile(t, hooks, "reference-transaction", "#!/bin/sh\nexit 1\n", 0o755)
	for k, v := range map[string]string{
		"commit.gpgSign": "true", "gpg.program": "false", "core.hooksPath": hooks,
		"i18n.commitEncoding": "ISO-8859-1", "user.name": "Someone", "user.email": "someone@example.com",
	} {
		git(t, clone, "config", k, v)
	}
	again, err := makeBranches(t.Context(), &repo{dir: clone}, "HEAD")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(again, "\n") != strings.Join(lines, "\n") {
		t.Errorf("the clone made\n%s\nthe course\n%s", strings.Join(again, "\n"), strings.Join(lines, "\n"))
	}
}

func TestRefusesABranchWithSomeoneElsesCommit(t *testing.T) {
	dir := newCourse(t)
	if _, err := makeBranches(t.Context(), &repo{dir: dir}, "HEAD"); err != nil {
		t.Fatal(err)
	}
	two := git(t, dir, "rev-parse", "chapter/02-two")
	mine := git(t, dir, "commit-tree", "-p", "chapter/01-one", "-m", "My notes", "chapter/01-one^{tree}")
	git(t, dir, "update-ref", "refs/heads/chapter/01-one", mine)
	commitChange(t, dir, "chapters/02-two/role.yaml", "rules: two\n")

	_, err := makeBranches(t.Context(), &repo{dir: dir}, "HEAD")
	if !errors.Is(err, errRefused) || exitCode(err) != 2 {
		t.Fatalf("error = %v (exit %d), want a refusal (exit 2)", err, exitCode(err))
	}
	if msg := err.Error(); strings.Contains(msg, "\n") || !strings.Contains(msg, "chapter/01-one has a commit that make chapter-branches did not make") {
		t.Errorf("error = %q, want one line that names the branch", msg)
	}
	if got := git(t, dir, "rev-parse", "chapter/01-one", "chapter/02-two"); got != mine+"\n"+two {
		t.Errorf("a branch moved: %s", got)
	}
}

func TestRefusesACheckedOutBranch(t *testing.T) {
	dir := newCourse(t)
	if _, err := makeBranches(t.Context(), &repo{dir: dir}, "HEAD"); err != nil {
		t.Fatal(err)
	}
	git(t, dir, "worktree", "add", "-q", filepath.Join(t.TempDir(), "wt"), "chapter/02-two")
	commitChange(t, dir, "chapters/02-two/role.yaml", "rules: two\n")

	_, err := makeBranches(t.Context(), &repo{dir: dir}, "HEAD")
	if !errors.Is(err, errRefused) || !strings.Contains(err.Error(), "chapter/02-two is checked out in") {
		t.Errorf("error = %v, want a refusal that says where the branch is checked out", err)
	}
}

func TestFindChapters(t *testing.T) {
	for _, tt := range []struct {
		paths []string
		err   string
	}{
		{[]string{"chapters/01-a/x.go", "chapters/02-b-c/x.go"}, ""},
		{[]string{"chapters/chapters.go", "chapters/chapters_test.go", "chapters/01-a/x.go"}, ""},
		{[]string{"chapters/01-a/x.go", "chapters/03-c/x.go"}, "without a gap"},
		{[]string{"chapters/1-a/x.go"}, "named NN-slug"},
		{[]string{"chapters/notes.md"}, "only chapter directories"},
		{[]string{"chapters/01-a/x.go", "chapters/01-b/x.go"}, "two chapters numbered 01"},
		{[]string{"README.md"}, "no chapters/NN-slug"},
	} {
		files := map[string]file{}
		for _, p := range tt.paths {
			files[p] = file{}
		}
		_, err := findChapters(files)
		if tt.err == "" && err != nil || tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)) {
			t.Errorf("findChapters(%v) error = %v, want %q", tt.paths, err, tt.err)
		}
	}
}

// TestRenamedChapter: the branch of a chapter that was renamed is deleted
// when the generator made it, and kept, with a line that says so, when
// someone committed on it.
func TestRenamedChapter(t *testing.T) {
	dir := newCourse(t)
	if _, err := makeBranches(t.Context(), &repo{dir: dir}, "HEAD"); err != nil {
		t.Fatal(err)
	}
	git(t, dir, "branch", "chapter/09-old", "chapter/02-two") // as if chapter 10 had been removed
	git(t, dir, "mv", "chapters/02-two", "chapters/02-deux")
	git(t, dir, "commit", "-q", "-m", "Rename chapter 2")
	git(t, dir, "checkout", "-q", "--detach", "chapter/01-one")
	writeFile(t, dir, "mine.txt", "mine\n", 0o644)
	git(t, dir, "add", "mine.txt")
	git(t, dir, "commit", "-q", "-m", "My work")
	git(t, dir, "branch", "chapter/08-mine")
	git(t, dir, "checkout", "-q", "main")

	lines, err := makeBranches(t.Context(), &repo{dir: dir}, "HEAD")
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(lines, "\n")
	for _, want := range []string{"created   chapter/02-deux ", "deleted   chapter/02-two ", "deleted   chapter/09-old ", "kept      chapter/08-mine "} {
		if !strings.Contains(got, want) {
			t.Errorf("lines lack %q:\n%s", want, got)
		}
	}
	branches := git(t, dir, "branch", "--list", "chapter/*", "--format=%(refname:short)")
	if want := "chapter/01-one\nchapter/02-deux\nchapter/08-mine"; branches != want {
		t.Errorf("branches:\n%s\nwant\n%s", branches, want)
	}
}
