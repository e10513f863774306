package main

import (
	"strings"
	"testing"
)

func TestChaptersAreNumberedInOrder(t *testing.T) {
	for i, c := range chapters {
		if c.number != i+1 {
			t.Errorf("chapters[%d] is chapter %d, want %d", i, c.number, i+1)
		}
	}
}

func TestFindChapter(t *testing.T) {
	if c, err := findChapter(5); err != nil || c.slug != "rebuild-pods" {
		t.Errorf("findChapter(5) = %q, %v; want rebuild-pods", c.slug, err)
	}
	for _, n := range []int{0, -1, len(chapters) + 1} {
		_, err := findChapter(n)
		if err == nil || !strings.Contains(err.Error(), "--chapter must be between 1 and") {
			t.Errorf("findChapter(%d) error = %v, want a range message", n, err)
		}
	}
}
