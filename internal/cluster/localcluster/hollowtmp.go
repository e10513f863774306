package localcluster

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"syscall"
	"time"
)

// A hollow kubelet writes two things outside any directory it is given,
// and TMPDIR does not move them: kubemark makes its root directory with
// os.MkdirTemp("/tmp", "hollow-kubelet.") (k8s.io/kubernetes/test/utils,
// MakeTempDirOrDie) and never removes it, and its fake container runtime
// listens on /tmp/kubelet_remote_<random>.sock (k8s.io/cri-client/pkg/fake,
// GenerateEndpoint), which stays when the process stops. Neither can be
// configured. So once its kubelets are stopped, the cluster removes the
// root directories their logs name (a restarted kubelet appends to its
// log, so every start's is there) and every such socket that no process
// listens on any more.

// hollowTmpDir is where kubemark writes, whatever the environment says.
const hollowTmpDir = "/tmp"

var (
	rootDirLog  = regexp.MustCompile(`Using (\S+) as root dir for hollow-kubelet`)
	rootDirName = regexp.MustCompile(`^hollow-kubelet\.[0-9]+$`)
	socketName  = regexp.MustCompile(`^kubelet_remote_[0-9]+\.sock$`)
)

// removeNodeFiles removes what the stopped hollow kubelets of the cluster
// in stateDir left in the temp directory: the root directories that their
// logs name, and the fake runtimes' sockets that nobody listens on.
func removeNodeFiles(stateDir string) error { return removeNodeFilesIn(stateDir, hollowTmpDir) }

// removeNodeFilesIn is removeNodeFiles with tmp for /tmp.
func removeNodeFilesIn(stateDir, tmp string) error {
	logs, err := filepath.Glob(filepath.Join(stateDir, "logs", "hollow-node-*.log"))
	if err != nil {
		return err
	}
	var errs []error
	for _, l := range logs {
		for _, dir := range rootDirsIn(l) {
			if isRootDir(dir, tmp) { // a log is a file: never trust it further
				errs = append(errs, os.RemoveAll(dir))
			}
		}
	}
	errs = append(errs, removeStaleSockets(tmp))
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("removing what the hollow nodes left in %s: %w", tmp, err)
	}
	return nil
}

// isRootDir says whether path has the shape of a hollow kubelet's root
// directory in tmp: nothing else is ever removed.
func isRootDir(path, tmp string) bool {
	return filepath.Dir(path) == tmp && rootDirName.MatchString(filepath.Base(path))
}

// rootDirsIn returns the root directories a kubelet's log says it used,
// one per start.
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

// removeStaleSockets removes the fake runtimes' sockets in dir that refuse
// a connection: their process is gone. (Which socket was whose cannot be
// told afterwards: the runtime binds a temporary name and renames it, so
// /proc/net/unix shows the temporary one.) A socket of another cluster's
// running node answers and stays; one that is not ours to remove stays too.
func removeStaleSockets(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	var errs []error
	for _, e := range entries {
		if !socketName.MatchString(e.Name()) || e.Type()&os.ModeSocket == 0 {
			continue
		}
		path := filepath.Join(dir, e.Name())
		c, err := net.DialTimeout("unix", path, time.Second)
		if err == nil {
			c.Close()
			continue
		}
		if !errors.Is(err, syscall.ECONNREFUSED) {
			continue
		}
		if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) && !errors.Is(err, os.ErrPermission) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
