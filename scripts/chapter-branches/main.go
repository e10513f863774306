// Command chapter-branches makes the local branches chapter/NN-slug, one
// per chapter of the course, from a commit of the course repository (make
// chapter-branches). Each branch is one commit, the child of the chapter
// before's, and holds that chapter alone as a kubebuilder-layout project:
// cmd/, api/, internal/controller/, config/, test/e2e/, a Makefile and the
// lesson as README. The commits depend only on the course commit, so the
// same commit gives the same IDs. It reads the commit's tree from the
// object database and writes objects and refs only: the work tree, the
// index and the current branch are left alone.
//
// With --verify it moves no branch: it checks, in a scratch directory,
// that each chapter's commit builds and passes its own `make test`, and
// that git's diff of each chapter's controller against the chapter before
// is the course's `make diff-chapter N`.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"

	"example.com/redis-operator/chapters"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(exitCode(err))
	}
}

// exitCode is 2 when a branch may not be moved, 1 for any other error.
func exitCode(err error) int {
	switch {
	case err == nil:
		return 0
	case errors.Is(err, errRefused):
		return 2
	default:
		return 1
	}
}

func run() error {
	fs := flag.NewFlagSet("chapter-branches", flag.ContinueOnError)
	from := fs.String("from", "HEAD", "the commit of the course to make the branches from")
	verifyOnly := fs.Bool("verify", false, "move no branch; check the chapters' commits in a scratch directory (build, make test, diffs)")
	binDir := fs.String("bin", "", "with --verify: the directory where the branches' Makefiles find or build their tools (default: in the scratch directory)")
	dirsOf := fs.Int("dirs", 0, "print the directories of the chapter that chapter N builds on (N-1, or the chapter it rewrites) and of chapter N, whose packages make diff-chapter N compares, and do nothing else")
	arrivalsOf := fs.Int("arrivals", 0, "print the files outside the chapters' directories that chapter N's branch has and chapter N-1's does not (make diff-chapter shows them), and do nothing else")
	workDir := fs.String("work", "", "with --verify: the directory each branch is checked out in, in turn, kept for the next run so that go's build and test caches serve the branches that did not change (default: in the scratch directory)")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: %s [--from REV] [--verify [--bin DIR] [--work DIR]] | --arrivals N | --dirs N\n\n", os.Args[0])
		fmt.Fprintln(fs.Output(), "Creates or updates the branches chapter/NN-slug, one commit per chapter of chapters/ at REV.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(os.Args[1:]); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	// git archive and pathspecs are relative to the working directory;
	// run every command at the top of the repository.
	top, err := (&repo{dir: "."}).git(ctx, "rev-parse", "--show-toplevel")
	if err != nil {
		return err
	}
	r := &repo{dir: top}
	if *dirsOf > 0 {
		c, err := chapters.Get(*dirsOf)
		if err != nil {
			return err
		}
		b, err := chapters.Get(c.Base())
		if err != nil {
			return fmt.Errorf("chapter %d builds on no chapter: %w", c.Number, err)
		}
		fmt.Println(b.Dir(), c.Dir())
		return nil
	}
	if *arrivalsOf > 0 {
		out, err := r.git(ctx, "ls-files", "-z")
		if err != nil {
			return err
		}
		for _, f := range arrivals(*arrivalsOf, strings.Split(strings.TrimRight(out, "\x00"), "\x00")) {
			fmt.Println(f)
		}
		return nil
	}
	if err := sameTable(ctx, r, *from); err != nil {
		return err
	}
	if *verifyOnly {
		return verifyBranches(ctx, r, *from, *binDir, *workDir, os.Stdout)
	}
	lines, err := makeBranches(ctx, r, *from)
	for _, l := range lines {
		fmt.Println(l)
	}
	return err
}

// sameTable refuses to make or check the branches of a commit whose
// chapters are not the table this tool was built with (a table edited in
// the work tree and not committed, or FROM an older commit): the layout
// of each branch and the rows of its scripts/chapters.mk come from the
// table.
func sameTable(ctx context.Context, r *repo, from string) error {
	out, err := r.git(ctx, "ls-tree", "-d", "--name-only", from+":chapters")
	if err != nil {
		return err
	}
	var want []string
	for _, c := range chapters.All {
		want = append(want, c.Name())
	}
	if got := strings.Fields(out); !slices.Equal(got, want) {
		return fmt.Errorf("the chapters of %s (%s) are not those of the table this tool was built from, chapters/chapters.go (%s): commit the table, or make the branches of the commit the tool is built from",
			from, strings.Join(got, " "), strings.Join(want, " "))
	}
	return nil
}
