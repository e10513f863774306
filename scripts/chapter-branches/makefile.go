package main

import (
	_ "embed"
	"fmt"
	"strconv"
	"strings"

	"example.com/redis-operator/chapters"
)

// branchMakefileTemplate is every branch's Makefile, but for the pinned
// versions, which are the course Makefile's own lines (its section from
// "# ---- pinned versions" to the next "# ----" line), so that a branch
// builds and tests with exactly the tools the course pins, and for the
// chapter's number (chapterMarker), which `make run N` checks.
//
//go:embed Makefile.branch
var branchMakefileTemplate string

const (
	pinnedMarker  = "# @pinned-versions@\n"
	chapterMarker = "@chapter@"
)

// branchMakefile returns the Makefile of a branch made from s.
func branchMakefile(s *source) ([]byte, error) {
	course, err := s.read("Makefile")
	if err != nil {
		return nil, err
	}
	return renderBranchMakefile(course)
}

// renderBranchMakefile returns the branches' Makefile (but for the
// chapter's number) for the course's Makefile.
func renderBranchMakefile(course []byte) ([]byte, error) {
	pinned, err := pinnedVersions(string(course))
	if err != nil {
		return nil, err
	}
	if strings.Count(branchMakefileTemplate, pinnedMarker) != 1 || strings.Count(branchMakefileTemplate, chapterMarker) != 1 {
		return nil, fmt.Errorf("scripts/chapter-branches/Makefile.branch must hold the line %q once and %q once", strings.TrimSpace(pinnedMarker), chapterMarker)
	}
	return []byte(strings.Replace(branchMakefileTemplate, pinnedMarker, pinned, 1)), nil
}

// pinnedVersions returns the section of the course's Makefile that pins
// the versions of Kubernetes and the tools.
func pinnedVersions(makefile string) (string, error) {
	const start = "# ---- pinned versions"
	i := strings.Index(makefile, "\n"+start)
	if i < 0 {
		return "", fmt.Errorf("the Makefile has no %q section", start)
	}
	section := makefile[i+1:]
	end := strings.Index(section[len(start):], "\n# ----")
	if end < 0 {
		return "", fmt.Errorf("the Makefile's %q section has no end (a line starting with # ----)", start)
	}
	return strings.TrimRight(section[:len(start)+end], "\n") + "\n", nil
}

// chapterMakefile is the Makefile of chapter c's branch.
func chapterMakefile(makefile []byte, c chapter) []byte {
	return []byte(strings.Replace(string(makefile), chapterMarker, strconv.Itoa(c.number), 1))
}

// chapterInclude is scripts/chapters.mk of chapter c's branch: its own row
// of the table of chapters, for its Makefile and scripts/deploy.mk, with c
// the chapter that runs. The row is the table's of c's number (the table
// this tool was built with; its test checks it against the directories),
// under the name of c's directory in the commit the branches are made of.
func chapterInclude(c chapter) ([]byte, error) {
	row, err := chapters.Get(c.number)
	if err != nil {
		return nil, fmt.Errorf("%s: %w (the table of chapters, chapters/chapters.go, this tool was built with)", c.dir(), err)
	}
	row.Slug = c.slug
	return []byte(chapters.MakeInclude([]chapters.Chapter{row}, c.number)), nil
}
