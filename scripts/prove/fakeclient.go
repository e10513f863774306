package main

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"

	"example.com/redis-operator/chapters"
)

// proveFakeClientMisses shows the fake client's place on the ladder with
// the table's FakeClientMisses: the chapter's unit tests, which run
// Reconcile on controller-runtime's fake client, pass against the
// mutant; then its spec, on the cluster that is up (an API server alone),
// kills it.
func proveFakeClientMisses(in mutantsInput, row chapters.Chapter) error {
	miss := row.FakeClientMisses
	if miss == nil {
		return fmt.Errorf("chapter %d names no mutant that a fake client misses (FakeClientMisses in chapters/chapters.go)", row.Number)
	}
	ms, err := readMutants(in.chapterDir, row.Number, miss.Mutant)
	if err != nil {
		return err
	}
	m := ms[0]
	fmt.Printf("=== Chapter %d's mutant %s, which a fake client cannot see (it lacks %s): the chapter's unit tests must pass against it, its spec must kill it\n%s\n",
		row.Number, m.Name, miss.Lacks, m.Bug)
	b := buildMutant(in, m)
	if b.err != nil {
		return b.err
	}
	fmt.Printf("--- the chapter's unit tests (the fake client) against the mutant\n")
	cmd := exec.Command("go", "test", "-count=1", "-overlay", filepath.Join(b.variant.out, "overlay.json"), "./"+row.Dir())
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("chapter %d's unit tests fail against the mutant %s, so a fake client does see it: name another in FakeClientMisses\n%s", row.Number, m.Name, out)
	}
	fmt.Printf("    %s\n    they pass: the bug is still there\n", strings.TrimSpace(string(out)))
	in.builds = mutantBuilds{m.Name: make(chan builtMutant, 1)}
	in.builds[m.Name] <- b
	in.only = m.Name
	return runMutants(in, nil)
}
