package main

import (
	"context"
	"errors"
	"fmt"
	"go/parser"
	"go/token"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Every generated commit has this author and committer, a date that
// depends only on the chapter's number, and this trailer, so that the same
// course commit gives the same commit IDs, and a branch tip that is not a
// generated commit (someone committed on the branch) can be told apart.
const (
	authorName  = "redis-operator course"
	authorEmail = "course@redis-operator.example.com"
	trailer     = "Generated-by: make chapter-branches"
)

// epoch is chapter 0's date; chapter N's commit is N hours later.
var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// built is the commit made for one chapter.
type built struct {
	chapter chapter
	commit  string
}

// makeBranches creates or updates the chapters' branches from the course
// at rev, and returns one line per branch.
func makeBranches(ctx context.Context, r *repo, rev string) ([]string, error) {
	s, err := readSource(ctx, r, rev)
	if err != nil {
		return nil, err
	}
	defer s.close()
	commits, err := buildCommits(ctx, r, s)
	if err != nil {
		return nil, err
	}
	return updateBranches(ctx, r, commits)
}

// buildCommits writes the tree and commit of every chapter's branch, each
// commit the child of its base's (the chapter before, or the one it
// rewrites), and returns them in order. It
// writes objects only: no ref, index or work tree changes.
func buildCommits(ctx context.Context, r *repo, s *source) ([]built, error) {
	dir, err := os.MkdirTemp("", "chapter-branches-index-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	idx := &repo{dir: r.dir, env: append(slices.Clone(r.env), "GIT_INDEX_FILE="+filepath.Join(dir, "index"))}

	sh, err := sharedFiles(s)
	if err != nil {
		return nil, err
	}
	var commits []built
	byNumber := map[int]string{}
	for _, c := range s.chapters {
		parent := byNumber[base(c.Number)]
		files, err := branchFiles(s, sh, c)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c.Branch(), err)
		}
		tree, err := writeTree(ctx, idx, files)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c.Branch(), err)
		}
		msg, err := commitMessage(s, c)
		if err != nil {
			return nil, err
		}
		args := []string{"commit-tree", "--no-gpg-sign", tree}
		if parent != "" {
			args = append(args, "-p", parent)
		}
		date := fmt.Sprintf("%d +0000", epoch.Add(time.Duration(c.Number)*time.Hour).Unix())
		out, err := r.run(ctx, strings.NewReader(msg), []string{
			"GIT_AUTHOR_NAME=" + authorName, "GIT_AUTHOR_EMAIL=" + authorEmail, "GIT_AUTHOR_DATE=" + date,
			"GIT_COMMITTER_NAME=" + authorName, "GIT_COMMITTER_EMAIL=" + authorEmail, "GIT_COMMITTER_DATE=" + date,
		}, args...)
		if err != nil {
			return nil, err
		}
		commit := strings.TrimSpace(out)
		byNumber[c.Number] = commit
		commits = append(commits, built{chapter: c, commit: commit})
	}
	return commits, nil
}

// writeTree writes files as a tree through the temporary index of idx.
func writeTree(ctx context.Context, idx *repo, files map[string]output) (string, error) {
	if _, err := idx.git(ctx, "read-tree", "--empty"); err != nil {
		return "", err
	}
	var info strings.Builder
	for _, p := range slices.Sorted(maps.Keys(files)) {
		f := files[p]
		if f.data != nil || f.id == "" {
			id, err := idx.hashObject(ctx, f.data)
			if err != nil {
				return "", err
			}
			f.id = id
		}
		fmt.Fprintf(&info, "%s %s\t%s\x00", f.mode, f.id, p)
	}
	if _, err := idx.run(ctx, strings.NewReader(info.String()), nil, "update-index", "--add", "-z", "--index-info"); err != nil {
		return "", err
	}
	return idx.git(ctx, "write-tree")
}

// commitMessage is "Chapter N: slug", the first paragraph of the chapter
// package's doc comment (what the lesson does), and the trailer.
func commitMessage(s *source, c chapter) (string, error) {
	var doc string
	for _, p := range s.under(c.Dir()) {
		if filepath.Dir(p) != c.Dir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			continue
		}
		data, err := s.read(p)
		if err != nil {
			return "", err
		}
		f, err := parser.ParseFile(token.NewFileSet(), p, data, parser.PackageClauseOnly|parser.ParseComments)
		if err != nil {
			return "", err
		}
		if f.Doc != nil {
			first, _, _ := strings.Cut(strings.TrimSpace(f.Doc.Text()), "\n\n")
			// "Package controller is the Redis operator as of ..." reads
			// as "The Redis operator as of ..." in a commit message.
			first, ok := strings.CutPrefix(first, "Package "+f.Name.Name+" is ")
			if ok {
				r, n := utf8.DecodeRuneInString(first)
				first = string(unicode.ToUpper(r)) + first[n:]
			}
			doc = first
			break
		}
	}
	msg := fmt.Sprintf("Chapter %d: %s\n\n", c.Number, c.Slug)
	if doc != "" {
		msg += wrap(doc, 72) + "\n\n"
	}
	return msg + trailer + "\n", nil
}

