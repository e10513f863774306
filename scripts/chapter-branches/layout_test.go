package main

import (
	"testing"
)

// TestBase: a chapter builds on the one before, or on the one it
// rewrites (the table's Rewrites).
func TestBase(t *testing.T) {
	if base(5) != 4 || base(15) != 9 {
		t.Errorf("base(5), base(15) = %d, %d; want 4, 9", base(5), base(13))
	}
	if layoutOf(chapter{Number: 15}) != 9 || layoutOf(chapter{Number: 12}) != 12 {
		t.Error("chapter 15's branch must have chapter 9's layout, chapter 12's its own")
	}
}
