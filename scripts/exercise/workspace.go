package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"example.com/redis-operator/chapters"
)

// exercises are the course's exercises, and the learner's workspaces and
// progress under dir.
type exercises struct {
	root string // the course's checkout
	dir  string // _exercise, relative to root
}

// exercise is chapter N's: the learner writes its lesson into a copy of
// chapter N-1's package.
type exercise struct {
	n          int
	chapterDir string // chapters/NN-slug
	prevDir    string // chapters/(N-1)-slug; a rewrite's: its own, chapterDir
	workspace  string // _exercise/NN-slug
	// rewrite is set when the chapter rewrites an earlier one: it starts
	// from its own package.
	rewrite bool
}

// title is the chapter's name, as its directory spells it: "rebuild pods".
func (e *exercise) title() string {
	_, slug, _ := strings.Cut(filepath.Base(e.chapterDir), "-")
	return strings.ReplaceAll(slug, "-", " ")
}

// taskFile and hintsFile are in each chapter's exercise/ directory, and
// so are the spec exercise's pages and skeleton.
const (
	taskFile         = "TASK.md"
	hintsFile        = "HINTS.md"
	specTaskFile     = "SPEC.md"
	specHintsFile    = "SPEC-HINTS.md"
	specTemplateFile = "spec_test.go.tmpl"
	// startPatchFile, where chapter N's tests use a name that chapter N-1
	// lacks, adds it to the start as a stub that compiles and does
	// nothing (patch -p1 against chapter N-1's package; chapter 1's
	// creates the whole start). Its header says what it adds and
	// changes, in "Adds:" and "Changes:" lines.
	startPatchFile = "start.patch"
	// startFile, in a workspace, records the hash of each file start
	// wrote.
	startFile = ".start"
)

func (ex *exercises) path(p ...string) string {
	return filepath.Join(append([]string{ex.root}, p...)...)
}

// chapterDir is chapter n's directory (the table of chapters says
// which), relative to the course, if the course has it.
func (ex *exercises) chapterDir(n int) (string, bool) {
	c, err := chapters.Get(n)
	if err != nil {
		return "", false
	}
	if _, err := os.Stat(ex.path(c.Dir())); err != nil {
		return "", false
	}
	return c.Dir(), true
}

// withExercise lists the chapters that have an exercise of a kind: its
// page, taskFile for the code exercise, specTaskFile for the spec one.
func (ex *exercises) withExercise(page string) []int {
	var ns []int
	for _, c := range chapters.All {
		if _, err := os.Stat(ex.path(c.Dir(), "exercise", page)); err == nil {
			ns = append(ns, c.Number)
		}
	}
	return ns
}

// exercise is chapter n's exercise of the kind that page (taskFile or
// specTaskFile) describes.
func (ex *exercises) exercise(n int, page string) (*exercise, error) {
	kind := "an exercise"
	if page == specTaskFile {
		kind = "a spec exercise"
	}
	dir, ok := ex.chapterDir(n)
	if !ok {
		return nil, fmt.Errorf("no chapter %d; the chapters with %s: %s", n, kind, list(ex.withExercise(page)))
	}
	if _, err := os.Stat(ex.path(dir, "exercise", page)); err != nil {
		return nil, fmt.Errorf("chapter %d has no %s yet; the chapters with one: %s", n, strings.TrimPrefix(strings.TrimPrefix(kind, "an "), "a "), list(ex.withExercise(page)))
	}
	// A chapter that rewrites an earlier one (the table of chapters) has
	// no chapter before to start from: its exercise starts from its own
	// package with its lesson taken out (start.patch), and every unit test
	// of the chapter is the lesson's.
	if row, err := chapters.Get(n); err == nil && row.Rewrites != 0 {
		return &exercise{n: n, chapterDir: dir, prevDir: dir, workspace: filepath.Join(ex.dir, filepath.Base(dir)), rewrite: true}, nil
	}
	// Chapter 1's exercise starts from no chapter: its start.patch makes
	// the whole package, an empty reconciler.
	prev, ok := ex.chapterDir(n - 1)
	if !ok && n != 1 {
		return nil, fmt.Errorf("chapter %d's exercise starts from chapter %d, which is missing", n, n-1)
	}
	return &exercise{n: n, chapterDir: dir, prevDir: prev, workspace: filepath.Join(ex.dir, filepath.Base(dir))}, nil
}

