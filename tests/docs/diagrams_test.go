//go:build diagrams

package docs

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Every Mermaid diagram of the READMEs, in both languages, renders: a
// diagram that GitHub would show as a syntax error fails here instead.
// `make check-diagrams` runs it with the pinned Mermaid CLI (MMDC), in
// Debian's chromium (CHROMIUM), and leaves the pictures in DIAGRAMS_DIR.
func TestDiagramsRender(t *testing.T) {
	mmdc, chromium, out := os.Getenv("MMDC"), os.Getenv("CHROMIUM"), os.Getenv("DIAGRAMS_DIR")
	if mmdc == "" || chromium == "" || out == "" {
		t.Fatal("MMDC, CHROMIUM and DIAGRAMS_DIR are not set: run make check-diagrams")
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	// Root may not use chromium's sandbox; the pages are the course's own.
	config := filepath.Join(t.TempDir(), "puppeteer.json")
	data, _ := json.Marshal(map[string]any{"executablePath": chromium, "args": []string{"--no-sandbox", "--disable-gpu"}})
	if err := os.WriteFile(config, data, 0o644); err != nil {
		t.Fatal(err)
	}
	diagrams := 0
	for _, enPath := range englishDocs(t) {
		for _, path := range []string{enPath, chineseTwin(enPath)} {
			src, err := os.ReadFile(filepath.Join(root, path))
			if err != nil {
				continue // TestReadmesInSync says so
			}
			n := 0
			for _, b := range Parse(src).Blocks {
				if b.Lang != "mermaid" {
					continue
				}
				n++
				diagrams++
				name := strings.NewReplacer("/", "_", ".md", "").Replace(path) + fmt.Sprintf("-%d", n)
				in := filepath.Join(out, name+".mmd")
				if err := os.WriteFile(in, []byte(b.Text), 0o644); err != nil {
					t.Fatal(err)
				}
				msg, err := exec.Command(mmdc, "--quiet", "-p", config, "-i", in, "-o", filepath.Join(out, name+".svg")).CombinedOutput()
				if err != nil {
					t.Errorf("%s: diagram %d does not render (%v):\n%s", path, n, err, firstLines(string(msg), 12))
				}
			}
		}
	}
	if diagrams == 0 {
		t.Fatal("no Mermaid diagram in the READMEs")
	}
	t.Logf("%d diagrams rendered into %s", diagrams, out)
}

func firstLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = append(lines[:n], "…")
	}
	return strings.Join(lines, "\n")
}
