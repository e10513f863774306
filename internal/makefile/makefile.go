// Package makefile reads what GNU make made of a Makefile, as `make -p`
// prints it, without running a recipe: each rule with the prerequisites
// as Make expanded them when it read the rule, its recipe as written, and
// the variables. The course's tests use it to check that a target builds
// what its recipe runs, which a rule reading a variable defined further
// down silently breaks: Make expands a rule's prerequisites when it reads
// the rule, so the variable is still empty there.
package makefile

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// Rule is a target of the database.
type Rule struct {
	// Prereqs are the prerequisites, expanded as Make read the rule (the
	// order-only ones too).
	Prereqs []string
	// Recipe is the recipe as written, its variables unexpanded.
	Recipe string
}

// Database is what Make read from a Makefile for one command line.
type Database struct {
	// Rules are the targets, by name ("Not a target" entries left out).
	Rules map[string]Rule
	// Vars are the variables' values as Make keeps them: expanded for
	// `:=`, as written for `=`.
	Vars map[string]string
	// Undefined lists make --warn-undefined-variables's warnings while it
	// read the Makefile: each a variable expanded before anything defined
	// it, as "Makefile:12: warning: undefined variable 'X'".
	Undefined []string
}

// Input says which Makefile to read and as what command line.
type Input struct {
	// Dir is where make runs; File the Makefile, relative to Dir (default
	// Make's own choice).
	Dir, File string
	// Goals are the command line's goals, as in "test-chapter 3": the
	// Makefile sees them in MAKECMDGOALS, but Make builds none of them.
	Goals string
	// Vars are the command line's variables, as in "VARIANT=dir"; the
	// environment is this process's, less what a make running it passes
	// down (its flags, its command line's variables).
	Vars []string
}

// noop is the one goal Make is asked to build: a rule that does nothing.
// Even -n and -q run a recipe line that names $(MAKE), so the real goals
// are given as MAKECMDGOALS only.
const noop = "__makefile_database"

// Read runs make -p for in and parses what it prints.
func Read(in Input) (*Database, error) {
	args := []string{"--no-print-directory", "-p", "-q", "--warn-undefined-variables", "--eval", noop + ": ; @:"}
	if in.File != "" {
		args = append(args, "-f", in.File)
	}
	args = append(args, "MAKECMDGOALS="+in.Goals)
	args = append(args, in.Vars...)
	args = append(args, noop)
	cmd := exec.Command("make", args...)
	cmd.Dir = in.Dir
	// Not what a make running this passes down to its children: its
	// flags and its command line's variables.
	for _, kv := range os.Environ() {
		switch name, _, _ := strings.Cut(kv, "="); name {
		case "MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES":
		default:
			cmd.Env = append(cmd.Env, kv)
		}
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	// -q exits 1 when the goal is not up to date; only a failure to read
	// the Makefile (2) is an error.
	if err := cmd.Run(); err != nil {
		if exit, ok := err.(*exec.ExitError); !ok || exit.ExitCode() != 1 {
			return nil, fmt.Errorf("make %s: %w: %s", strings.Join(args, " "), err, stderr.Bytes())
		}
	}
	db, err := parse(stdout.String())
	if err != nil {
		return nil, fmt.Errorf("make %s: %w", strings.Join(args, " "), err)
	}
	for _, line := range strings.Split(stderr.String(), "\n") {
		if strings.Contains(line, "warning: undefined variable") {
			db.Undefined = append(db.Undefined, line)
		}
	}
	// Make, not this process, read the makefiles: stat each, so that go
	// test, which caches a test's result until a file it opened or
	// stat'ed changes, runs it again when one of them does.
	read := map[string]bool{}
	for _, m := range readFrom.FindAllStringSubmatch(stdout.String(), -1) {
		read[m[1]] = true
	}
	for f := range read {
		if !filepath.IsAbs(f) {
			f = filepath.Join(in.Dir, f)
		}
		_, _ = os.Stat(f)
	}
	return db, nil
}

// readFrom finds the makefiles that make -p says it read something from.
var readFrom = regexp.MustCompile(`\(from '([^']+)', line \d+\)`)

var (
	ruleLine = regexp.MustCompile(`^([^#\t][^:=]*?)::?(?:\s+(.*))?$`)
	varLine  = regexp.MustCompile(`^([^#\t\s][^\s:?+!=]*) (:=|::=|=|\?=|\+=|!=) ?(.*)$`)
)

// parse reads make -p's output: the "# Variables" section, then the
// "# Files" section's rules.
func parse(out string) (*Database, error) {
	db := &Database{Rules: map[string]Rule{}, Vars: map[string]string{}}
	section := ""
	var lines []string
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		switch line {
		case "# Variables", "# Files", "# Directories", "# Implicit Rules", "# VPATH Search Paths", "# Pattern-specific Variable Values":
			section = line
			continue
		}
		switch section {
		case "# Variables":
			if m := varLine.FindStringSubmatch(line); m != nil && i > 0 && strings.HasPrefix(lines[i-1], "# ") {
				db.Vars[m[1]] = m[3]
			}
		case "# Files":
			if i > 0 && lines[i-1] == "# Not a target:" {
				continue
			}
			m := ruleLine.FindStringSubmatch(line)
			if m == nil {
				continue
			}
			rule := Rule{Prereqs: strings.Fields(strings.ReplaceAll(m[2], "|", " "))}
			var recipe []string
			for i+1 < len(lines) && lines[i+1] != "" {
				i++
				if !strings.HasPrefix(lines[i], "#") || len(recipe) > 0 {
					recipe = append(recipe, lines[i])
				}
			}
			rule.Recipe = strings.Join(recipe, "\n")
			db.Rules[m[1]] = rule
		}
	}
	if len(db.Rules) == 0 || len(db.Vars) == 0 {
		return nil, fmt.Errorf("no rules or no variables in its database")
	}
	return db, nil
}

