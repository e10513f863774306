package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"example.com/redis-operator/chapters"
)

// lessonsPassed starts the line of prove --check that says the lesson
// specs passed (prove's lessonsPassed).
const lessonsPassed = "=== Lessons:"

// checkGoal is what make check should take on a warm local cluster, from
// the command to the lesson specs' verdict; envtestGoal the same for a
// chapter whose lesson specs are judged on an API server alone first,
// already started (make check leaves it running), to their verdict there.
const (
	checkGoal   = 60 * time.Second
	envtestGoal = 15 * time.Second
)

// bench times make check of chapter N's exercise, solved with the
// chapter's own package, in a scratch directory: a warm-up run, then
// rounds runs, each timed from its start to the lesson specs' verdict
// and to the whole suite's. It fails if the median to the lessons'
// verdict is over checkGoal.
func (ex *exercises) bench(e *exercise, c checkFlags, rounds int, w io.Writer) error {
	row, err := chapters.Get(e.n)
	if err != nil {
		return err
	}
	goal, where := checkGoal, "on the test cluster"
	if row.APIServerRung {
		goal, where = envtestGoal, "on an API server alone (envtest)"
	}
	if err := ex.start(e, true, false, io.Discard); err != nil {
		return err
	}
	// The reference: chapter N's own package, in the workspace.
	files, err := packageFiles(ex.path(e.chapterDir))
	if err != nil {
		return err
	}
	for _, f := range files {
		data, err := os.ReadFile(ex.path(e.chapterDir, f))
		if err != nil {
			return err
		}
		dst := ex.path(e.workspace, f)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(dst, data, 0o644); err != nil {
			return err
		}
	}
	fmt.Fprintf(w, "make check of exercise %d (%s, with chapter %d's own package): a warm-up, then %d timed runs; its lesson specs are judged first %s\n", e.n, e.workspace, e.n, rounds, where)
	var toLessons, toAll []time.Duration
	for i := 0; i <= rounds; i++ {
		lessons, all, err := ex.timeCheck(e, c)
		if err != nil {
			return err
		}
		if i == 0 {
			fmt.Fprintf(w, "  warm-up: lesson specs' verdict after %s, the whole suite's after %s\n", round(lessons), round(all))
			continue
		}
		fmt.Fprintf(w, "  run %d:   lesson specs' verdict after %s, the whole suite's after %s\n", i, round(lessons), round(all))
		toLessons, toAll = append(toLessons, lessons), append(toAll, all)
	}
	m := median(toLessons)
	verdict := "PASS"
	if m > goal {
		verdict = "FAIL"
	}
	fmt.Fprintf(w, "median: lesson specs' verdict %s after %s (goal: under %s: %s), the whole suite's after %s\n",
		where, round(m), goal, verdict, round(median(toAll)))
	if verdict == "FAIL" {
		return fmt.Errorf("make check of exercise %d takes %s to the lesson specs' verdict %s, over the goal of %s", e.n, round(m), where, goal)
	}
	return nil
}

// timeCheck runs one make check and returns how long it took to the
// lesson specs' verdict and to its end. Its output is kept and shown only
// if it fails.
func (ex *exercises) timeCheck(e *exercise, c checkFlags) (lessons, all time.Duration, err error) {
	start := time.Now()
	var out bytes.Buffer
	lw := &lineWatch{w: &out, mark: lessonsPassed, start: start}
	if err := ex.check(e, c, lw); err != nil {
		return 0, 0, fmt.Errorf("make check of the reference failed: %w\n%s", err, out.String())
	}
	all = time.Since(start)
	if lw.at == 0 {
		return 0, 0, errors.New("make check passed but never said that the lesson specs did:\n" + out.String())
	}
	return lw.at, all, nil
}

// lineWatch writes through to w and notes when a line starting with mark
// was first written.
type lineWatch struct {
	mu    sync.Mutex
	w     io.Writer
	mark  string
	start time.Time
	at    time.Duration
	line  []byte
}

func (l *lineWatch) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, b := range p {
		if b != '\n' {
			l.line = append(l.line, b)
			continue
		}
		if l.at == 0 && strings.HasPrefix(string(l.line), l.mark) {
			l.at = time.Since(l.start)
		}
		l.line = l.line[:0]
	}
	return l.w.Write(p)
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

func round(d time.Duration) time.Duration { return d.Round(100 * time.Millisecond) }
