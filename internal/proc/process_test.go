package proc

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestProcessLogsAndStops(t *testing.T) {
	logPath := filepath.Join(t.TempDir(), "p.log")
	log, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	p, err := Start(exec.Command("sh", "-c", "echo started; exec sleep 60"), log)
	if err != nil {
		t.Fatal(err)
	}
	if !p.Running() {
		t.Fatal("not running right after Start")
	}
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(Tail(logPath, 1), "started"); {
		if time.Now().After(deadline) {
			t.Fatalf("log = %q, want the process's output", Tail(logPath, 1))
		}
		time.Sleep(10 * time.Millisecond)
	}
	start := time.Now()
	p.Stop(10 * time.Second)
	if p.Running() {
		t.Error("still running after Stop")
	}
	if time.Since(start) > 5*time.Second {
		t.Errorf("Stop took %s: SIGTERM did not end sleep", time.Since(start))
	}
	if p.Err() == nil {
		t.Error("Err is nil for a process killed by SIGTERM")
	}
}

func TestProcessExitIsObserved(t *testing.T) {
	log, err := os.Create(filepath.Join(t.TempDir(), "p.log"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := Start(exec.Command("sh", "-c", "exit 3"), log)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("exit not observed")
	}
	if p.Err() == nil || !strings.Contains(p.Err().Error(), "exit status 3") {
		t.Errorf("Err = %v, want exit status 3", p.Err())
	}
	p.Stop(time.Second) // a no-op on an exited process
}
