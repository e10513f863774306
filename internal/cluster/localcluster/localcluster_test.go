package localcluster

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestMissingBinaries(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []string{"etcd", "kube-apiserver"} {
		if err := os.WriteFile(filepath.Join(dir, c), nil, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	got := Options{BinDir: dir}.MissingBinaries()
	want := []string{"kube-controller-manager", "kube-scheduler", "kubemark"}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("MissingBinaries = %v, want %v", got, want)
	}
}

func TestRunningNeedsALiveProcessAndTheReadyFile(t *testing.T) {
	o := Options{StateDir: t.TempDir()}
	if pid := o.Running(); pid != 0 {
		t.Fatalf("Running = %d with an empty state directory", pid)
	}
	write := func(name, content string) {
		if err := os.WriteFile(filepath.Join(o.StateDir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(pidFile, strconv.Itoa(os.Getpid()))
	if pid := o.Running(); pid != 0 {
		t.Errorf("Running = %d before the ready file exists", pid)
	}
	write(readyFile, "")
	if pid := o.Running(); pid != os.Getpid() {
		t.Errorf("Running = %d, want this process %d", pid, os.Getpid())
	}
	write(pidFile, "999999999") // no such process
	if pid := o.Running(); pid != 0 {
		t.Errorf("Running = %d for a pid that does not exist", pid)
	}
}

func TestUpSaysWhichBinariesAreMissing(t *testing.T) {
	o := Options{BinDir: t.TempDir(), StateDir: t.TempDir()}
	err := Up(context.Background(), o, []string{"unused"}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "make kubernetes") || !strings.Contains(err.Error(), "kube-apiserver") {
		t.Errorf("Up error = %v, want the missing binaries and how to build them", err)
	}
}

func TestDownWithoutClusterIsFine(t *testing.T) {
	var out bytes.Buffer
	if err := Down(Options{StateDir: t.TempDir()}, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "No local cluster running") {
		t.Errorf("Down said %q", out.String())
	}
}
