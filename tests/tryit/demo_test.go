//go:build e2e

package tryit

import (
	"context"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestDemo runs scripts/demo.sh, what `make demo` runs and the first
// command the README gives a newcomer, and checks that it shows what it
// says with the latest chapter: redis-sample-1 deleted with kubectl, back
// under the same name with a new UID, and the operator's event for it. So
// a later chapter cannot break the demo silently.
func TestDemo(t *testing.T) {
	// make try-it has installed the CRD, as make demo does before the script.
	root, kubectl := learnerSetup(t)
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()

	cmd := exec.CommandContext(ctx, "bash", "scripts/demo.sh")
	cmd.Dir = root
	cmd.Env = learnerEnv(kubectl)
	cmd.WaitDelay = 10 * time.Second
	outBytes, err := cmd.CombinedOutput()
	out := string(outBytes)
	t.Logf("scripts/demo.sh printed:\n%s", indent(out))
	if err != nil {
		t.Fatalf("scripts/demo.sh: %v", err)
	}

	// The pods table is printed before the delete and after the rebuild.
	rows := regexp.MustCompile(`(?m)^redis-sample-1\s+(\S+)\s+Running\s*$`).FindAllStringSubmatch(out, -1)
	if len(rows) != 2 {
		t.Fatalf("want redis-sample-1 Running in the pods table before the delete and after the rebuild, found it %d times", len(rows))
	}
	if rows[0][1] == rows[1][1] {
		t.Errorf("redis-sample-1 has the same UID %s before and after the delete: the demo did not show a rebuild", rows[0][1])
	}
	// The pod was created twice: two events, or one that counts both
	// ("3s (x2 over 9s)") where the recorder merged them.
	created := regexp.MustCompile(`(?m)^.*SuccessfulCreate\s+redis/redis-sample\s+Created pod redis-sample-1\s*$`).FindAllString(out, -1)
	if len(created) < 2 && (len(created) == 0 || !strings.Contains(created[0], "(x2")) {
		t.Errorf("want the Redis' SuccessfulCreate events to show redis-sample-1 created twice (before and after the delete), found %q", created)
	}
}
