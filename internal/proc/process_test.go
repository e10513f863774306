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
	if err := p.Stop(10 * time.Second); err == nil || !strings.Contains(err.Error(), "exited after SIGTERM with signal: terminated") {
		t.Errorf("Stop = %v, want it to say that sleep exited on the signal, not gracefully", err)
	}
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
	if err := p.Stop(time.Second); err != nil { // a no-op on an exited process
		t.Errorf("Stop of an exited process = %v, want nil", err)
	}
}

// Stop says whether the process stopped gracefully: it exited with
// status 0 on SIGTERM; or it had to be killed.
func TestStopSaysHowTheProcessStopped(t *testing.T) {
	for _, tc := range []struct {
		name, script string
		grace        time.Duration
		want         string
	}{
		{"exits 0 on SIGTERM", `trap "exit 0" TERM; echo started; while :; do sleep 0.1; done`, 10 * time.Second, ""},
		{"exits 1 on SIGTERM", `trap "exit 1" TERM; echo started; while :; do sleep 0.1; done`, 10 * time.Second, "exited after SIGTERM with exit status 1"},
		{"ignores SIGTERM", `trap "" TERM; echo started; while :; do sleep 0.1; done`, 500 * time.Millisecond, "was killed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			logPath := filepath.Join(t.TempDir(), "p.log")
			log, err := os.Create(logPath)
			if err != nil {
				t.Fatal(err)
			}
			p, err := Start(exec.Command("sh", "-c", tc.script), log)
			if err != nil {
				t.Fatal(err)
			}
			for deadline := time.Now().Add(10 * time.Second); !strings.Contains(Tail(logPath, 1), "started"); {
				if time.Now().After(deadline) {
					t.Fatal("the script did not start")
				}
				time.Sleep(10 * time.Millisecond)
			}
			err = p.Stop(tc.grace)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("Stop = %v, want nil", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("Stop = %v, want an error saying %q", err, tc.want)
			}
		})
	}
}