// prevPath is the path of chapter N-1's package, whose tests are not the
// lesson's, or "" for chapter 1's exercise, which starts from none, and a
// rewrite's, all of whose tests are the lesson's.
func (ex *exercises) prevPath(e *exercise) string {
	if e.prevDir == "" || e.rewrite {
		return ""
	}
	return ex.path(e.prevDir)
}

func list(ns []int) string {
	if len(ns) == 0 {
		return "none"
	}
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = fmt.Sprint(n)
	}
	return strings.Join(s, ", ")
}

// packageFiles lists the files of a chapter's package that a workspace
// holds: its Go files, not its tests, and its crd/ (chapter 11 on), as
// paths relative to dir.
func packageFiles(dir string) ([]string, error) {
	var files []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() {
			if rel != "." && rel != "crd" && !strings.HasPrefix(rel, "crd"+string(filepath.Separator)) {
				return filepath.SkipDir
			}
			return nil
		}
		inCRD := strings.HasPrefix(rel, "crd"+string(filepath.Separator))
		if inCRD || strings.HasSuffix(rel, ".go") && !strings.HasSuffix(rel, "_test.go") {
			files = append(files, rel)
		}
		return nil
	})
	return files, err
}

// start copies chapter N-1's package into the workspace, unless the
// learner changed what an earlier start wrote there (force overwrites).
// With cont, it copies the learner's own workspace of chapter N-1's
// exercise instead, once that has passed make check.
func (ex *exercises) start(e *exercise, force, cont bool, w io.Writer) error {
	ws := ex.path(e.workspace)
	from := e.prevDir // the package the workspace starts from, relative to root
	if cont {
		var err error
		if from, err = ex.ownPrevious(e); err != nil {
			return err
		}
	}
	if !force {
		changed, err := changedFiles(ws)
		if err != nil {
			return err
		}
		if len(changed) > 0 {
			return fmt.Errorf("%s has your changes (%s): keep working on it (make check %d), move it aside (mv %s %s.mine), or start again over it (make exercise %d FORCE=yes)",
				e.workspace, strings.Join(changed, ", "), e.n, e.workspace, e.workspace, e.n)
		}
	}
	var files []string // none for chapter 1: its start.patch makes the package
	if from != "" {
		var err error
		if files, err = packageFiles(ex.path(from)); err != nil {
			return err
		}
	}
	if err := os.RemoveAll(ws); err != nil {
		return err
	}
	if err := os.MkdirAll(ws, 0o755); err != nil {
		return err
	}
	for _, f := range files {
		data, err := os.ReadFile(ex.path(from, f))
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(ws, f)), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(ws, f), data, 0o644); err != nil {
			return err
		}
	}
	stubs, err := ex.applyStartPatch(e, from)
	if err != nil {
		// No half-made workspace is left; nothing of the learner's is in
		// it (their own chapter N-1, if it came from there, is untouched).
		os.RemoveAll(ws)
		return err
	}
	if files, err = packageFiles(ws); err != nil {
		return err
	}
	hashes := map[string]string{}
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join(ws, f))
		if err != nil {
			return err
		}
		hashes[filepath.ToSlash(f)] = hash(data)
	}
	if err := writeJSON(filepath.Join(ws, startFile), hashes); err != nil {
		return err
	}
	if err := ex.updateProgress(func(p *progress) { p.Current = e.n; p.chapter(e.n).Started = true }); err != nil {
		return err
	}
	switch {
	case e.rewrite:
		fmt.Fprintf(w, "Exercise %d, %s: your workspace is %s, chapter %d's own package with its lesson taken out.\n%s", e.n, e.title(), e.workspace, e.n, stubs)
	case cont:
		fmt.Fprintf(w, "Exercise %d, %s: your workspace is %s, your own chapter %d from %s.\n%s", e.n, e.title(), e.workspace, e.n-1, from, stubs)
	case e.prevDir == "":
		fmt.Fprintf(w, "Exercise %d, %s: your workspace is %s, an empty operator to fill in.\n%s", e.n, e.title(), e.workspace, stubs)
	case stubs == "":
		fmt.Fprintf(w, "Exercise %d, %s: your workspace is %s, chapter %d's package.\n", e.n, e.title(), e.workspace, e.n-1)
	default:
		fmt.Fprintf(w, "Exercise %d, %s: your workspace is %s, chapter %d's package with stubs for what chapter %d's tests call.\n%s", e.n, e.title(), e.workspace, e.n-1, e.n, stubs)
	}
	fmt.Fprintf(w, "The task: %s\n", filepath.Join(e.chapterDir, "exercise", taskFile))
	fmt.Fprintf(w, "Then: make check (it builds, passes chapter %d's lesson unit tests, then its specs on the cluster that is up); make hint, one hint at a time; make solution, the diff to the chapter.\n", e.n)
	return nil
}

