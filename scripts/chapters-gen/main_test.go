package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestGeneratedFilesAreCurrent: scripts/chapters.mk and the operator's
// map of managers are what the table of chapters makes of them.
func TestGeneratedFilesAreCurrent(t *testing.T) {
	files, err := generated()
	if err != nil {
		t.Fatal(err)
	}
	for p, want := range files {
		got, err := os.ReadFile(filepath.Join("..", "..", filepath.FromSlash(p)))
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Errorf("%s is stale; run make manifests. It holds:\n%s\nwant:\n%s", p, got, want)
		}
	}
}
