package localcluster

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestIsRootDirTakesOnlyAHollowKubeletsRootDirectory(t *testing.T) {
	for path, want := range map[string]bool{
		"/tmp/hollow-kubelet.3484842645":   true,
		"/tmp/hollow-kubelet.":             false,
		"/tmp/hollow-kubelet.12/../../etc": false,
		"/tmp/x/hollow-kubelet.12":         false,
		"/var/tmp/hollow-kubelet.12":       false,
		"/tmp/kubelet_remote_1.sock":       false,
		"/etc/passwd":                      false,
		"":                                 false,
	} {
		if got := isRootDir(path, "/tmp"); got != want {
			t.Errorf("isRootDir(%q) = %v, want %v", path, got, want)
		}
	}
}

func TestRootDirsInReadsEveryStartOfTheKubelet(t *testing.T) {
	logPath := filepath.Join(t.TempDir(), "hollow-node-1.log")
	log := `I1126 04:08:18.585830   15180 hollow_kubelet.go:153] Using /tmp/hollow-kubelet.3484842645 as root dir for hollow-kubelet
I1126 04:08:18.627391   15180 kubelet.go:389] "Adding static pod path" path="/tmp/hollow-kubelet.3484842645/static-pods1983326908"
I1126 04:09:18.585830   15190 hollow_kubelet.go:153] Using /tmp/hollow-kubelet.77 as root dir for hollow-kubelet
`
	if err := os.WriteFile(logPath, []byte(log), 0o644); err != nil {
		t.Fatal(err)
	}
	got := rootDirsIn(logPath)
	if want := []string{"/tmp/hollow-kubelet.3484842645", "/tmp/hollow-kubelet.77"}; !slices.Equal(got, want) {
		t.Errorf("rootDirsIn = %v, want %v", got, want)
	}
	if got := rootDirsIn(filepath.Join(t.TempDir(), "missing.log")); got != nil {
		t.Errorf("rootDirsIn of a missing log = %v, want nothing", got)
	}
}

func TestRemoveNodeFilesRemovesTheRootDirectoriesTheLogsName(t *testing.T) {
	stateDir, tmp := t.TempDir(), t.TempDir()
	dir, err := os.MkdirTemp(tmp, "hollow-kubelet.")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "kept-by-the-kubelet"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	other, err := os.MkdirTemp(tmp, "hollow-kubelet.")
	if err != nil {
		t.Fatal(err)
	}
	// A directory a log must never make us delete.
	decoy := t.TempDir()
	logs := filepath.Join(stateDir, "logs")
	if err := os.MkdirAll(logs, 0o755); err != nil {
		t.Fatal(err)
	}
	log := fmt.Sprintf("I1126 hollow_kubelet.go:153] Using %s as root dir for hollow-kubelet\nI1126 hollow_kubelet.go:153] Using %s as root dir for hollow-kubelet\n", dir, decoy)
	if err := os.WriteFile(filepath.Join(logs, "hollow-node-3.log"), []byte(log), 0o644); err != nil {
		t.Fatal(err)
	}

	if err := removeNodeFilesIn(stateDir, tmp); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("%s, named by the log, is still there (%v)", dir, err)
	}
	if _, err := os.Stat(other); err != nil {
		t.Errorf("%s, which no log names (another cluster's), went: %v", other, err)
	}
	if _, err := os.Stat(decoy); err != nil {
		t.Errorf("%s, outside the temp directory, went: %v", decoy, err)
	}
	if err := removeNodeFilesIn(t.TempDir(), tmp); err != nil {
		t.Errorf("with no logs: %v", err)
	}
}

func TestRemoveStaleSocketsKeepsTheOnesSomeoneListensOn(t *testing.T) {
	// Short: a socket's path has at most 107 bytes; t.TempDir's are long.
	dir, err := os.MkdirTemp("", "sockets")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	socket := func(name string) (string, net.Listener) {
		path := filepath.Join(dir, name)
		l, err := net.Listen("unix", path)
		if err != nil {
			t.Fatal(err)
		}
		// Closing a unix listener removes its file; a dead process's
		// socket file stays. Keep the file, as kubemark does.
		l.(*net.UnixListener).SetUnlinkOnClose(false)
		return path, l
	}
	live, l := socket(fmt.Sprintf("kubelet_remote_%d.sock", rand.Int64()))
	defer l.Close()
	stale, l2 := socket(fmt.Sprintf("kubelet_remote_%d.sock", rand.Int64()))
	l2.Close()
	otherName, l3 := socket("containerd.sock")
	l3.Close()
	notASocket := filepath.Join(dir, "kubelet_remote_7.sock")
	if err := os.WriteFile(notASocket, nil, 0o644); err != nil {
		t.Fatal(err)
	}

	if err := removeStaleSockets(dir); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]bool{live: true, stale: false, otherName: true, notASocket: true} {
		_, err := os.Stat(path)
		if got := err == nil; got != want {
			t.Errorf("%s: there = %v, want %v (%v)", filepath.Base(path), got, want, err)
		}
	}
}
