package proc

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// An operator that exits during start-up because one of its ports was
// taken is started again on other ports, portTries times; any other exit
// is not tried again.
func TestStartOperatorTriesOtherPortsWhenOneIsTaken(t *testing.T) {
	for _, tt := range []struct {
		name, says string
		starts     int
		portTaken  bool
	}{
		{"a port taken", "error: failed to start metrics server: listen tcp 127.0.0.1:1: bind: address already in use", portTries, true},
		{"another error", "error: no kubeconfig", 1, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			bin := filepath.Join(dir, "operator")
			if err := os.WriteFile(bin, []byte("#!/bin/sh\necho '"+tt.says+"'\nexit 1\n"), 0o755); err != nil {
				t.Fatal(err)
			}
			log := filepath.Join(dir, "log", "operator.log")
			_, err := StartOperator(context.Background(), OperatorOptions{Binary: bin, Chapter: 1, Kubeconfig: "none", LogPath: log})
			if err == nil {
				t.Fatal("started an operator that exits")
			}
			if errors.Is(err, errPortTaken) != tt.portTaken {
				t.Errorf("error %q: port taken = %v, want %v", err, !tt.portTaken, tt.portTaken)
			}
			data, err := os.ReadFile(log)
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Count(string(data), "==== "); got != tt.starts {
				t.Errorf("started %d times, want %d:\n%s", got, tt.starts, data)
			}
		})
	}
}