// ownPrevious is the learner's workspace of chapter N-1's exercise, for
// chapter N's to continue from: it must exist and have passed make check.
func (ex *exercises) ownPrevious(e *exercise) (string, error) {
	if e.prevDir == "" {
		return "", fmt.Errorf("chapter %d's exercise starts from an empty operator: there is no exercise before it to continue from (make exercise %d)", e.n, e.n)
	}
	if e.rewrite {
		return "", fmt.Errorf("chapter %d rewrites an earlier chapter, and its exercise starts from its own package with its lesson taken out: there is no exercise before it to continue from (make exercise %d)", e.n, e.n)
	}
	prev := filepath.Join(ex.dir, filepath.Base(e.prevDir))
	if _, err := os.Stat(ex.path(prev)); err != nil {
		return "", fmt.Errorf("no workspace of chapter %d's exercise (%s) to continue from: make exercise %d starts from chapter %d's own package", e.n-1, prev, e.n, e.n-1)
	}
	p, err := ex.readProgress()
	if err != nil {
		return "", err
	}
	if last := p.chapter(e.n - 1).LastCheck; last != "passed" {
		if last == "" {
			last = "never run"
		}
		return "", fmt.Errorf("your chapter %d (%s) has not passed make check %d (last: %s): make it pass first, or start from chapter %d's own package: make exercise %d",
			e.n-1, prev, e.n-1, last, e.n-1, e.n)
	}
	return prev, nil
}

// applyStartPatch applies the exercise's start.patch, if it has one, to
// the workspace (a copy of from), and returns its header's "Adds:" and
// "Changes:" lines.
func (ex *exercises) applyStartPatch(e *exercise, from string) (string, error) {
	path := ex.path(e.chapterDir, "exercise", startPatchFile)
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	// patch opens its input after it changes to the directory.
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	cmd := exec.Command("patch", "-p1", "--quiet", "--no-backup-if-mismatch", "--directory", ex.path(e.workspace), "--input", abs)
	if out, err := cmd.CombinedOutput(); err != nil {
		if from != e.prevDir {
			return "", fmt.Errorf("%s, which adds the stubs that chapter %d's tests call, does not apply to your %s (%v):\n%sstart from chapter %d's own package (make exercise %d), or add what its Adds: and Changes: lines say to a copy of yours",
				filepath.Join(e.chapterDir, "exercise", startPatchFile), e.n, from, err, out, e.n-1, e.n)
		}
		return "", fmt.Errorf("%s does not apply to the package it starts from (%s): %v\n%s", filepath.Join(e.chapterDir, "exercise", startPatchFile), e.prevDir, err, out)
	}
	var header strings.Builder
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, "--- ") || strings.HasPrefix(line, "diff ") {
			break
		}
		if strings.HasPrefix(line, "Adds:") || strings.HasPrefix(line, "Changes:") || strings.HasPrefix(line, " ") && header.Len() > 0 {
			header.WriteString(line + "\n")
		}
	}
	return header.String(), nil
}

