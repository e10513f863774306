package main

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// verifyBranches checks, in a scratch directory and one after the other,
// the commits that makeBranches would point the branches at, without
// moving any branch: each builds, and its own `make test` passes (go vet,
// gofmt, go.mod tidy, generated files up to date, unit tests; no cluster),
// and git's diff of each chapter's controller and role against the chapter
// before is the course's `make diff-chapter N`. binDir is where the
// branches' Makefiles find or build their tools (controller-gen); workDir,
// if not empty, the directory each branch is written to in turn, in place
// of one in the scratch directory: go's caches key a package on its
// directory too, so a branch that did not change since the last run in the
// same directory builds and tests from them.
func verifyBranches(ctx context.Context, r *repo, rev, binDir, workDir string, w io.Writer) error {
	// diff(1) translates its messages ("No newline at end of file"); git
	// does not. The diffs compared must be in the same words.
	if err := os.Setenv("LC_ALL", "C"); err != nil {
		return err
	}
	s, err := readSource(ctx, r, rev)
	if err != nil {
		return err
	}
	defer s.close()
	commits, err := buildCommits(ctx, r, s)
	if err != nil {
		return err
	}
	scratch, err := os.MkdirTemp("", "chapter-branches-verify-")
	if err != nil {
		return err
	}
	if binDir == "" {
		binDir = filepath.Join(scratch, "bin")
	}
	if binDir, err = filepath.Abs(binDir); err != nil {
		return err
	}
	if workDir == "" {
		workDir = filepath.Join(scratch, "branch")
	} else {
		unlock, err := lockDir(workDir)
		if err != nil {
			return err
		}
		defer unlock()
	}
	if workDir, err = filepath.Abs(workDir); err != nil {
		return err
	}
	if err := verifyIn(ctx, r, s, commits, scratch, binDir, workDir, w); err != nil {
		return fmt.Errorf("%w (the scratch directory %s is kept)", err, scratch)
	}
	return os.RemoveAll(scratch)
}

func verifyIn(ctx context.Context, r *repo, s *source, commits []built, scratch, binDir, work string, w io.Writer) error {
	course := filepath.Join(scratch, "course")
	// The chapters, and the files outside them that a chapter's lesson
	// adds, for make diff-chapter.
	paths := slices.Collect(maps.Keys(s.files))
	toExtract := []string{"chapters", "scripts/diff-chapter.sh"}
	for _, c := range s.chapters {
		toExtract = append(toExtract, arrivals(c.Number, paths)...)
	}
	if err := extract(ctx, r, s.commit, course, toExtract...); err != nil {
		return err
	}
	// One path for every branch, so that go's build cache serves what a
	// branch shares with the one before.
	for i, b := range commits {
		fmt.Fprintf(w, "%s %s\n", b.chapter.Branch(), short(b.commit))
		if err := os.RemoveAll(work); err != nil {
			return err
		}
		if err := extract(ctx, r, b.commit, work); err != nil {
			return err
		}
		// make test: go vet compiles every package, tests and tags
		// included, and go test links the test binaries, cmd's among them
		// (the operator's main package). (Linking the operator's binary
		// too, or the branch's scripts, which the course's CI links and
		// runs, would cost CPU and prove nothing more.)
		if err := runStep(ctx, w, work, "make", "--no-print-directory", "test", "BIN="+binDir); err != nil {
			return fmt.Errorf("%s: %w", b.chapter.Branch(), err)
		}
		if i > 0 {
			prev := commits[base(b.chapter.Number)-commits[0].chapter.Number]
			if err := compareDiffs(ctx, r, course, s.module, arrivals(b.chapter.Number, paths), prev, b, w); err != nil {
				return fmt.Errorf("%s: %w", b.chapter.Branch(), err)
			}
		}
	}
	return nil
}

