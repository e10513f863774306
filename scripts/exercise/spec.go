package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"

	"example.com/redis-operator/chapters"
)

// specFile is where the learner's spec of chapter N goes:
// _exercise/spec-NN-slug/spec_test.go.
func (e *exercise) specFile() string {
	return filepath.Join(filepath.Dir(e.workspace), "spec-"+filepath.Base(e.workspace), "spec_test.go")
}

// standsFor reads, from the skeleton's "Stands for:" line, the full text of
// the chapter's spec that the learner's stands for: its mutants are the
// ones the learner's spec must kill.
var standsFor = regexp.MustCompile(`(?m)^// Stands for: "(.+)"$`)

func (ex *exercises) specTarget(e *exercise) (string, error) {
	data, err := os.ReadFile(ex.path(e.chapterDir, "exercise", specTemplateFile))
	if err != nil {
		return "", err
	}
	m := standsFor.FindSubmatch(data)
	if m == nil {
		return "", fmt.Errorf("%s has no line // Stands for: \"the chapter's spec\"", filepath.Join(e.chapterDir, "exercise", specTemplateFile))
	}
	return string(m[1]), nil
}

// startSpec writes the spec exercise's skeleton, unless the learner has
// changed the one there (force overwrites).
func (ex *exercises) startSpec(e *exercise, force bool, w io.Writer) error {
	skeleton, err := os.ReadFile(ex.path(e.chapterDir, "exercise", specTemplateFile))
	if err != nil {
		return err
	}
	dst := ex.path(e.specFile())
	if old, err := os.ReadFile(dst); err == nil && !force && string(old) != string(skeleton) {
		return fmt.Errorf("%s has your spec: keep working on it (make check-spec %d), move it aside, or start again over it (make exercise-spec %d FORCE=yes)",
			e.specFile(), e.n, e.n)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(dst, skeleton, 0o644); err != nil {
		return err
	}
	if err := ex.updateProgress(func(p *progress) { p.Current = e.n; p.chapter(e.n).SpecStarted = true }); err != nil {
		return err
	}
	fmt.Fprintf(w, "Spec exercise %d, %s: your spec is %s, a skeleton to complete.\n", e.n, e.title(), e.specFile())
	fmt.Fprintf(w, "The task: %s\n", filepath.Join(e.chapterDir, "exercise", specTaskFile))
	red := fmt.Sprintf("red against chapter %d, green against chapter %d, the mutants killed", e.n-1, e.n)
	if row, err := chapters.Get(e.n); err == nil && row.ProvedByMutants {
		red = fmt.Sprintf("green against chapter %d, red against each of its mutants of the spec, which stand in for chapter %d", e.n, e.n-1)
	}
	fmt.Fprintf(w, "Then: make check-spec (%s); make hint-spec, one hint at a time.\n", red)
	return nil
}

// checkSpec runs prove --spec-exercise on the learner's spec, on the
// cluster that is up.
func (ex *exercises) checkSpec(e *exercise, c checkFlags, w io.Writer) (err error) {
	if _, err := os.Stat(ex.path(e.specFile())); err != nil {
		return fmt.Errorf("no spec exercise for chapter %d yet: make exercise-spec %d", e.n, e.n)
	}
	target, err := ex.specTarget(e)
	if err != nil {
		return err
	}
	defer func() {
		result := "passed"
		if err != nil {
			result = "failed"
		}
		if perr := ex.updateProgress(func(p *progress) { p.chapter(e.n).LastSpecCheck = result }); perr != nil && err == nil {
			err = perr
		}
	}()
	if err := ex.clusterUp(c); err != nil {
		return err
	}
	args := []string{"--chapter", fmt.Sprint(e.n), "--ginkgo", c.ginkgo, "--procs", fmt.Sprint(c.procs),
		"--output-dir", filepath.Join(c.out, "prove"), "--mutants-dir", filepath.Join(c.out, "mutants"),
		"--spec-exercise", e.specFile(), "--spec-target", target}
	if c.eventually != "" {
		args = append(args, "--eventually-timeout", c.eventually)
	}
	// prove judges a spec exercise of a chapter proven by its mutants
	// against them, as the table of chapters says.
	if err := ex.run(w, w, c.prove, args...); err != nil {
		return errors.New("make check-spec found what your spec does not prove yet (above)")
	}
	return nil
}
