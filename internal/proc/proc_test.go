package proc

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestTail(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.log")
	if err := os.WriteFile(path, []byte("a\nb\nc\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := Tail(path, 2); got != "b\nc" {
		t.Errorf("Tail(2) = %q, want %q", got, "b\nc")
	}
	if got := Tail(path, 10); got != "a\nb\nc" {
		t.Errorf("Tail(10) = %q, want the whole file", got)
	}
	if got := Tail(filepath.Join(t.TempDir(), "missing"), 2); !strings.Contains(got, "no such file") {
		t.Errorf("Tail(missing) = %q, want the error", got)
	}
}

func TestFreePort(t *testing.T) {
	port, err := FreePort()
	if err != nil {
		t.Fatal(err)
	}
	if port < lowestPort || port >= ephemeralLow() {
		t.Errorf("FreePort = %d, want a port from %d to below the ephemeral ports (%d)", port, lowestPort, ephemeralLow())
	}
	l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
	if err != nil {
		t.Fatalf("listening on the free port %d: %v", port, err)
	}
	defer l.Close()
}