// runStep runs a command in dir, says how long it took, and shows its
// output only when it fails.
func runStep(ctx context.Context, w io.Writer, dir string, args ...string) error {
	start := time.Now()
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.Dir = dir
	// A branch is a module of its own; nothing of the make or go.work that
	// runs the generator applies to it, and its output is its own.
	cmd.Env = slices.DeleteFunc(os.Environ(), func(kv string) bool {
		name, _, _ := strings.Cut(kv, "=")
		return slices.Contains([]string{"MAKEFLAGS", "MAKELEVEL", "MFLAGS", "MAKEOVERRIDES", "GOWORK", "GOFLAGS", "OUTPUT_DIR"}, name)
	})
	cmd.Env = append(cmd.Env, "GOWORK=off")
	out, err := cmd.CombinedOutput()
	line := strings.Join(args, " ")
	if err != nil {
		fmt.Fprintf(w, "%s\n", out)
		return fmt.Errorf("%s: %w", line, err)
	}
	fmt.Fprintf(w, "  %-40s ok (%.0fs)\n", line, time.Since(start).Seconds())
	return nil
}

// extract writes the tree of commit (or those of its paths) into dir.
func extract(ctx context.Context, r *repo, commit, dir string, paths ...string) error {
	archive, err := r.run(ctx, nil, nil, append([]string{"archive", "--format=tar", commit, "--"}, paths...)...)
	if err != nil {
		return err
	}
	tr := tar.NewReader(strings.NewReader(archive))
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		target := filepath.Join(dir, filepath.FromSlash(h.Name))
		switch h.Typeflag {
		case tar.TypeDir:
			err = os.MkdirAll(target, 0o755)
		case tar.TypeSymlink:
			if err = os.MkdirAll(filepath.Dir(target), 0o755); err == nil {
				err = os.Symlink(h.Linkname, target)
			}
		case tar.TypeReg:
			var data []byte
			if data, err = io.ReadAll(tr); err == nil {
				if err = os.MkdirAll(filepath.Dir(target), 0o755); err == nil {
					err = os.WriteFile(target, data, os.FileMode(h.Mode)&0o755|0o644)
				}
			}
		}
		if err != nil {
			return err
		}
	}
}

// compareDiffs checks that git shows the same lesson between the two
// chapters' branches as the course's make diff-chapter N: the same files,
// and the same hunks once the path headers, which differ, are left out.
// The files are the chapter's package, its role, and the files outside
// the chapters that it adds (added, the course's paths).
// git and diff(1) may align a change differently (git slides hunks to
// blank lines); then diff(1) of the two branches' files must give the
// course's hunks.
func compareDiffs(ctx context.Context, r *repo, course, module string, added []string, prev, cur built, w io.Writer) error {
	n := cur.chapter.Number
	cmd := exec.CommandContext(ctx, "bash", append([]string{"scripts/diff-chapter.sh", prev.chapter.Dir(), cur.chapter.Dir()}, added...)...)
	cmd.Dir = course
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("make diff-chapter %d: %w: %s", n, err, stderr.String())
	}
	want, err := parseDiff(string(out))
	if err != nil {
		return fmt.Errorf("make diff-chapter %d: %w", n, err)
	}
	// Course paths are branch paths, and so are the packages the hunks
	// import (transform rewrites them); what is not the controller or its
	// role (a translated README, say) is not part of this diff.
	pathspec := []string{"internal/controller", "config/rbac/role.yaml"}
	for _, p := range added {
		if bp, ok := branchPath(p, cur.chapter); ok {
			pathspec = append(pathspec, bp)
		}
	}
	inBranch := map[string]string{}
	for p, hunks := range want {
		if bp, ok := branchPath(p, cur.chapter); ok && (strings.HasPrefix(bp, "internal/controller/") || bp == "config/rbac/role.yaml" || slices.Contains(added, p)) {
			inBranch[bp] = branchImports(hunks, module, cur.chapter)
		}
	}
	want = inBranch
	diffArgs := append([]string{"diff", "--no-color", "--no-ext-diff", "--no-textconv", "--no-renames", "-U3",
		"--src-prefix=a/", "--dst-prefix=b/", prev.commit, cur.commit, "--"}, pathspec...)
	gitOut, err := r.run(ctx, nil, nil, diffArgs...)
	if err != nil {
		return err
	}
	got, err := parseDiff(gitOut)
	if err != nil {
		return fmt.Errorf("git diff: %w", err)
	}
	label := fmt.Sprintf("git diff %s %s -- %s", prev.chapter.Branch(), cur.chapter.Branch(), strings.Join(pathspec, " "))
	if files(got) != files(want) {
		return fmt.Errorf("%s changes %s; make diff-chapter %d changes %s", label, files(got), n, files(want))
	}
	var realigned []string
	for _, p := range slices.Sorted(maps.Keys(want)) {
		if got[p] == want[p] {
			continue
		}
		again, err := diffFiles(ctx, r, prev.commit, cur.commit, p)
		if err != nil {
			return err
		}
		if again == want[p] {
			realigned = append(realigned, p)
			continue
		}
		return fmt.Errorf("%s differs from make diff-chapter %d in %s:\n%s", label, n, p, unifiedDiff(want[p], got[p], "make diff-chapter", "git diff"))
	}
	fmt.Fprintf(w, "  %-40s ok", fmt.Sprintf("diff equals make diff-chapter %d", n))
	if len(realigned) > 0 {
		fmt.Fprintf(w, " (git aligns %s differently; diff(1) of the branch files gives the same hunks)", strings.Join(realigned, ", "))
	}
	fmt.Fprintln(w)
	return nil
}

