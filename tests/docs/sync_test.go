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

// The course's pages exist in English (README.md, TESTING.md) and
// Simplified Chinese (README.zh-CN.md, TESTING.zh-CN.md). A translation may word things its own way, but both
// must have the same sections, the same code blocks (comments may be
// translated, except in "Try it" output), the same commands in the text
// and the same links, and each must link to the other before anything
// else.
func TestReadmesInSync(t *testing.T) {
	for _, enPath := range englishDocs(t) {
		t.Run(enPath, func(t *testing.T) {
			for _, problem := range compareTwins(t, root, enPath, chineseTwin(enPath)) {
				t.Error(problem)
			}
		})
	}
}

// root is the repository's root, seen from this package.
var root = filepath.Join("..", "..")

// englishDocs are the course's pages in English, relative to root: the
// README, the page on testing operators, and each chapter's README.
func englishDocs(t *testing.T) []string {
	t.Helper()
	chapters, err := filepath.Glob(filepath.Join(root, "chapters", "*", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	exercises, err := filepath.Glob(filepath.Join(root, "chapters", "*", "exercise", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range exercises {
		if !strings.HasSuffix(e, ".zh-CN.md") {
			chapters = append(chapters, e)
		}
	}
	docs := []string{"README.md", "TESTING.md"}
	for _, c := range chapters {
		rel, err := filepath.Rel(root, c)
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, rel)
	}
	return docs
}

// chineseTwin is the path of an English page's Chinese version.
func chineseTwin(enPath string) string { return strings.TrimSuffix(enPath, ".md") + ".zh-CN.md" }

// compareTwins compares the page enPath with its Chinese twin zhPath,
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

	if want := filepath.Base(zhPath); len(en.Links) == 0 || en.Links[0] != want {
		add("%s: its first link must be to %s (the Chinese version)", enPath, want)
	}
	if want := filepath.Base(enPath); len(zh.Links) == 0 || zh.Links[0] != want {
		add("%s: its first link must be to %s (the English version)", zhPath, want)
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

// shellComment matches a comment that starts a line or follows a space
// (goComment, its Go twin, is in quote.go).
var shellComment = regexp.MustCompile(`(?m)(^|[ \t])#( .*)?$`)

// withoutComments is a code block with its comments removed, and the
// lines that held only a comment (a translation may wrap its comments
// otherwise): a console session's commands lose theirs, its expected
// output stays as it is.
func withoutComments(b CodeBlock) string {
	var out []string
	for _, line := range strings.Split(b.Text, "\n") {
		blank := strings.TrimSpace(line) == ""
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
		if line = strings.TrimRight(line, " \t"); line == "" && !blank {
			continue
		}
		out = append(out, line)
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
// sorted, with each link to a Chinese page taken as its English twin and
// without its #anchor, so that the Chinese pages link to each other and
// to their own headings.
func links(all []string) []string {
	if len(all) == 0 {
		return nil
	}
	var l []string
	for _, dest := range all[1:] {
		if !strings.Contains(dest, "://") {
			dest, _, _ = strings.Cut(dest, "#")
			dest = strings.Replace(dest, ".zh-CN.md", ".md", 1)
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
