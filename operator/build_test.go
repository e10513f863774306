package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// The operator that ships is built without the tag faults: none of its
// packages is the fault injection, which only the test build has (and
// only from the chapter that brings it, whose faults.go hooks it in).
func TestOnlyTheTestBuildInjectsFaults(t *testing.T) {
	module, err := exec.Command("go", "list", "-m").Output()
	if err != nil {
		t.Fatalf("go list -m: %v", err)
	}
	faultsPackage := func(tags string) []string {
		out, err := exec.Command("go", "list", "-tags", tags, "-deps", ".").Output()
		if err != nil {
			t.Fatalf("go list -tags %q -deps: %v", tags, err)
		}
		var found []string
		for _, p := range strings.Fields(string(out)) {
			if strings.HasPrefix(p, strings.TrimSpace(string(module))+"/") && strings.HasSuffix(p, "/faults") {
				found = append(found, p)
			}
		}
		return found
	}
	if found := faultsPackage(""); len(found) > 0 {
		t.Errorf("the operator that ships imports %v: fault injection must be in the test build only (the build tag faults)", found)
	}
	if _, err := os.Stat("faults.go"); err != nil {
		return // no fault injection in this project yet
	}
	if found := faultsPackage("faults"); len(found) != 1 {
		t.Errorf("the test build (the tag faults) imports %v, want the fault injection's package", found)
	}
}
