package main

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestLockDirRefusesASecondRunUntilTheFirstUnlocks(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cache", "branch")
	unlock, err := lockDir(dir)
	if err != nil {
		t.Fatalf("first lock: %v", err)
	}
	if _, err := lockDir(dir); err == nil || !strings.Contains(err.Error(), "another run") {
		t.Fatalf("second lock while the first is held: got %v, want an error naming another run", err)
	}
	unlock()
	unlock2, err := lockDir(dir)
	if err != nil {
		t.Fatalf("lock after unlock: %v", err)
	}
	unlock2()
}
