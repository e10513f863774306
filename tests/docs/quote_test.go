package docs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Every code block that says it quotes a file (quote=PATH in its info
// string) is an excerpt of that file as it is: a spec a chapter shows is
// the spec that runs. The Chinese version may translate its comments.
func TestQuotesAreInTheirFiles(t *testing.T) {
	quotes := 0
	for _, enPath := range englishDocs(t) {
		for _, path := range []string{enPath, chineseTwin(enPath)} {
			src, err := os.ReadFile(filepath.Join(root, path))
			if os.IsNotExist(err) {
				continue // TestReadmesInSync says so
			}
			if err != nil {
				t.Fatal(err)
			}
			for i, b := range Parse(src).Blocks {
				quoted := b.Quote()
				if quoted == "" {
					continue
				}
				quotes++
				file, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(quoted)))
				if err != nil {
					t.Errorf("%s: code block %d quotes %s: %v", path, i+1, quoted, err)
					continue
				}
				if err := CheckExcerpt(b.Text, string(file), path != enPath); err != nil {
					t.Errorf("%s: code block %d quotes %s, which no longer holds it: %v", path, i+1, quoted, err)
				}
			}
		}
	}
	if quotes == 0 {
		t.Error("no code block quotes a file: the chapters show their specs as quote=PATH blocks")
	}
}

func TestCheckExcerpt(t *testing.T) {
	file := strings.Join([]string{
		"func f() {",
		"\t// Say it.",
		"\tBy(\"one\")",
		"",
		"\tExpect(x).To(Equal(1)) // must be 1",
		"}",
	}, "\n")
	for _, tc := range []struct {
		name, block string
		translated  bool
		ok          bool
	}{
		{"the whole file", file, false, true},
		{"dedented, a blank line less", "// Say it.\nBy(\"one\")\nExpect(x).To(Equal(1)) // must be 1\n", false, true},
		{"a line changed", "By(\"one\")\nExpect(x).To(Equal(2)) // must be 1\n", false, false},
		{"lines out of order", "Expect(x).To(Equal(1)) // must be 1\nBy(\"one\")\n", false, false},
		{"a line missing in between", "func f() {\nBy(\"one\")\n", false, false},
		{"a comment translated, in English", "// 说出来。\nBy(\"one\")\n", false, false},
		{"a comment translated, in Chinese", "// 说出来。\nBy(\"one\")\nExpect(x).To(Equal(1)) // 必须是 1\n", true, true},
		{"code changed, in Chinese", "By(\"two\")\n", true, false},
		{"empty", "\n", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckExcerpt(tc.block, file, tc.translated)
			if (err == nil) != tc.ok {
				t.Errorf("CheckExcerpt(%q) = %v, want ok=%v", tc.block, err, tc.ok)
			}
		})
	}
}

func TestQuote(t *testing.T) {
	for info, want := range map[string]string{
		"go quote=tests/chapter02/chapter02_test.go": "tests/chapter02/chapter02_test.go",
		"go":              "",
		"":                "",
		"quote=x.go":      "", // the language comes first
		"console kind":    "",
		"go a quote=b.go": "b.go",
	} {
		if got := (CodeBlock{Info: info}).Quote(); got != want {
			t.Errorf("Quote of %q = %q, want %q", info, got, want)
		}
	}
}
