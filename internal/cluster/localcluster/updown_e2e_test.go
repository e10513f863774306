//go:build e2e

package localcluster

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestUpDownLeavesTheTempDirectoryAsItFoundIt starts a local cluster of its
// own, kills one of its hollow nodes (the cluster starts it again, as it
// would after a crash), stops the cluster, and checks that nothing the
// nodes made stays in the temp directory. make test-local-cluster runs it.
func TestUpDownLeavesTheTempDirectoryAsItFoundIt(t *testing.T) {
	tool, bin := os.Getenv("CLUSTER_TOOL"), os.Getenv("KUBERNETES_BIN")
	if tool == "" || bin == "" {
		t.Fatal("CLUSTER_TOOL and KUBERNETES_BIN must be set: run `make test-local-cluster`")
	}
	// It counts what appears in the temp directory: another cluster's
	// nodes would add theirs.
	if others := kubemarks(""); len(others) > 0 {
		t.Fatalf("another local cluster runs (kubemark pids %v); stop it first (make cluster-down CLUSTER=local)", others)
	}
	nodes, err := NodesFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	before := hollowEntries(t)
	o := Options{BinDir: bin, StateDir: t.TempDir(), Nodes: nodes}
	var out bytes.Buffer
	t.Cleanup(func() {
		_ = Down(o, &out)
		t.Logf("cluster:\n%s", out.String())
	})
	if err := Up(t.Context(), o, []string{tool, "run", "--bin-dir", bin, "--state-dir", o.StateDir}, &out); err != nil {
		t.Fatal(err)
	}
	// Each node has made its root directory and its socket.
	waitForEntries(t, before, 2*nodes)

	node := nodeName(0)
	pid := kubemarks(o.StateDir)[node]
	if pid == 0 {
		t.Fatalf("no kubemark process for %s", node)
	}
	t.Logf("killing %s (pid %d)", node, pid)
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// Started again, it makes a root directory and a socket of its own;
	// the killed one's stay until the cluster stops.
	waitForEntries(t, before, 2*nodes+2)
	if again := kubemarks(o.StateDir)[node]; again == 0 || again == pid {
		t.Fatalf("%s was not started again (pid %d, before %d)", node, again, pid)
	}

	if err := Down(o, &out); err != nil {
		t.Fatal(err)
	}
	if left := added(before, hollowEntries(t)); len(left) > 0 {
		t.Errorf("the cluster is down and left in %s: %v", hollowTmpDir, left)
	}
}

// hollowEntries lists the hollow kubelets' root directories and sockets in
// the temp directory.
func hollowEntries(t *testing.T) []string {
	t.Helper()
	entries, err := os.ReadDir(hollowTmpDir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		if rootDirName.MatchString(e.Name()) || socketName.MatchString(e.Name()) {
			names = append(names, filepath.Join(hollowTmpDir, e.Name()))
		}
	}
	return names
}

func added(before, now []string) []string {
	return slices.DeleteFunc(slices.Clone(now), func(p string) bool { return slices.Contains(before, p) })
}

// waitForEntries waits up to a minute until n entries have been added
// since before.
func waitForEntries(t *testing.T, before []string, n int) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		got := added(before, hollowEntries(t))
		if len(got) == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d new root directories and sockets in %s after a minute, want %d: %v", len(got), hollowTmpDir, n, got)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// kubemarks returns the pids of the kubemark processes whose kubeconfig is
// in stateDir (any, when stateDir is empty), by node name.
func kubemarks(stateDir string) map[string]int {
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	found := map[string]int{}
	for _, p := range procs {
		data, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		args := strings.Split(strings.TrimRight(string(data), "\x00"), "\x00")
		if filepath.Base(args[0]) != "kubemark" {
			continue
		}
		pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(p)))
		for _, a := range args {
			config, ok := strings.CutPrefix(a, "--kubeconfig=")
			if ok && (stateDir == "" || filepath.Dir(config) == stateDir) {
				found[strings.TrimSuffix(filepath.Base(config), ".kubeconfig")] = pid
			}
		}
	}
	return found
}
