package docs

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// A chapter's README is a lesson first: what is wrong, the idea, the diff,
// Try it, how the suite proves it, what is still wrong. Measurements,
// history and notes for maintainers go to its appendix, after
// lessonEnd. The bar every chapter meets, in English and in Chinese:
//   - the lesson, before the appendix, is at most maxLessonWords words
//     (counted in the English, code blocks included: a reader reads
//     them too), about twenty minutes of reading;
//   - it holds no date and says nothing was "measured on" a day or a
//     machine: a figure the lesson needs is stated, and where it comes
//     from is in the appendix;
//   - "How the suite proves it" quotes the code of a deciding check
//     (framework.DecidingCheck and what follows it), not only the set-up
//     before it: the proof a learner sees is the assertion that decides.
func TestLessonsMeetTheBar(t *testing.T) {
	readmes, err := filepath.Glob(filepath.Join(root, "chapters", "*", "README.md"))
	if err != nil || len(readmes) == 0 {
		t.Fatalf("no chapter READMEs: %v", err)
	}
	for _, en := range readmes {
		rel, err := filepath.Rel(root, en)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(filepath.Base(filepath.Dir(en)), func(t *testing.T) {
			for _, path := range []string{rel, chineseTwin(rel)} {
				src, err := os.ReadFile(filepath.Join(root, path))
				if os.IsNotExist(err) {
					continue // TestReadmesInSync says so
				}
				if err != nil {
					t.Fatal(err)
				}
				for _, problem := range lessonProblems(string(src), path == rel) {
					t.Errorf("%s: %s", path, problem)
				}
			}
		})
	}
}

// maxLessonWords bounds a chapter's lesson (see TestLessonsMeetTheBar).
const maxLessonWords = 2500

// lessonEnd starts a README's appendix, in English, and lessonEndZH in
// Chinese; the lesson is what comes before.
const (
	lessonEnd   = "\n## Appendix"
	lessonEndZH = "\n## 附录"
)

// maintainersNote finds a date, or a figure said to be measured on a
// day or a machine ("measured on", "在 … 上测得" in Chinese).
var maintainersNote = regexp.MustCompile(`\b20\d\d-\d\d-\d\d\b|(?i)measured on|测得于|在 20\d\d`)

// lessonProblems returns what keeps a chapter README's lesson from the
// bar; english says whether to count its words (the Chinese twin says the
// same in other words).
func lessonProblems(readme string, english bool) []string {
	lesson, _, _ := strings.Cut(readme, lessonEnd)
	lesson, _, _ = strings.Cut(lesson, lessonEndZH)
	var problems []string
	if n := len(strings.Fields(lesson)); english && n > maxLessonWords {
		problems = append(problems, fmt.Sprintf("its lesson (before %q) is %d words, over %d: move measurements and notes to the appendix, or cut", strings.TrimSpace(lessonEnd), n, maxLessonWords))
	}
	for _, line := range strings.Split(lesson, "\n") {
		if m := maintainersNote.FindString(line); m != "" {
			problems = append(problems, fmt.Sprintf("its lesson holds a maintainers' note (%q in %q): dates and where a figure was measured belong in the appendix", m, strings.TrimSpace(line)))
		}
	}
	doc := Parse([]byte(readme))
	blocks, err := doc.SectionBlocks(proofSection(doc))
	if err != nil {
		return append(problems, err.Error())
	}
	for _, b := range blocks {
		if b.Quote() != "" && strings.Contains(b.Text, "DecidingCheck(") {
			return problems
		}
	}
	return append(problems, `"How the suite proves it" quotes no deciding check (a quote=PATH block with DecidingCheck and the assertion after it)`)
}

// proofSection is the title of the section that shows how the suite
// proves the lesson, in English or in Chinese.
func proofSection(d *Doc) string {
	for _, s := range d.Sections {
		if s.Title == proofSectionZH {
			return proofSectionZH
		}
	}
	return "How the suite proves it"
}

// proofSectionZH is "How the suite proves it" in the Chinese twins.
const proofSectionZH = "测试套件如何验证这一课"
