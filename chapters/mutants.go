package chapters

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// A Mutant is a deliberate bug in a chapter: a patch in
// chapters/NN-slug/mutants/NAME.patch, against the chapter's directory,
// that starts with what it is:
//
//	Bug: what the patch breaks.
//	Why: why someone would write it.
//	Spec: the full text of the spec that must catch it.
//	Step: the step (By or LessonStep) that spec must fail in.
//
// Each field is one line, or more: a line that starts with a space goes on
// the field above. The diff follows (patch -p1 reads it; the header is
// text it skips). A mutant is killed when its spec, run against the
// chapter with the patch applied, fails in its own body, in that step; it
// survives if the spec passes, and it proves nothing if the spec fails
// anywhere else (its setup, another step): the spec may catch another
// mistake there, not this one.
type Mutant struct {
	Chapter                    int
	Name, Path                 string
	Bug, Why, Spec, Step, Diff string
}

// mutantFields are the header's fields, in the order the header gives
// them.
var mutantFields = []string{"Bug", "Why", "Spec", "Step"}

// ReadMutants reads the mutants of chapter in dir (chapters/NN-slug), in
// the order of their names; only, if not empty, names the one to read.
func ReadMutants(chapterDir string, chapter int, only string) ([]*Mutant, error) {
	paths, err := filepath.Glob(filepath.Join(chapterDir, "mutants", "*.patch"))
	if err != nil {
		return nil, err
	}
	slices.Sort(paths)
	var ms []*Mutant
	var names []string
	for _, p := range paths {
		name := strings.TrimSuffix(filepath.Base(p), ".patch")
		names = append(names, name)
		if only != "" && name != only {
			continue
		}
		m, err := ParseMutant(p)
		if err != nil {
			return nil, err
		}
		m.Chapter, m.Name = chapter, name
		ms = append(ms, m)
	}
	if only != "" && len(ms) == 0 {
		return nil, fmt.Errorf("chapter %d has no mutant %q (it has: %s)", chapter, only, strings.Join(names, ", "))
	}
	return ms, nil
}

// ParseMutant reads a mutant's header and keeps its diff.
func ParseMutant(path string) (*Mutant, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	m := &Mutant{Path: path}
	fields := map[string]*string{"Bug": &m.Bug, "Why": &m.Why, "Spec": &m.Spec, "Step": &m.Step}
	var last *string
	lines := strings.SplitAfter(string(data), "\n")
	for i, l := range lines {
		text := strings.TrimRight(l, "\n")
		if strings.HasPrefix(text, "diff ") || strings.HasPrefix(text, "--- ") {
			m.Diff = strings.Join(lines[i:], "")
			break
		}
		if strings.TrimSpace(text) == "" {
			last = nil
			continue
		}
		if last != nil && (text[0] == ' ' || text[0] == '\t') {
			*last += " " + strings.TrimSpace(text)
			continue
		}
		key, value, ok := strings.Cut(text, ":")
		f, known := fields[key]
		if !ok || !known {
			return nil, fmt.Errorf("%s:%d: want a header line %s: ..., or the diff; got %q", path, i+1, strings.Join(mutantFields, ": ..., "), text)
		}
		*f, last = strings.TrimSpace(value), f
	}
	for _, k := range mutantFields {
		if *fields[k] == "" {
			return nil, fmt.Errorf("%s: no %s: line (a mutant says %s)", path, k, strings.Join(mutantFields, ", "))
		}
	}
	if m.Diff == "" {
		return nil, fmt.Errorf("%s: no diff after the header", path)
	}
	return m, nil
}