// quotedImport is a package of the module, quoted as an import is.
var quotedImport = regexp.MustCompile(`"([^"\s]+)"`)

// branchImports rewrites the packages of module that hunks name in quotes
// to where they are in chapter c's branch, as transform rewrites the
// imports of the branch's files.
func branchImports(hunks, module string, c chapter) string {
	return quotedImport.ReplaceAllStringFunc(hunks, func(q string) string {
		imp := strings.Trim(q, `"`)
		if !strings.HasPrefix(imp, module+"/") {
			return q
		}
		if p, err := importPath(imp, module, c); err == nil {
			return `"` + p + `"`
		}
		return q
	})
}

// files lists the paths of a parsed diff.
func files(d map[string]string) string {
	return "[" + strings.Join(slices.Sorted(maps.Keys(d)), " ") + "]"
}

// diffFiles returns the hunks of diff(1) between the file p of two commits
// (an absent file is empty, as with diff -N).
func diffFiles(ctx context.Context, r *repo, a, b, p string) (string, error) {
	dir, err := os.MkdirTemp("", "chapter-branches-diff-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	var names []string
	for i, commit := range []string{a, b} {
		data, err := r.run(ctx, nil, nil, "cat-file", "-p", commit+":"+p)
		if err != nil {
			data = "" // not in that commit
		}
		name := filepath.Join(dir, strconv.Itoa(i))
		if err := os.WriteFile(name, []byte(data), 0o644); err != nil {
			return "", err
		}
		names = append(names, name)
	}
	out, err := exec.CommandContext(ctx, "diff", "-u", names[0], names[1]).Output()
	var exit *exec.ExitError
	if err != nil && (!errors.As(err, &exit) || exit.ExitCode() != 1) {
		return "", fmt.Errorf("diff: %w", err)
	}
	hunks, err := parseDiff(string(out))
	for _, h := range hunks {
		return h, err
	}
	return "", err
}

// unifiedDiff shows how text b differs from text a.
func unifiedDiff(a, b, labelA, labelB string) string {
	dir, err := os.MkdirTemp("", "chapter-branches-diff-")
	if err != nil {
		return err.Error()
	}
	defer os.RemoveAll(dir)
	fa, fb := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	if err := os.WriteFile(fa, []byte(a), 0o644); err != nil {
		return err.Error()
	}
	if err := os.WriteFile(fb, []byte(b), 0o644); err != nil {
		return err.Error()
	}
	out, _ := exec.Command("diff", "-u", "--label", labelA, "--label", labelB, fa, fb).Output()
	return string(out)
}

// parseDiff reads a unified diff (of git or of diff -ruN) into the hunks
// of each file, keyed by the file's path without git's a/ and b/, each
// hunk's header reduced to its line ranges.
func parseDiff(text string) (map[string]string, error) {
	lines := strings.SplitAfter(text, "\n")
	hunks := map[string]string{}
	var file string
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		switch {
		case strings.HasPrefix(l, "--- ") && i+1 < len(lines) && strings.HasPrefix(lines[i+1], "+++ "):
			file = diffPath(lines[i+1][4:])
			if file == "/dev/null" {
				file = diffPath(l[4:])
			}
			i++
		case strings.HasPrefix(l, "@@ "):
			var oldStart, oldLen, newStart, newLen int
			if err := parseRange(l, &oldStart, &oldLen, &newStart, &newLen); err != nil {
				return nil, err
			}
			if file == "" {
				return nil, fmt.Errorf("hunk before a file header: %q", l)
			}
			var b strings.Builder
			fmt.Fprintf(&b, "@@ -%d,%d +%d,%d @@\n", oldStart, oldLen, newStart, newLen)
			for oldLen > 0 || newLen > 0 || (i+1 < len(lines) && strings.HasPrefix(lines[i+1], `\`)) {
				i++
				if i >= len(lines) || lines[i] == "" {
					return nil, fmt.Errorf("%s: hunk %q ends early", file, strings.TrimSpace(l))
				}
				switch lines[i][0] {
				case ' ':
					oldLen--
					newLen--
				case '-':
					oldLen--
				case '+':
					newLen--
				case '\\': // no newline at end of file
				default:
					return nil, fmt.Errorf("%s: unexpected line %q in a hunk", file, lines[i])
				}
				b.WriteString(lines[i])
			}
			hunks[file] += b.String()
		}
	}
	return hunks, nil
}

// diffPath is the path of a ---/+++ header, without git's prefix and
// diff's timestamp.
func diffPath(h string) string {
	h = strings.TrimRight(h, "\n")
	h, _, _ = strings.Cut(h, "\t")
	for _, prefix := range []string{"a/", "b/"} {
		if rest, ok := strings.CutPrefix(h, prefix); ok {
			return rest
		}
	}
	return h
}

// parseRange reads "@@ -a,b +c,d @@" (",b" and ",d" default to 1).
func parseRange(l string, oldStart, oldLen, newStart, newLen *int) error {
	f := strings.Fields(l)
	if len(f) < 4 || f[3] != "@@" {
		return fmt.Errorf("bad hunk header %q", l)
	}
	for i, r := range []struct {
		s           string
		start, size *int
	}{{f[1], oldStart, oldLen}, {f[2], newStart, newLen}} {
		start, size, ok := strings.Cut(r.s[1:], ",")
		if !ok {
			size = "1"
		}
		var err1, err2 error
		*r.start, err1 = strconv.Atoi(start)
		*r.size, err2 = strconv.Atoi(size)
		if err1 != nil || err2 != nil || r.s[0] != "-+"[i] {
			return fmt.Errorf("bad hunk header %q", l)
		}
	}
	return nil
}

// lockDir takes an exclusive lock on dir's lock file (dir + ".lock"), so
// that two runs never write their branches into the same directory; it
// fails at once, saying so, if another run holds it. The lock goes with
// the process.
func lockDir(dir string) (unlock func(), err error) {
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(dir+".lock", os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("another run is checking chapter branches in %s (it holds %s.lock); wait for it, or give --work another directory", dir, dir)
		}
		return nil, fmt.Errorf("locking %s.lock: %w", dir, err)
	}
	return func() { f.Close() }, nil
}
