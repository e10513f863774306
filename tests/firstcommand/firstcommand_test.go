//go:build e2e

// Package firstcommand checks the README's learner commands as a
// learner's first commands, in a fresh clone with no bin/: each builds
// what it runs, and builds it again after an edit, so its verdict is
// always on the code in front of the learner (make test-first-command).
package firstcommand

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// lessonSpec is chapter 1's lesson spec, the one the edit must fail.
const lessonSpec = "gets pods <name>-0 to <name>-(N-1) with the operator's labels"

// labels is what the edit takes out of chapter 1: the labels of the pods
// it creates, which its lesson spec checks.
const labels = `			Labels: map[string]string{
				LabelName:      "redis",
				LabelInstance:  redis.Name,
				LabelManagedBy: "redis-operator",
			},
`

func TestFirstCommands(t *testing.T) {
	clone, kubectl := freshClone(t, "course", "test-first-command")
	if _, err := os.Stat(filepath.Join(clone, "bin")); !os.IsNotExist(err) {
		t.Fatalf("the fresh clone has a bin/ (%v)", err)
	}

	t.Run("make run 1", func(t *testing.T) { makeRun(t, clone, kubectl, 1) })
	// make run built bin/operator: without bin/ again, make test-chapter
	// is a first command too.
	if err := os.RemoveAll(filepath.Join(clone, "bin")); err != nil {
		t.Fatal(err)
	}

	suite := []string{"test-chapter", "1", "GINKGO_FLAGS=-v --timeout=15m --no-color=true --fail-on-empty --label-filter=lesson"}
	t.Run("make test-chapter 1", func(t *testing.T) {
		out, err := learnerMake(t, clone, 15*time.Minute, suite...)
		if err != nil {
			t.Fatalf("make test-chapter 1 in a fresh clone: %v", err)
		}
		if !regexp.MustCompile(`Ran 1 of \d+ Specs`).MatchString(out) || !strings.Contains(out, "SUCCESS!") {
			t.Errorf("make test-chapter 1 passed without running the lesson spec alone (want Ran 1 of N Specs, SUCCESS!)")
		}
		if _, err := os.Stat(filepath.Join(clone, "bin", "operator")); err != nil {
			t.Errorf("make test-chapter 1 passed, yet bin/operator is not there: %v", err)
		}
	})

	t.Run("make test-chapter 1 after an edit that breaks the lesson", func(t *testing.T) {
		pods := filepath.Join(clone, "chapters", "01-create-pods", "pods.go")
		code, err := os.ReadFile(pods)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Count(code, []byte(labels)) != 1 {
			t.Fatalf("%s does not set the pods' labels as this test expects; update its edit:\n%s", pods, labels)
		}
		if err := os.WriteFile(pods, bytes.Replace(code, []byte(labels), nil, 1), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("chapter 1's pods.go edited in the clone: its pods are created without their labels")
		// A red run waits out Eventually's timeout: 20 s, as make
		// prove-chapter's red runs on the local cluster, not 90.
		out, err := learnerMake(t, clone, 15*time.Minute, append([]string{"E2E_EVENTUALLY_TIMEOUT=20s"}, suite...)...)
		if err == nil {
			t.Fatal("make test-chapter 1 passed after chapter 1's pods lost their labels: it ran the binary built before the edit")
		}
		if !regexp.MustCompile(`(?m)^\s*\[FAIL\].*` + regexp.QuoteMeta(lessonSpec)).MatchString(out) {
			t.Errorf("make test-chapter 1 failed, but not in the lesson spec %q: %v", lessonSpec, err)
		}
	})
}

// freshClone clones HEAD of the course into FIRST_COMMAND_DIR/name for a
// test that make target runs, and returns the clone and the kubectl to
// use. Always the same directory, so that go's build cache, which keys a
// package on its directory too, serves the next run; one run at a time
// on the machine (a lock per name).
func freshClone(t *testing.T, name, target string) (clone, kubectl string) {
	t.Helper()
	base := os.Getenv("FIRST_COMMAND_DIR")
	kubectl = os.Getenv("KUBECTL")
	if base == "" || kubectl == "" || os.Getenv("KUBECONFIG") == "" {
		t.Fatalf("FIRST_COMMAND_DIR, KUBECTL and KUBECONFIG must be set: run make %s", target)
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(base, 0o755); err != nil {
		t.Fatal(err)
	}
	lock(t, filepath.Join(base, name+".lock"))
	stopGroupsOnSignal()
	clone = filepath.Join(base, name)
	if err := os.RemoveAll(clone); err != nil {
		t.Fatal(err)
	}
	run(t, "", "git", "clone", "-q", root, clone)
	return clone, kubectl
}

// makeRun runs make run N as a learner does and stops it once it has
// created a Redis' pod, which it must have done as chapter N.
func makeRun(t *testing.T, clone, kubectl string, chapter int) {
	ctx, cancel := context.WithTimeout(t.Context(), budget(t, 10*time.Minute))
	defer cancel()
	var out syncBuffer
	name := fmt.Sprintf("make run %d", chapter)
	cmd := exec.Command("make", "run", strconv.Itoa(chapter), "RUN_ARGS=--health-probe-bind-address 0 --metrics-bind-address 0")
	cmd.Dir = clone
	cmd.Env = learnerEnv()
	cmd.Stdout = io.MultiWriter(&out, indented(os.Stdout))
	cmd.Stderr = cmd.Stdout
	// In its own process group (startGroup), so that an interrupt reaches
	// the operator too, as ^C in a terminal does.
	t.Logf("$ %s (in %s)", name, clone)
	if err := startGroup(cmd); err != nil {
		t.Fatal(err)
	}
	defer endGroup(cmd.Process.Pid)
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGINT)
		select {
		case err := <-exited:
			t.Logf("%s stopped: %v", name, err)
		case <-time.After(30 * time.Second):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			t.Logf("%s killed, 30 s after the interrupt: %v", name, <-exited)
		}
	}()

	ns := fmt.Sprintf("first-command-%d-%d", chapter, time.Now().UnixNano()%1_000_000)
	run(t, "", kubectl, "create", "namespace", ns)
	defer run(t, "", kubectl, "delete", "namespace", ns, "--wait=false")
	redis := fmt.Sprintf("apiVersion: myapp.example.com/v1\nkind: Redis\nmetadata: {name: cache, namespace: %s}\nspec: {replicas: 1}\n", ns)
	applied := false
	for {
		select {
		case err := <-exited:
			exited <- err
			t.Fatalf("%s ended (%v) before it created the pod", name, err)
		case <-ctx.Done():
			t.Fatalf("%s created no pod cache-0 in time", name)
		case <-time.After(time.Second):
		}
		// The CRD is there once make run has installed it.
		if !applied {
			apply := exec.CommandContext(ctx, kubectl, "apply", "-f", "-")
			apply.Stdin = strings.NewReader(redis)
			applied = apply.Run() == nil
			continue
		}
		if exec.CommandContext(ctx, kubectl, "get", "pod", "cache-0", "-n", ns).Run() == nil {
			break
		}
	}
	if !strings.Contains(out.String(), "Creating pod") {
		t.Errorf("%s's operator logged no \"Creating pod\", yet cache-0 exists", name)
	}
	if !regexp.MustCompile(fmt.Sprintf(`Running the reconciler of one chapter\s+\{"chapter": %d,`, chapter)).MatchString(out.String()) {
		t.Errorf("%s's operator did not log that it runs chapter %d", name, chapter)
	}
	t.Logf("%s created the pod cache-0 of a Redis in %s: stopping it", name, ns)
}

