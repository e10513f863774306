package makefile

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestTheCheckCatchesARuleReadBeforeItsVariable: the bug the checks
// above exist for, in a Makefile of four lines, is seen by both: the
// warning, and the build missing from the prerequisites.
func TestTheCheckCatchesARuleReadBeforeItsVariable(t *testing.T) {
	dir := t.TempDir()
	mk := "test: $(build_under_test)\n\tbin/operator\nbuild:\n\tgo build -o bin/operator .\nbuild_under_test = build\n"
	if err := os.WriteFile(filepath.Join(dir, "Makefile"), []byte(mk), 0o644); err != nil {
		t.Fatal(err)
	}
	db, err := Read(Input{Dir: dir, Goals: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if len(db.Undefined) != 1 || !strings.Contains(db.Undefined[0], "build_under_test") {
		t.Errorf("warnings %q, want one for build_under_test", db.Undefined)
	}
	if db.Closure("test")["build"] {
		t.Error("test's prerequisites include build, though Make read them before build_under_test was defined")
	}
	if got := db.PathsUnder("test", "bin"); !slices.Equal(got, []string{"bin/operator"}) || !db.Builds("build", "bin/operator") {
		t.Errorf("PathsUnder(test) = %q, Builds(build, bin/operator) = %v; want [bin/operator], true", got, db.Builds("build", "bin/operator"))
	}
}
