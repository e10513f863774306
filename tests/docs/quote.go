package docs

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// goComment matches a Go comment that starts a line or follows a space.
var goComment = regexp.MustCompile(`(?m)(^|[ \t])//.*$`)

// A README shows the code of the specs that prove its chapter as it is in
// the suite: a code block whose info string says quote=PATH (relative to
// the repository's root), e.g. "go quote=tests/chapter02/chapter02_test.go",
// is an excerpt of that file, and the docs test fails when the file no
// longer holds it.

// Quote is the file the block quotes (see above), or "".
func (b CodeBlock) Quote() string {
	fields := strings.Fields(b.Info)
	for _, f := range fields[min(1, len(fields)):] {
		if path, ok := strings.CutPrefix(f, "quote="); ok {
			return path
		}
	}
	return ""
}

// CheckExcerpt returns nil if the lines of block appear in file in a row,
// compared without their indentation and without blank lines. With
// translated, comments are left out of the comparison too: a translation
// translates them.
func CheckExcerpt(block, file string, translated bool) error {
	b, f := codeLines(block, translated), codeLines(file, translated)
	if len(b) == 0 {
		return fmt.Errorf("the block is empty")
	}
	for i := 0; i+len(b) <= len(f); i++ {
		if slices.Equal(f[i:i+len(b)], b) {
			return nil
		}
	}
	// Say where it parts from the file: the longest run of the block's
	// first lines that the file holds.
	longest := 0
	for i := range f {
		n := 0
		for n < len(b) && i+n < len(f) && f[i+n] == b[n] {
			n++
		}
		longest = max(longest, n)
	}
	if longest == 0 {
		return fmt.Errorf("the file has no line %q", b[0])
	}
	return fmt.Errorf("the file has the block's first %d lines in a row, but not then %q", longest, b[longest])
}

// codeLines are the non-blank lines of s without their indentation (and
// without comments, if withoutComments).
func codeLines(s string, withoutComments bool) []string {
	var lines []string
	for _, l := range strings.Split(s, "\n") {
		if withoutComments {
			l = goComment.ReplaceAllString(l, "")
		}
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	return lines
}
