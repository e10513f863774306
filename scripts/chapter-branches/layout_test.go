package main

import (
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestRewritesAreTheMakefiles: the chapters that rewrite an earlier one
// are the Makefile's REWRITES, which make prove-chapter proves without a
// lesson spec, and each rewrites a chapter before it.
func TestRewritesAreTheMakefiles(t *testing.T) {
	makefile, err := os.ReadFile("../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^REWRITES := (.*)$`).FindSubmatch(makefile)
	if m == nil {
		t.Fatal("the Makefile sets no REWRITES")
	}
	var want, got []int
	for _, f := range strings.Fields(string(m[1])) {
		n, err := strconv.Atoi(f)
		if err != nil {
			t.Fatalf("REWRITES: %v", err)
		}
		want = append(want, n)
	}
	for n, b := range rewrites {
		got = append(got, n)
		if b < 1 || b >= n-1 {
			t.Errorf("chapter %d rewrites chapter %d, which is not a chapter before the one before it", n, b)
		}
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("rewrites has chapters %v, the Makefile's REWRITES %v", got, want)
	}
	if base(5) != 4 || base(13) != 9 {
		t.Errorf("base(5), base(13) = %d, %d; want 4, 9", base(5), base(13))
	}
}
