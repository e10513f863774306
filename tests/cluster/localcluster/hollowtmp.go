package localcluster

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"example.com/redis-operator/tests/proc"
)

// A hollow kubelet writes two things outside any directory it is given,
// and TMPDIR does not move them: kubemark makes its root directory with
// os.MkdirTemp("/tmp", "hollow-kubelet.") (k8s.io/kubernetes/test/utils,
// MakeTempDirOrDie) and never removes it, and its fake container runtime
// listens on /tmp/kubelet_remote_<random>.sock (k8s.io/cri-client/pkg/fake,
// GenerateEndpoint), which stays when the process is stopped. Neither
// can be configured. So Run records, in the state directory, the ones
// each of its kubelets made (the root directory from the kubelet's log,
// the socket from the process's open files), and removes them once the
// kubelets are stopped; Down removes them too when Run could not.

// hollowTmpFile lists, one per line, what the hollow kubelets left in
// hollowTmpDir.
const hollowTmpFile = "hollow-kubelet-tmp"

// hollowTmpDir is where kubemark writes, whatever the environment says.
const hollowTmpDir = "/tmp"

var (
	rootDirLog  = regexp.MustCompile(`Using (\S+) as root dir for hollow-kubelet`)
	rootDirName = regexp.MustCompile(`^hollow-kubelet\.[0-9]+$`)
	socketName  = regexp.MustCompile(`^kubelet_remote_[0-9]+\.sock$`)
)

// isHollowTmp says whether path is a root directory or a socket that a
// hollow kubelet makes: nothing else is ever removed.
func isHollowTmp(path string) bool {
	if filepath.Dir(path) != hollowTmpDir {
		return false
	}
	base := filepath.Base(path)
	return rootDirName.MatchString(base) || socketName.MatchString(base)
}

// hollowTmp is the record of what the hollow kubelets of one Run left in
// the temp directory.
type hollowTmp struct {
	path string // the record, in the state directory

	mu   sync.Mutex
	seen map[string]bool
}

func newHollowTmp(stateDir string) *hollowTmp {
	return &hollowTmp{path: filepath.Join(stateDir, hollowTmpFile), seen: map[string]bool{}}
}

// add records the paths not recorded yet.
func (h *hollowTmp) add(paths ...string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	var lines []byte
	for _, p := range paths {
		if !h.seen[p] && isHollowTmp(p) {
			h.seen[p] = true
			lines = fmt.Appendf(lines, "%s\n", p)
		}
	}
	if len(lines) == 0 {
		return nil
	}
	f, err := os.OpenFile(h.path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(lines)
	return errors.Join(err, f.Close())
}

// track records the root directory and the socket of the kubelet just
// started as p, which logs to logPath. It returns once it has found both,
// or the kubelet exited, or after two minutes; the kubelet makes both
// within a second or so.
func (h *hollowTmp) track(name string, p *proc.Process, logPath string) {
	pid, done := p.Pid(), p.Done()
	var root, socket bool
	deadline := time.After(2 * time.Minute)
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for !root || !socket {
		select {
		case <-done:
			return
		case <-deadline:
			log(fmt.Sprintf("%s: its root directory or socket not found after 2 minutes; they may stay in %s", name, hollowTmpDir))
			return
		case <-tick.C:
		}
		if !root {
			dirs := rootDirsIn(logPath)
			root = len(dirs) > 0
			h.logError(name, h.add(dirs...))
		}
		if !socket {
			sockets := hollowSocketsOf(pid)
			socket = len(sockets) > 0
			h.logError(name, h.add(sockets...))
		}
	}
}

func (h *hollowTmp) logError(name string, err error) {
	if err != nil {
		log(fmt.Sprintf("%s: recording its files in %s: %v", name, hollowTmpDir, err))
	}
}

// remove deletes what the stopped kubelets left: what was recorded, and
// every root directory their logs name (a kubelet stopped before track
// read its log).
func (h *hollowTmp) remove(kubelets []*component) error {
	var errs []error
	for _, c := range kubelets {
		errs = append(errs, h.add(rootDirsIn(c.logPath)...))
	}
	return errors.Join(append(errs, removeHollowTmp(filepath.Dir(h.path)))...)
}

// removeHollowTmp deletes every path that the record in stateDir lists,
// then the record.
func removeHollowTmp(stateDir string) error {
	record := filepath.Join(stateDir, hollowTmpFile)
	data, err := os.ReadFile(record)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var errs []error
	for _, p := range strings.Fields(string(data)) {
		if isHollowTmp(p) { // the record is a file: never trust it further
			errs = append(errs, os.RemoveAll(p))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("removing what the hollow kubelets left in %s: %w", hollowTmpDir, err)
	}
	return os.Remove(record)
}

// rootDirsIn returns the root directories a kubelet's log says it used,
// one per start (a restarted kubelet appends to its log).
func rootDirsIn(logPath string) []string {
	data, err := os.ReadFile(logPath)
	if err != nil {
		return nil
	}
	var dirs []string
	for _, m := range rootDirLog.FindAllSubmatch(data, -1) {
		dirs = append(dirs, string(m[1]))
	}
	return dirs
}

// hollowSocketsOf returns the hollow kubelet sockets that process pid
// listens on: the unix sockets among its open files (/proc/PID/fd) whose
// path, in /proc/PID/net/unix, is one. Nothing when the process is gone.
func hollowSocketsOf(pid int) []string {
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		return nil
	}
	inodes := map[string]bool{}
	for _, fd := range fds {
		link, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name()))
		if inode, ok := strings.CutPrefix(link, "socket:["); err == nil && ok {
			inodes[strings.TrimSuffix(inode, "]")] = true
		}
	}
	table, err := os.ReadFile(fmt.Sprintf("/proc/%d/net/unix", pid))
	if err != nil {
		return nil
	}
	return socketsIn(table, inodes)
}

// socketsIn reads /proc/net/unix (Num RefCount Protocol Flags Type St Inode
// Path) and returns the hollow kubelet sockets among the given inodes.
func socketsIn(table []byte, inodes map[string]bool) []string {
	var paths []string
	lines := bufio.NewScanner(bytes.NewReader(table))
	for lines.Scan() {
		f := strings.Fields(lines.Text())
		if len(f) >= 8 && inodes[f[6]] && isHollowTmp(f[7]) && !slices.Contains(paths, f[7]) {
			paths = append(paths, f[7])
		}
	}
	return paths
}
