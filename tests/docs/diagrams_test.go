//go:build diagrams

package docs

import (
	"crypto/sha256"
	"encoding/hex"
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
// A picture that the same Mermaid CLI and chromium, with the same
// settings, rendered from the same source before is taken from
// DIAGRAMS_CACHE, as go test reuses a result:
// each render starts a browser, seconds of CPU, and most diagrams do not
// change between two runs.
func TestDiagramsRender(t *testing.T) {
	mmdc, chromium, out, cache := os.Getenv("MMDC"), os.Getenv("CHROMIUM"), os.Getenv("DIAGRAMS_DIR"), os.Getenv("DIAGRAMS_CACHE")
	if mmdc == "" || chromium == "" || out == "" || cache == "" {
		t.Fatal("MMDC, CHROMIUM, DIAGRAMS_DIR and DIAGRAMS_CACHE are not set: run make check-diagrams")
	}
	for _, dir := range []string{out, cache} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	renderer, err := rendererID(mmdc, chromium)
	if err != nil {
		t.Fatal(err)
	}
	// Root may not use chromium's sandbox; the pages are the course's own.
	config := filepath.Join(t.TempDir(), "puppeteer.json")
	data, _ := json.Marshal(map[string]any{"executablePath": chromium, "args": []string{"--no-sandbox", "--disable-gpu"}})
	if err := os.WriteFile(config, data, 0o644); err != nil {
		t.Fatal(err)
	}
	diagrams, cached := 0, 0
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
				svg := filepath.Join(out, name+".svg")
				sum := sha256.Sum256([]byte(renderer + "\x00" + string(data) + "\x00" + b.Text))
				known := filepath.Join(cache, hex.EncodeToString(sum[:])+".svg")
				if picture, err := os.ReadFile(known); err == nil {
					if err := os.WriteFile(svg, picture, 0o644); err != nil {
						t.Fatal(err)
					}
					cached++
					continue
				}
				msg, err := exec.Command(mmdc, "--quiet", "-p", config, "-i", in, "-o", svg).CombinedOutput()
				if err != nil {
					t.Errorf("%s: diagram %d does not render (%v):\n%s", path, n, err, firstLines(string(msg), 12))
					continue
				}
				picture, err := os.ReadFile(svg)
				if err != nil {
					t.Fatalf("%s: diagram %d rendered no picture: %v", path, n, err)
				}
				if err := os.WriteFile(known+".part", picture, 0o644); err != nil {
					t.Fatal(err)
				}
				if err := os.Rename(known+".part", known); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	if diagrams == 0 {
		t.Fatal("no Mermaid diagram in the READMEs")
	}
	t.Logf("%d diagrams rendered into %s (%d of them rendered before, from %s)", diagrams, out, cached, cache)
}

// rendererID names the Mermaid CLI and the browser that render: the CLI's
// directory (make installs it under the hash of its lock file) and the
// size and time of both executables, so that another CLI or browser renders
// every diagram again.
func rendererID(mmdc, chromium string) (string, error) {
	id := []string{}
	for _, p := range []string{mmdc, chromium} {
		abs, err := filepath.EvalSymlinks(p)
		if err != nil {
			return "", err
		}
		fi, err := os.Stat(abs)
		if err != nil {
			return "", err
		}
		id = append(id, fmt.Sprintf("%s %d %d", abs, fi.Size(), fi.ModTime().UnixNano()))
	}
	return strings.Join(id, "\n"), nil
}

func firstLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = append(lines[:n], "…")
	}
	return strings.Join(lines, "\n")
}