// wrap reflows text into lines of at most width characters.
func wrap(text string, width int) string {
	var b strings.Builder
	n := 0
	for _, w := range strings.Fields(text) {
		switch {
		case n == 0:
		case n+1+utf8.RuneCountInString(w) > width:
			b.WriteByte('\n')
			n = 0
		default:
			b.WriteByte(' ')
			n++
		}
		b.WriteString(w)
		n += utf8.RuneCountInString(w)
	}
	return b.String()
}

// errRefused is a branch the generator must not move; main exits 2.
var errRefused = errors.New("refused")

// updateBranches points every chapter's branch at its commit in one
// transaction, after checking all of them: a branch whose tip is not a
// generated commit, or that a work tree has checked out, stops the run
// before any branch moves. A chapter/ branch that is no chapter's any more
// (a chapter renamed or removed) is deleted in the same transaction when it
// is a generated one that no work tree has checked out, and kept, with a
// line that says so, otherwise. It returns one line per branch.
func updateBranches(ctx context.Context, r *repo, commits []built) ([]string, error) {
	out, err := r.git(ctx, "for-each-ref", "--format=%(refname)%00%(objectname)%00%(worktreepath)", "refs/heads/chapter/")
	if err != nil {
		return nil, err
	}
	type tip struct{ commit, worktree string }
	tips := map[string]tip{}
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Split(l, "\x00"); len(f) == 3 {
			tips[f[0]] = tip{f[1], f[2]}
		}
	}
	var lines, problems []string
	var tx strings.Builder
	for _, b := range commits {
		ref := "refs/heads/" + b.chapter.Branch()
		t, exists := tips[ref]
		switch {
		case !exists:
			fmt.Fprintf(&tx, "create %s %s\n", ref, b.commit)
			lines = append(lines, fmt.Sprintf("created   %s %s", b.chapter.Branch(), short(b.commit)))
		case t.commit == b.commit:
			lines = append(lines, fmt.Sprintf("unchanged %s %s", b.chapter.Branch(), short(b.commit)))
		default:
			ok, err := generated(ctx, r, t.commit)
			if err != nil {
				return nil, err
			}
			if !ok {
				problems = append(problems, fmt.Sprintf("%s has a commit that make chapter-branches did not make (%s); rename it (git branch -m %s <name>) or delete it",
					b.chapter.Branch(), short(t.commit), b.chapter.Branch()))
				continue
			}
			if t.worktree != "" {
				problems = append(problems, fmt.Sprintf("%s is checked out in %s; switch that work tree to another branch", b.chapter.Branch(), t.worktree))
				continue
			}
			fmt.Fprintf(&tx, "update %s %s %s\n", ref, b.commit, t.commit)
			lines = append(lines, fmt.Sprintf("updated   %s %s (was %s)", b.chapter.Branch(), short(b.commit), short(t.commit)))
		}
	}
	current := map[string]bool{}
	for _, b := range commits {
		current["refs/heads/"+b.chapter.Branch()] = true
	}
	for _, ref := range slices.Sorted(maps.Keys(tips)) {
		if current[ref] {
			continue
		}
		t, name := tips[ref], strings.TrimPrefix(ref, "refs/heads/")
		ok, err := generated(ctx, r, t.commit)
		if err != nil {
			return nil, err
		}
		if !ok || t.worktree != "" {
			lines = append(lines, fmt.Sprintf("kept      %s %s: no chapter has this name now, and it has your commits or is checked out", name, short(t.commit)))
			continue
		}
		fmt.Fprintf(&tx, "delete %s %s\n", ref, t.commit)
		lines = append(lines, fmt.Sprintf("deleted   %s %s: no chapter has this name now", name, short(t.commit)))
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("%w: %s; then run make chapter-branches again (no branch was changed)", errRefused, strings.Join(problems, "; "))
	}
	if tx.Len() > 0 {
		if _, err := r.run(ctx, strings.NewReader(tx.String()), nil, "update-ref", "-m", "make chapter-branches", "--stdin"); err != nil {
			return nil, err
		}
	}
	return lines, nil
}

// generated reports whether commit was made by the generator: its
// committer is the generator's and its message ends with the trailer.
func generated(ctx context.Context, r *repo, commit string) (bool, error) {
	raw, err := r.run(ctx, nil, nil, "cat-file", "commit", commit)
	if err != nil {
		return false, err
	}
	header, msg, _ := strings.Cut(raw, "\n\n")
	committer := false
	for _, l := range strings.Split(header, "\n") {
		if strings.HasPrefix(l, fmt.Sprintf("committer %s <%s> ", authorName, authorEmail)) {
			committer = true
		}
	}
	return committer && strings.HasSuffix(msg, "\n"+trailer+"\n"), nil
}

// short is a commit ID shortened to a fixed length, so that the output is
// the same for the same commits.
func short(id string) string { return id[:min(12, len(id))] }
