package localcluster

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestIsHollowTmpTakesOnlyWhatAHollowKubeletMakes(t *testing.T) {
	for path, want := range map[string]bool{
		"/tmp/hollow-kubelet.3484842645":         true,
		"/tmp/kubelet_remote_8674665223082.sock": true,
		"/tmp/hollow-kubelet.":                   false,
		"/tmp/hollow-kubelet.12/../../etc":       false,
		"/tmp/x/hollow-kubelet.12":               false,
		"/var/tmp/kubelet_remote_1.sock":         false,
		"/tmp/kubelet_remote_1.sock.bak":         false,
		"/etc/passwd":                            false,
		"":                                       false,
	} {
		if got := isHollowTmp(path); got != want {
			t.Errorf("isHollowTmp(%q) = %v, want %v", path, got, want)
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

func TestHollowSocketsOfFindsTheSocketAProcessListensOn(t *testing.T) {
	path := fmt.Sprintf("%s/kubelet_remote_%d.sock", hollowTmpDir, rand.Int64())
	l, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close(); os.Remove(path) })
	other, err := net.Listen("unix", filepath.Join(t.TempDir(), "other.sock"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { other.Close() })

	if got := hollowSocketsOf(os.Getpid()); !slices.Equal(got, []string{path}) {
		t.Errorf("hollowSocketsOf(this process) = %v, want [%s]", got, path)
	}
	if got := hollowSocketsOf(os.Getppid()); slices.Contains(got, path) {
		t.Errorf("hollowSocketsOf(another process) = %v: it names this process's socket", got)
	}
}

func TestSocketsInReadsTheInodeAndPathColumns(t *testing.T) {
	table := `Num       RefCount Protocol Flags    Type St Inode Path
0000000000000000: 00000002 00000000 00010000 0001 01 51234 /tmp/kubelet_remote_42.sock
0000000000000000: 00000002 00000000 00010000 0001 01 51235 /tmp/kubelet_remote_43.sock
0000000000000000: 00000003 00000000 00000000 0001 03 51236 /run/containerd.sock
0000000000000000: 00000003 00000000 00000000 0001 03 51237
`
	got := socketsIn([]byte(table), map[string]bool{"51234": true, "51236": true, "51237": true})
	if want := []string{"/tmp/kubelet_remote_42.sock"}; !slices.Equal(got, want) {
		t.Errorf("socketsIn = %v, want %v", got, want)
	}
}

func TestRemoveHollowTmpRemovesWhatWasRecordedAndNothingElse(t *testing.T) {
	stateDir := t.TempDir()
	dir, err := os.MkdirTemp(hollowTmpDir, "hollow-kubelet.")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.WriteFile(filepath.Join(dir, "kept-by-the-kubelet"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	// A file a record must never make us delete.
	decoy := filepath.Join(t.TempDir(), "decoy")
	if err := os.WriteFile(decoy, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	h := newHollowTmp(stateDir)
	if err := h.add(dir, dir, decoy); err != nil {
		t.Fatal(err)
	}
	// The record is a file in the state directory: a hand-edited one is
	// read with the same care.
	f, err := os.OpenFile(h.path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintln(f, decoy)
	f.Close()
	if data, _ := os.ReadFile(h.path); strings.Count(string(data), dir) != 1 {
		t.Errorf("the record lists %s other than once:\n%s", dir, data)
	}

	if err := removeHollowTmp(stateDir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("%s is still there (%v)", dir, err)
	}
	if _, err := os.Stat(decoy); err != nil {
		t.Errorf("the decoy outside the temp directory went: %v", err)
	}
	if _, err := os.Stat(h.path); !os.IsNotExist(err) {
		t.Errorf("the record %s is still there (%v)", h.path, err)
	}
	if err := removeHollowTmp(stateDir); err != nil {
		t.Errorf("with nothing recorded: %v", err)
	}
}
