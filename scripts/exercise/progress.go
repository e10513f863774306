package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
)

// progress is what _exercise/progress.json keeps: the exercise started
// last, and per chapter what the learner did.
type progress struct {
	Current  int                         `json:"current"`
	Chapters map[string]*chapterProgress `json:"chapters"`
}

type chapterProgress struct {
	Started      bool   `json:"started"`
	Hints        int    `json:"hints"`
	SolutionSeen bool   `json:"solutionSeen"`
	LastCheck    string `json:"lastCheck,omitempty"` // passed, or where it stopped
	// The spec exercise's.
	SpecStarted   bool   `json:"specStarted,omitempty"`
	SpecHints     int    `json:"specHints,omitempty"`
	LastSpecCheck string `json:"lastSpecCheck,omitempty"`
}

func (p *progress) chapter(n int) *chapterProgress {
	if p.Chapters == nil {
		p.Chapters = map[string]*chapterProgress{}
	}
	k := strconv.Itoa(n)
	if p.Chapters[k] == nil {
		p.Chapters[k] = &chapterProgress{}
	}
	return p.Chapters[k]
}

const progressFile = "progress.json"

func (ex *exercises) readProgress() (*progress, error) {
	p := &progress{}
	data, err := os.ReadFile(ex.path(ex.dir, progressFile))
	if errors.Is(err, fs.ErrNotExist) {
		return p, nil
	}
	if err == nil {
		err = json.Unmarshal(data, p)
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w (delete it to start your progress again)", filepath.Join(ex.dir, progressFile), err)
	}
	return p, nil
}

func (ex *exercises) updateProgress(change func(*progress)) error {
	p, err := ex.readProgress()
	if err != nil {
		return err
	}
	change(p)
	return writeJSON(ex.path(ex.dir, progressFile), p)
}

func writeJSON(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}

// printProgress prints a line per chapter with an exercise.
func (ex *exercises) printProgress(w io.Writer) error {
	p, err := ex.readProgress()
	if err != nil {
		return err
	}
	for _, n := range ex.withExercise(taskFile) {
		dir, _ := ex.chapterDir(n)
		c := p.chapter(n)
		state := "not started (make exercise " + strconv.Itoa(n) + ")"
		if c.Started {
			state = "started"
			if c.LastCheck != "" {
				state = "last make check: " + c.LastCheck
			}
			state += fmt.Sprintf("; hints taken: %d", c.Hints)
			if c.SolutionSeen {
				state += "; solution seen"
			}
		}
		current := " "
		if n == p.Current {
			current = "*"
		}
		fmt.Fprintf(w, "%s %-22s %s\n", current, filepath.Base(dir), state)
	}
	for _, n := range ex.withExercise(specTaskFile) {
		dir, _ := ex.chapterDir(n)
		c := p.chapter(n)
		state := "not started (make exercise-spec " + strconv.Itoa(n) + ")"
		if c.SpecStarted {
			state = "started"
			if c.LastSpecCheck != "" {
				state = "last make check-spec: " + c.LastSpecCheck
			}
			state += fmt.Sprintf("; hints taken: %d", c.SpecHints)
		}
		fmt.Fprintf(w, "  %-22s %s\n", "spec-"+filepath.Base(dir), state)
	}
	return nil
}