// learnerMake runs make in the clone as a learner would, its output
// shown indented (so that CI picks none of its [FAIL] lines for its
// own), and returns that output.
func learnerMake(t *testing.T, clone string, timeout time.Duration, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), budget(t, timeout))
	defer cancel()
	var out syncBuffer
	cmd := exec.CommandContext(ctx, "make", args...)
	cmd.Dir = clone
	cmd.Env = learnerEnv()
	cmd.Stdout = io.MultiWriter(&out, indented(os.Stdout))
	cmd.Stderr = cmd.Stdout
	// Out of time, the whole group goes: make, Ginkgo, the suite's
	// operator.
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM) }
	cmd.WaitDelay = 30 * time.Second
	t.Logf("$ make %s (in %s)", strings.Join(quote(args), " "), clone)
	if err := startGroup(cmd); err != nil {
		return "", err
	}
	defer endGroup(cmd.Process.Pid)
	err := cmd.Wait()
	return out.String(), err
}

// budget is want, or less when the test's own deadline (go test
// -timeout) comes first: a step that ran past it would never reach its
// deferred clean-up, and leave its processes running.
func budget(t *testing.T, want time.Duration) time.Duration {
	if deadline, ok := t.Deadline(); ok {
		if left := time.Until(deadline) - time.Minute; left < want {
			return max(left, time.Second)
		}
	}
	return want
}

