package docs

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The course's READMEs exist in English (README.md) and Simplified Chinese
// (README.zh-CN.md). A translation may word things its own way, but both
// must have the same sections, the same code blocks (comments may be
// translated, except in "Try it" output), the same commands in the text
// and the same links, and each must link to the other before anything
// else.
func TestReadmesInSync(t *testing.T) {
	root := filepath.Join("..", "..")
	readmes, err := filepath.Glob(filepath.Join(root, "chapters", "*", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	readmes = append([]string{filepath.Join(root, "README.md")}, readmes...)
	for _, en := range readmes {
		enPath, _ := filepath.Rel(root, en)
		zhPath := strings.TrimSuffix(enPath, ".md") + ".zh-CN.md"
		t.Run(enPath, func(t *testing.T) {
			for _, problem := range compareTwins(t, root, enPath, zhPath) {
				t.Error(problem)
			}
		})
	}
}

// compareTwins compares the README enPath with its Chinese twin zhPath,
// both relative to root, and returns what differs.
func compareTwins(t *testing.T, root, enPath, zhPath string) []string {
	t.Helper()
	enSrc, err := os.ReadFile(filepath.Join(root, enPath))
	if err != nil {
		t.Fatal(err)
	}
	zhSrc, err := os.ReadFile(filepath.Join(root, zhPath))
	if os.IsNotExist(err) {
		return []string{fmt.Sprintf("%s has no Chinese twin: write %s", enPath, zhPath)}
	}
	if err != nil {
		t.Fatal(err)
	}
	en, zh := Parse(enSrc), Parse(zhSrc)
	var problems []string
	add := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }

	if len(en.Links) == 0 || en.Links[0] != "README.zh-CN.md" {
		add("%s: its first link must be to README.zh-CN.md (the Chinese version)", enPath)
	}
	if len(zh.Links) == 0 || zh.Links[0] != "README.md" {
		add("%s: its first link must be to README.md (the English version)", zhPath)
	}

	levels := func(d *Doc) []int {
		var l []int
		for _, s := range d.Sections {
			l = append(l, s.Level)
		}
		return l
	}
	if !slices.Equal(levels(en), levels(zh)) {
		add("sections differ: %s has %s, %s has %s", enPath, outline(en), zhPath, outline(zh))
	}

	if len(en.Blocks) != len(zh.Blocks) {
		add("%s has %d code blocks, %s has %d", enPath, len(en.Blocks), zhPath, len(zh.Blocks))
	} else {
		for i := range en.Blocks {
			e, z := en.Blocks[i], zh.Blocks[i]
			switch {
			case e.Info != z.Info:
				add("code block %d: %s's is %q, %s's is %q", i+1, enPath, e.Info, zhPath, z.Info)
			case e.Section != z.Section:
				add("code block %d is in section %d of %s but in section %d of %s", i+1, e.Section+1, enPath, z.Section+1, zhPath)
			case e.Lang == "mermaid":
				// A diagram's labels are prose; they are translated.
			case withoutComments(e) != withoutComments(z):
				add("code block %d (%s) differs apart from comments:\n--- %s\n%s--- %s\n%s", i+1, e.Lang, enPath, e.Text, zhPath, z.Text)
			}
		}
	}

	if e, z := commands(en.Spans), commands(zh.Spans); !slices.Equal(e, z) {
		add("commands in the text differ (sorted):\n%s: %q\n%s: %q", enPath, e, zhPath, z)
	}
	if e, z := links(en.Links), links(zh.Links); !slices.Equal(e, z) {
		add("links differ (sorted, after the language link):\n%s: %q\n%s: %q", enPath, e, zhPath, z)
	}
	return problems
}

func outline(d *Doc) string {
	var b strings.Builder
	for _, s := range d.Sections {
		fmt.Fprintf(&b, "\n  %s %s", strings.Repeat("#", s.Level), s.Title)
	}
	return b.String()
}

// shellComment and goComment match a comment that starts a line or
// follows a space.
var (
	shellComment = regexp.MustCompile(`(?m)(^|[ \t])#( .*)?$`)
	goComment    = regexp.MustCompile(`(?m)(^|[ \t])//.*$`)
)

// withoutComments is a code block with its comments removed: a console
// session's commands lose theirs, its expected output stays as it is.
func withoutComments(b CodeBlock) string {
	var out []string
	for _, line := range strings.Split(b.Text, "\n") {
		switch b.Lang {
		case "go":
			line = goComment.ReplaceAllString(line, "")
		case "console":
			if strings.HasPrefix(line, "$ ") {
				line = shellComment.ReplaceAllString(line, "")
			}
		case "sh", "bash", "yaml", "text":
			line = shellComment.ReplaceAllString(line, "")
		}
		out = append(out, strings.TrimRight(line, " \t"))
	}
	return strings.Join(out, "\n")
}

// commandWords start an inline code span that is a command.
var commandWords = []string{"make ", "kubectl ", "go ", "git ", "curl ", "sudo ", "export ", "bin/", "scripts/"}

// commands are the inline code spans that are commands, sorted.
func commands(spans []string) []string {
	var c []string
	for _, s := range spans {
		for _, w := range commandWords {
			if strings.HasPrefix(s, w) {
				c = append(c, s)
				break
			}
		}
	}
	return sorted(c)
}

// links are the link destinations after the first (the language link),
// sorted, with each README link taken as its English twin and without
// its #anchor, so that the Chinese READMEs link to each other and to
// their own headings.
func links(all []string) []string {
	if len(all) == 0 {
		return nil
	}
	var l []string
	for _, dest := range all[1:] {
		if !strings.Contains(dest, "://") {
			dest, _, _ = strings.Cut(dest, "#")
			dest = strings.Replace(dest, "README.zh-CN.md", "README.md", 1)
		}
		l = append(l, dest)
	}
	return sorted(l)
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}
