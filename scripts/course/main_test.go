package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestChecks: each check accepts what a learner types right and refuses,
// with the one message, what they type wrong.
func TestChecks(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string // empty: accepted; else a part of the message
	}{
		{[]string{"chapter", "5"}, ""},
		{[]string{"chapter", "05"}, ""},
		{[]string{"chapter", "0"}, "a chapter is a number from 1 to"},
		{[]string{"chapter", "five"}, "a chapter is a number from 1 to"},
		{[]string{"chapter"}, "a chapter is a number from 1 to"},
		{[]string{"chapter", "5", "6"}, "one chapter"},
		{[]string{"chapter", "--from", "2", "1"}, "a chapter is a number from 2 to"},
		{[]string{"chapter", "--from", "2", "2"}, ""},
		{[]string{"chapter", "--deploy", "10"}, ""},
		{[]string{"chapter", "--deploy", "5"}, "make deploy runs the chapters that run in the cluster, 10 11"},
		{[]string{"chapter", "--deploy", "15"}, "rewrites a chapter that runs on your machine"},
		{[]string{"chapters", "10 11"}, ""},
		{[]string{"chapters", ""}, "no chapter named"},
		{[]string{"chapters", "--name", "TEST_CHAPTERS", "10 x"}, "TEST_CHAPTERS: a chapter is a number"},
		{[]string{"nonsense"}, "usage"},
	} {
		_, err := answer(tc.args)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("course %q: %v; want it accepted", tc.args, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("course %q: %v; want an error with %q", tc.args, err, tc.want)
		}
	}
	var stderr strings.Builder
	for _, lanes := range []string{"1-8 8-15", "1-8", "x"} {
		stderr.Reset()
		if code := run([]string{"prove-lanes", lanes}, &stderr, &stderr); code != 2 || !strings.Contains(stderr.String(), "PROVE_LANES") {
			t.Errorf("course prove-lanes %q: exit %d, %q; want 2 and a message that names PROVE_LANES", lanes, code, stderr.String())
		}
	}
	if out, err := answer([]string{"suite-dirs", "5 12"}); err != nil || out != "tests/chapter05 tests/chapter12" {
		t.Errorf("course suite-dirs 5 12 = %q, %v", out, err)
	}
}

// TestProveLanes: each lane runs make prove-range at once, each but the
// first on a local cluster of its own under the output directory, which
// is stopped at the end; each line is prefixed with its lane, and a
// failed lane fails the whole (a make on PATH stands in for the real one).
func TestProveLanes(t *testing.T) {
	bin := t.TempDir()
	fake := "#!/bin/sh\necho \"make $*\"\ncase \"$*\" in *RANGE=9-15*) exit 1;; esac\n"
	if err := os.WriteFile(filepath.Join(bin, "make"), []byte(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	var out strings.Builder
	err := proveLanes([]string{"1-8", "9-15"}, "/out", &out)
	if err == nil || !strings.Contains(err.Error(), "lanes 9-15 failed") {
		t.Errorf("proveLanes = %v; want lane 9-15 to fail it", err)
	}
	for _, want := range []string{
		"[1-8] make --no-print-directory prove-range RANGE=1-8\n",
		"[9-15] make --no-print-directory prove-range RANGE=9-15 CLUSTER=local OUTPUT_DIR=/out/lane-9-15\n",
		"[9-15] make --no-print-directory cluster-down CLUSTER=local OUTPUT_DIR=/out/lane-9-15\n",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the lanes printed:\n%s\nwant a line %q", out.String(), want)
		}
	}
	if strings.Contains(out.String(), "[1-8] make --no-print-directory cluster-down") {
		t.Errorf("the first lane stopped the test cluster, which is not its own:\n%s", out.String())
	}
}
