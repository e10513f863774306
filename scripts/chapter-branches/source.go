package main

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"example.com/redis-operator/chapters"
)

// file is a file of a tree: its mode (100644, 100755, 120000) and blob.
type file struct {
	mode string
	id   string
}

// chapter is one directory chapters/NN-slug of the commit the branches
// are made of, as a row of the table of chapters: only its number and its
// slug are read from the tree (the rest is the table's, this tool's).
type chapter = chapters.Chapter

// source is the course repository at one commit, read from the object
// database (never from the working tree).
type source struct {
	commit   string
	files    map[string]file
	module   string
	chapters []chapter
	blobs    *blobReader
}

var chapterDir = regexp.MustCompile(`^([0-9]{2})-([a-z0-9]+(?:-[a-z0-9]+)*)$`)

// readSource lists the tree of rev and finds its chapters.
func readSource(ctx context.Context, r *repo, rev string) (*source, error) {
	commit, err := r.git(ctx, "rev-parse", "--verify", "--end-of-options", rev+"^{commit}")
	if err != nil {
		return nil, fmt.Errorf("%q is not a commit: %w", rev, err)
	}
	out, err := r.git(ctx, "ls-tree", "-r", "-z", "--full-tree", commit)
	if err != nil {
		return nil, err
	}
	src := &source{commit: commit, files: map[string]file{}}
	for _, line := range strings.Split(strings.TrimRight(out, "\x00"), "\x00") {
		meta, p, ok := strings.Cut(line, "\t")
		fields := strings.Fields(meta)
		if !ok || len(fields) != 3 {
			return nil, fmt.Errorf("git ls-tree: unexpected line %q", line)
		}
		if fields[1] == "blob" {
			src.files[p] = file{mode: fields[0], id: fields[2]}
		}
	}
	if src.blobs, err = r.blobReader(ctx); err != nil {
		return nil, err
	}
	gomod, err := src.read("go.mod")
	if err != nil {
		src.close()
		return nil, err
	}
	for _, l := range strings.Split(string(gomod), "\n") {
		if m, ok := strings.CutPrefix(strings.TrimSpace(l), "module "); ok {
			src.module = strings.Trim(strings.TrimSpace(m), `"`)
		}
	}
	if src.module == "" {
		src.close()
		return nil, fmt.Errorf("go.mod of %s has no module line", rev)
	}
	if src.chapters, err = findChapters(src.files); err != nil {
		src.close()
		return nil, err
	}
	return src, nil
}

// findChapters returns the chapters of the tree in order: every directory
// chapters/NN-slug, numbered from 01 without a gap (beside them, the Go
// files of the table of chapters, package chapters).
func findChapters(files map[string]file) ([]chapter, error) {
	seen := map[int]chapter{}
	for p := range files {
		rest, ok := strings.CutPrefix(p, "chapters/")
		if !ok {
			continue
		}
		dir, _, ok := strings.Cut(rest, "/")
		if !ok && strings.HasSuffix(rest, ".go") {
			continue // the table of chapters, package chapters
		}
		if !ok {
			return nil, fmt.Errorf("chapters/%s: only chapter directories and the table of chapters (Go files) belong in chapters/", rest)
		}
		m := chapterDir.FindStringSubmatch(dir)
		if m == nil {
			return nil, fmt.Errorf("chapters/%s: a chapter directory is named NN-slug, e.g. 01-create-pods", dir)
		}
		n, _ := strconv.Atoi(m[1])
		if c, dup := seen[n]; dup && c.Slug != m[2] {
			return nil, fmt.Errorf("two chapters numbered %02d: %s and %s", n, c.Name(), dir)
		}
		seen[n] = chapter{Number: n, Slug: m[2]}
	}
	if len(seen) == 0 {
		return nil, fmt.Errorf("no chapters/NN-slug directory")
	}
	found := make([]chapter, len(seen))
	for n, c := range seen {
		if n < 1 || n > len(seen) {
			return nil, fmt.Errorf("chapters are numbered 01 to %02d without a gap; found %s", len(seen), c.Name())
		}
		found[n-1] = c
	}
	return found, nil
}

// close stops the blob reader.
func (s *source) close() {
	if s.blobs != nil {
		_ = s.blobs.close()
	}
}

// read returns the content of the file at p.
func (s *source) read(p string) ([]byte, error) {
	f, ok := s.files[p]
	if !ok {
		return nil, fmt.Errorf("%s: no such file at %s", p, s.commit)
	}
	return s.blobs.read(f.id)
}

// under returns the paths of the files below dir, sorted.
func (s *source) under(dir string) []string {
	var paths []string
	for p := range s.files {
		if strings.HasPrefix(p, dir+"/") {
			paths = append(paths, p)
		}
	}
	slices.Sort(paths)
	return paths
}