// groups are the process groups of the commands running: each a make with
// what it started (the operator, Ginkgo and its suite's operator).
var groups = struct {
	sync.Mutex
	pids map[int]bool
}{pids: map[int]bool{}}

// startGroup starts cmd in a process group of its own, which the test
// stops, whichever way it ends (endGroup, stopGroupsOnSignal).
func startGroup(cmd *exec.Cmd) error {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	groups.Lock()
	defer groups.Unlock()
	if err := cmd.Start(); err != nil {
		return err
	}
	groups.pids[cmd.Process.Pid] = true
	return nil
}

// endGroup kills what is left of the group of pid.
func endGroup(pid int) {
	groups.Lock()
	defer groups.Unlock()
	_ = syscall.Kill(-pid, syscall.SIGKILL)
	delete(groups.pids, pid)
}

// stopGroupsOnSignal kills every group when the test is interrupted (^C,
// or a timeout's SIGTERM): being groups of their own, they would not get
// the signal, and an operator left running would reconcile every Redis of
// the cluster the next steps use. Once per process, whichever test calls
// it first.
func stopGroupsOnSignal() { stopGroupsOnce.Do(stopGroups) }

var stopGroupsOnce sync.Once

func stopGroups() {
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM)
	go func() {
		sig := <-signals
		groups.Lock()
		for pid := range groups.pids {
			_ = syscall.Kill(-pid, syscall.SIGKILL)
		}
		fmt.Fprintf(os.Stderr, "%v: stopped the commands' process groups\n", sig)
		os.Exit(1)
	}()
}

// lock holds an exclusive lock on path until the test ends, waiting for
// another run to end first.
func lock(t *testing.T, path string) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Logf("another make test-first-command holds %s: waiting", path)
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { f.Close() })
}

// learnerEnv is the environment of a learner's terminal: none of what the
// make running this test passes down to its children. OUTPUT_DIR and
// CLUSTER stay: the clone works on the test cluster that is up.
func learnerEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch name {
		case "MAKEFLAGS", "MAKELEVEL", "MFLAGS", "MAKEOVERRIDES", "OPERATOR_CHAPTER", "CHAPTER", "VARIANT", "FAULTS", "FIRST_COMMAND_DIR":
			continue
		}
		env = append(env, kv)
	}
	return env
}

// run runs a command that must succeed.
func run(t *testing.T, dir string, name string, args ...string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
}

func quote(args []string) []string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = a
		if strings.ContainsAny(a, " '\"") {
			q[i] = "'" + a + "'"
		}
	}
	return q
}

// syncBuffer is a buffer two writers (a command's stdout and stderr) may
// share.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// indented writes each line to w with four spaces before it.
func indented(w io.Writer) io.Writer {
	return &indentWriter{w: w, start: true}
}

type indentWriter struct {
	mu    sync.Mutex
	w     io.Writer
	start bool
}

func (iw *indentWriter) Write(p []byte) (int, error) {
	iw.mu.Lock()
	defer iw.mu.Unlock()
	var b bytes.Buffer
	for _, c := range p {
		if iw.start {
			b.WriteString("    ")
		}
		b.WriteByte(c)
		iw.start = c == '\n'
	}
	if _, err := iw.w.Write(b.Bytes()); err != nil {
		return 0, err
	}
	return len(p), nil
}