// Closure is target and every target it needs, its prerequisites'
// prerequisites included.
func (db *Database) Closure(target string) map[string]bool {
	seen := map[string]bool{}
	var walk func(string)
	walk = func(t string) {
		if seen[t] {
			return
		}
		seen[t] = true
		for _, p := range db.Rules[t].Prereqs {
			walk(p)
		}
	}
	walk(target)
	return seen
}

var reference = regexp.MustCompile(`\$[({]([A-Za-z_][A-Za-z0-9_.-]*)[)}]`)

// Expand replaces in text each plain reference to a variable, $(NAME) or
// ${NAME}, with its value in the database, over and over; a function's
// text stays, with the references in its arguments replaced, so that
// $(if $(V),$(A),$(B)) names both A's and B's values. Enough to see which
// paths a recipe names; not what Make would make of it.
func (db *Database) Expand(text string) string {
	for range 20 {
		next := reference.ReplaceAllStringFunc(text, func(ref string) string {
			name := reference.FindStringSubmatch(ref)[1]
			if v, ok := db.Vars[name]; ok {
				return v
			}
			return ref
		})
		if next == text {
			break
		}
		text = next
	}
	return text
}

// PathsUnder lists the paths directly under dir (dir/NAME) that the
// recipe of target names, its variables expanded (Expand).
func (db *Database) PathsUnder(target, dir string) []string {
	re := regexp.MustCompile(regexp.QuoteMeta(strings.TrimSuffix(dir, "/")+"/") + `[A-Za-z0-9_.+-]+`)
	seen := map[string]bool{}
	for _, p := range re.FindAllString(db.Expand(db.Rules[target].Recipe), -1) {
		seen[p] = true
	}
	paths := make([]string, 0, len(seen))
	for p := range seen {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	return paths
}

// Builds reports whether target's recipe makes path: `-o path` (go
// build), or path is the target itself (a file rule).
func (db *Database) Builds(target, path string) bool {
	if target == path {
		return true
	}
	return regexp.MustCompile(`(^|\s)-o\s+` + regexp.QuoteMeta(path) + `(\s|$)`).MatchString(db.Expand(db.Rules[target].Recipe))
}

// Missing lists those of needs (targets, or files such as "$(GINKGO)",
// expanded with the Makefile's variables) that are not among target's
// prerequisites, its prerequisites' included.
func (db *Database) Missing(target string, needs ...string) []string {
	closure := db.Closure(target)
	var missing []string
	for _, need := range needs {
		if !closure[db.Expand(need)] {
			missing = append(missing, need)
		}
	}
	return missing
}
