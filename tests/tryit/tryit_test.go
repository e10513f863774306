//go:build e2e

// Package tryit runs the "Try it" section of every chapter's README against
// the test cluster, the way a learner types it, and compares what each
// command prints with what the README says it prints. So a README cannot
// promise output the code no longer gives.
//
// Run it with `make try-it` (every chapter) or `make try-it 3`: the
// Makefile provides KUBECONFIG, the pinned kubectl and, in
// TRY_IT_CHAPTERS, the chapters to run (empty: every one). Each chapter's
// session runs in one bash process in the repository's root, in the
// default namespace, with kubectl on PATH, as in a learner's terminal, so
// `cd`, variables, `cmd &` and `kill %1` work as they do there.
package tryit

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"example.com/redis-operator/chapters"
	"example.com/redis-operator/internal/cluster"
	"example.com/redis-operator/tests/docs"
)

// section is the README section whose console blocks run.
const section = "Try it"

// sessionTimeout bounds one chapter's session; a command that hangs
// fails the chapter instead of the whole run.
const sessionTimeout = 5 * time.Minute

// containersOnly is the info string of a "Try it" block whose commands
// need nodes that run containers (make deploy): on the local backend, it
// does not run, and the test says so.
const containersOnly = "console kind"

func TestTryIt(t *testing.T) {
	root, kubectl := learnerSetup(t)
	backend, _, err := cluster.Choose(t.Context(), os.Getenv("CLUSTER"))
	if err != nil {
		t.Fatal(err)
	}
	nodesRunContainers := backend != cluster.Local
	tried := chapters.All
	if named := os.Getenv("TRY_IT_CHAPTERS"); strings.TrimSpace(named) != "" {
		if tried, err = chapters.ParseList(named); err != nil {
			t.Fatalf("TRY_IT_CHAPTERS: %v", err)
		}
	}
	for _, c := range tried {
		readme := filepath.Join(root, c.Dir(), "README.md")
		t.Run(c.Name(), func(t *testing.T) {
			src, err := os.ReadFile(readme)
			if err != nil {
				t.Fatal(err)
			}
			blocks, err := docs.Parse(src).SectionBlocks(section)
			if err != nil {
				t.Fatalf("%s: %v; every chapter has a %q section", readme, err, section)
			}
			var steps []docs.Step
			for _, b := range blocks {
				if b.Lang != "console" {
					continue
				}
				if b.Info == containersOnly && !nodesRunContainers {
					t.Logf("%s: not running a %q block: the %s cluster's nodes run no containers; run make try-it on kind for it", readme, containersOnly, backend)
					continue
				}
				s, err := docs.ConsoleSteps(b.Text)
				if err != nil {
					t.Fatalf("%s, %q: %v", readme, section, err)
				}
				steps = append(steps, s...)
			}
			if len(steps) == 0 {
				t.Fatalf("%s: no console block in %q", readme, section)
			}
			cleanUp(t, kubectl)
			t.Cleanup(func() { cleanUp(t, kubectl) })
			run(t, root, kubectl, steps)
		})
	}
}

// marker starts the output of step N in the session's output, and says
// the exit status of step N-1.
const marker = "\x1etry-it step "

var markerLine = regexp.MustCompile(`(?m)^` + marker + `(\d+) (\d+)$`)

// klogLine is a line that client-go logs in kubectl, to its standard
// error: "W1127 03:17:04.009902   10969 reflector.go:664] ...".
var klogLine = regexp.MustCompile(`^[IWEF]\d{4} \d{2}:\d{2}:\d{2}\.\d+\s+\d+ \S+:\d+\] `)

// withoutKlog is a step's output without the lines that client-go logs in
// kubectl: on a busy machine, kubectl wait may log that its watch ended
// early and was made again, which is no part of what the step prints and
// no README shows.
func withoutKlog(text string) string {
	var kept []string
	for _, l := range strings.Split(text, "\n") {
		if !klogLine.MatchString(l) {
			kept = append(kept, l)
		}
	}
	return strings.Join(kept, "\n")
}

