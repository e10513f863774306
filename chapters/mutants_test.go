package chapters

import (
	"os"
	"path/filepath"
	"testing"
)

func TestParseMutant(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	const diff = "--- a/x.go\n+++ b/x.go\n@@ -1 +1 @@\n-a\n+b\n"
	m, err := ParseMutant(write("ok.patch", "Bug: one\n two\nWhy: because\nSpec: A Redis works\nStep: Lesson: it works\n\n"+diff))
	if err != nil {
		t.Fatal(err)
	}
	if m.Bug != "one two" || m.Why != "because" || m.Spec != "A Redis works" || m.Step != "Lesson: it works" || m.Diff != diff {
		t.Errorf("parsed %+v", m)
	}
	for name, text := range map[string]string{
		"no step":    "Bug: b\nWhy: w\nSpec: s\n" + diff,
		"no diff":    "Bug: b\nWhy: w\nSpec: s\nStep: x\n",
		"stray line": "Bug: b\nWhy: w\nsomething else\nSpec: s\nStep: x\n" + diff,
	} {
		if _, err := ParseMutant(write("bad.patch", text)); err == nil {
			t.Errorf("%s: parsed without an error", name)
		}
	}
}
