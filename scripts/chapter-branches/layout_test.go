package main

import (
	"testing"
)

// TestBase: a chapter builds on the one before, or on the one it
// rewrites (the table's Rewrites).
func TestBase(t *testing.T) {
	if base(5) != 4 || base(13) != 9 {
		t.Errorf("base(5), base(13) = %d, %d; want 4, 9", base(5), base(13))
	}
	if (chapter{number: 13}).layout() != 9 || (chapter{number: 12}).layout() != 12 {
		t.Error("chapter 13's branch must have chapter 9's layout, chapter 12's its own")
	}
}