// run runs steps in one bash session and compares each step's output.
func run(t *testing.T, root, kubectl string, steps []docs.Step) {
	var script strings.Builder
	script.WriteString("exec 2>&1\n")
	for i, s := range steps {
		fmt.Fprintf(&script, "printf '\\n%s%d %%d\\n' $?\n%s\n", marker, i, s.Command)
	}
	fmt.Fprintf(&script, "printf '\\n%s%d %%d\\n' $?\n", marker, len(steps))

	scriptFile := filepath.Join(t.TempDir(), "session.sh")
	if err := os.WriteFile(scriptFile, []byte(script.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	// Ctrl-C reaches make and go test, not the session's own process
	// group: stop the session on it too.
	ctx, stop := signal.NotifyContext(t.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, sessionTimeout)
	defer cancel()
	// The script is a file, not standard input, so that a step that reads
	// its input cannot eat the steps after it.
	cmd := exec.CommandContext(ctx, "bash", "--noprofile", "--norc", scriptFile)
	cmd.Dir = root
	cmd.Env = learnerEnv(kubectl)
	// The session and whatever it leaves running in the background (the
	// operator) form one process group, stopped as a whole at the end.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	// A background step that keeps the output open does not hold Wait.
	cmd.WaitDelay = 10 * time.Second
	var out bytes.Buffer
	cmd.Stdout = &out
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitErr := cmd.Wait()
	stopGroup(t, cmd.Process.Pid)
	t.Logf("session of %d commands took %s", len(steps), time.Since(start).Round(time.Millisecond))

	outputs := split(out.String())
	failed := false
	for i, s := range steps {
		got, ran := outputs[i]
		if !ran {
			t.Errorf("$ %s\n  did not finish (session: %v, after %s)", s.Command, errOr(ctx.Err(), waitErr), time.Since(start).Round(time.Second))
			failed = true
			break
		}
		if got.status != 0 {
			t.Errorf("$ %s\n  exited with status %d (a learner's step must succeed); it printed:\n%s", s.Command, got.status, indent(got.text))
			failed = true
			break
		}
		if !docs.Match(s.Want, withoutKlog(got.text)) {
			t.Errorf("$ %s\n--- the README says:\n%s\n--- it printed:\n%s", s.Command, indent(strings.Join(s.Want, "\n")), indent(got.text))
			failed = true
			break
		}
	}
	if failed {
		// The operators of the session log to operator.log, or to a file
		// of their own (chapter 13's stale.log): the newest is the last's.
		if name, log := newestLog(root, start); name != "" {
			t.Logf("%s (the session's last operator), last lines:\n%s", name, lastLines(log, 40))
		}
	}
}

// newestLog is the name and text of the *.log file of dir written last
// since start, or "".
func newestLog(dir string, start time.Time) (name, text string) {
	paths, _ := filepath.Glob(filepath.Join(dir, "*.log"))
	var newest time.Time
	for _, p := range paths {
		info, err := os.Stat(p)
		if err != nil || info.ModTime().Before(start) || !info.ModTime().After(newest) {
			continue
		}
		if data, err := os.ReadFile(p); err == nil {
			name, text, newest = filepath.Base(p), string(data), info.ModTime()
		}
	}
	return name, text
}

// stopGroup stops what the session left running (an operator it did not
// stop itself) and waits until it is gone, so that the next session finds
// its ports free: SIGTERM, then SIGKILL after 30 seconds.
func stopGroup(t *testing.T, pgid int) {
	if syscall.Kill(-pgid, syscall.SIGTERM) != nil {
		return // nothing left
	}
	deadline := time.Now().Add(30 * time.Second)
	for syscall.Kill(-pgid, 0) == nil {
		if time.Now().After(deadline) {
			t.Logf("the session's processes ignored SIGTERM for 30s; killing them")
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// learnerSetup returns the repository's root and the pinned kubectl, and
// fails the test unless `make try-it` provided them and a KUBECONFIG.
func learnerSetup(t *testing.T) (root, kubectl string) {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	kubectl = os.Getenv("KUBECTL")
	if kubectl == "" || os.Getenv("KUBECONFIG") == "" {
		t.Fatal("KUBECTL and KUBECONFIG must be set: run `make try-it`, which starts the cluster and builds kubectl at its version")
	}
	return root, kubectl
}

// learnerEnv is the environment of a learner's terminal after `make
// cluster-up`: KUBECONFIG exported, the pinned kubectl first on PATH, and
// none of the variables that the make and go test running this test set
// but OUTPUT_DIR, which names the test cluster the session works on (its
// cluster.env says which backend): as a learner who keeps a cluster in
// another directory exports it (make try-it OUTPUT_DIR=... runs on
// that directory's cluster).
func learnerEnv(kubectl string) []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch name {
		case "MAKEFLAGS", "MAKELEVEL", "MFLAGS", "MAKEOVERRIDES", "GOFLAGS", "PATH", "OPERATOR_CHAPTER", "CHAPTER",
			// exported by the Makefile
			"KUBECTL", "KUBERNETES_VERSION", "CLUSTER", "LOCAL_CLUSTER_DIR", "ENVTEST_CLUSTER_DIR", "KIND_CLUSTER_DIR", "KIND_OFFLINE_NODE_IMAGE":
			continue
		}
		env = append(env, kv)
	}
	return append(env, "PATH="+filepath.Dir(kubectl)+string(os.PathListSeparator)+os.Getenv("PATH"))
}

// output is what one step printed and its exit status.
type output struct {
	text   string
	status int
}

// split cuts the session's output at the markers: step N's output is
// between marker N and marker N+1, which also gives its exit status.
func split(out string) map[int]output {
	outputs := map[int]output{}
	locs := markerLine.FindAllStringSubmatchIndex(out, -1)
	for i := 0; i+1 < len(locs); i++ {
		n, _ := strconv.Atoi(out[locs[i][2]:locs[i][3]])
		status, _ := strconv.Atoi(out[locs[i+1][4]:locs[i+1][5]])
		// The marker's own leading newline ends the previous output.
		outputs[n] = output{text: strings.TrimSuffix(out[locs[i][1]+1:locs[i+1][0]], "\n"), status: status}
	}
	return outputs
}

// cleanUp removes what a session leaves in the default namespace when it
// fails halfway: Redis objects (finalizers dropped, as no operator may be
// running) and their pods; and the events of earlier sessions, which a
// session lists.
func cleanUp(t *testing.T, kubectl string) {
	k := func(args ...string) string {
		out, _ := exec.Command(kubectl, args...).CombinedOutput()
		return string(out)
	}
	for _, name := range strings.Fields(k("get", "redis", "-n", "default", "-o", "name")) {
		k("patch", "-n", "default", name, "--type=merge", "-p", `{"metadata":{"finalizers":null}}`)
		k("delete", "-n", "default", name, "--wait=false")
	}
	k("delete", "pods", "-n", "default", "-l", "app.kubernetes.io/instance", "--wait=false")
	k("delete", "pods", "-n", "default", "-l", "run", "--wait=false") // what `kubectl run` made
	k("delete", "events", "-n", "default", "--all", "--wait=false")
	if out, err := exec.Command(kubectl, "wait", "-n", "default", "--for=delete", "pods", "-l", "app.kubernetes.io/instance", "--timeout=2m").CombinedOutput(); err != nil && !strings.Contains(string(out), "no matching resources") {
		t.Logf("cleaning up the default namespace: %v: %s", err, out)
	}
}

func errOr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return errors.New("the session ended early")
}

func indent(s string) string {
	return "    " + strings.ReplaceAll(s, "\n", "\n    ")
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func TestWithoutKlog(t *testing.T) {
	in := "W1127 03:17:04.009902   10969 reflector.go:664] \"Warning: watch ended with error\"\nredis.myapp.example.com/redis-sample condition met\n"
	if got, want := withoutKlog(in), "redis.myapp.example.com/redis-sample condition met\n"; got != want {
		t.Errorf("withoutKlog = %q, want %q", got, want)
	}
	if got := withoutKlog("Warning: pod db-1 exists\n"); got != "Warning: pod db-1 exists\n" {
		t.Errorf("withoutKlog dropped a line of the command's own: %q", got)
	}
}