// changedFiles lists the files of a workspace that differ from what start
// wrote, or that start did not write; none if there is no workspace.
func changedFiles(ws string) ([]string, error) {
	if _, err := os.Stat(ws); errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	var hashes map[string]string
	data, err := os.ReadFile(filepath.Join(ws, startFile))
	if err == nil {
		err = json.Unmarshal(data, &hashes)
	}
	if err != nil {
		// Not a workspace start wrote, or its record is damaged: all of it
		// may be the learner's.
		return []string{"everything: it has no record of its start"}, nil
	}
	var changed []string
	seen := map[string]bool{}
	err = filepath.WalkDir(ws, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(ws, p)
		rel = filepath.ToSlash(rel)
		if rel == startFile {
			return nil
		}
		seen[rel] = true
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if hashes[rel] != hash(data) {
			changed = append(changed, rel)
		}
		return nil
	})
	for _, f := range slices.Sorted(maps.Keys(hashes)) {
		if !seen[f] {
			changed = append(changed, f+" (deleted)")
		}
	}
	return changed, err
}

func hash(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// requireWorkspace fails with what to do when the learner has not started
// the exercise.
func (ex *exercises) requireWorkspace(e *exercise) error {
	if _, err := os.Stat(ex.path(e.workspace)); err != nil {
		return fmt.Errorf("no exercise for chapter %d yet: make exercise %d", e.n, e.n)
	}
	return nil
}

// hint prints the next hint of the chapter's HINTS.md (SPEC-HINTS.md for
// the spec exercise): its "## " sections, in order.
func (ex *exercises) hint(e *exercise, spec bool, w io.Writer) error {
	page, last := hintsFile, fmt.Sprintf("make solution shows the diff from your workspace to chapter %d", e.n)
	if spec {
		page, last = specHintsFile, "the chapter's own spec is in tests/framework"
		if _, err := os.Stat(ex.path(e.specFile())); err != nil {
			return fmt.Errorf("no spec exercise for chapter %d yet: make exercise-spec %d", e.n, e.n)
		}
	} else if err := ex.requireWorkspace(e); err != nil {
		return err
	}
	data, err := os.ReadFile(ex.path(e.chapterDir, "exercise", page))
	if err != nil {
		return fmt.Errorf("chapter %d's exercise has no hints", e.n)
	}
	hints := sections(string(data))
	p, err := ex.readProgress()
	if err != nil {
		return err
	}
	c := p.chapter(e.n)
	taken := &c.Hints
	if spec {
		taken = &c.SpecHints
	}
	if *taken >= len(hints) {
		fmt.Fprintf(w, "That was the last of the %d hints; %s.\n", len(hints), last)
		return nil
	}
	fmt.Fprintf(w, "Hint %d of %d: %s\n", *taken+1, len(hints), hints[*taken])
	next := *taken + 1
	return ex.updateProgress(func(p *progress) {
		if spec {
			p.chapter(e.n).SpecHints = next
		} else {
			p.chapter(e.n).Hints = next
		}
	})
}

// sections splits a Markdown page at its "## " headings; what comes
// before the first is not a section.
func sections(md string) []string {
	var out []string
	for _, part := range strings.Split("\n"+md, "\n## ")[1:] {
		out = append(out, strings.TrimSpace(part))
	}
	return out
}

// solution prints the diff from the workspace's package files to chapter
// N's.
func (ex *exercises) solution(e *exercise, w io.Writer) error {
	if err := ex.requireWorkspace(e); err != nil {
		return err
	}
	cmd := exec.Command("diff", "-ruN", "-x", "*_test.go", "-x", "*.md", "-x", "role.yaml", "-x", "manifests.yaml", "-x", "mutants", "-x", "exercise", "-x", startFile,
		e.workspace, e.chapterDir)
	cmd.Dir = ex.root
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	var exit *exec.ExitError
	switch {
	case err == nil:
		fmt.Fprintf(w, "Your workspace is chapter %d's package.\n", e.n)
	case errors.As(err, &exit) && exit.ExitCode() == 1:
		// They differ: the diff is the answer, without diff's command
		// lines and the files' times.
		for _, l := range strings.SplitAfter(string(out), "\n") {
			if strings.HasPrefix(l, "diff -ruN ") {
				continue
			}
			if strings.HasPrefix(l, "--- ") || strings.HasPrefix(l, "+++ ") {
				l, _, _ = strings.Cut(l, "\t")
				l += "\n"
			}
			fmt.Fprint(w, l)
		}
	default:
		return fmt.Errorf("diff: %w", err)
	}
	return ex.updateProgress(func(p *progress) { p.chapter(e.n).SolutionSeen = true })
}
