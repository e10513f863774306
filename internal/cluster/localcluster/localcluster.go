// Package localcluster runs a small but real Kubernetes cluster on loopback
// without Docker: etcd and kube-apiserver (started through envtest's control
// plane, which manages their certificates, ports and users), the real
// kube-controller-manager (so the garbage collector and the namespace
// controller run), kube-scheduler, and kubemark hollow nodes: the real
// kubelet code with a fake container runtime, so pods are scheduled, reach
// Running and go through kubelet termination when deleted.
//
// All binaries come from one directory (see scripts/build-kubernetes.sh),
// built from Go sources at the version the Makefile pins.
//
// Run keeps the cluster in the foreground until its context ends. Up starts
// Run in a detached background process and returns once the cluster is
// ready, or reuses one that is already running; Down stops it.
// StopAPIServer and StartAPIServer stop the running cluster's API server and
// start it again, as an upgrade or a crash of a control plane would.
package localcluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"example.com/redis-operator/internal/cluster/apiserver"
	"example.com/redis-operator/internal/proc"
)

// Files in the state directory. The kubeconfig is the one users export; the
// pid file names the process that owns the cluster; the ready file appears
// once every component is up. The API server keeps its certificates in a
// directory of its own, so that it starts again with the same ones; the
// stopped file exists while StopAPIServer has it stopped.
const (
	KubeconfigFile = "kubeconfig"
	pidFile        = "cluster.pid"
	readyFile      = "ready"
	logFile        = "cluster.log"
	lockFile       = "up.lock"
	apiserverDir   = "kube-apiserver"
	stoppedFile    = "kube-apiserver.stopped"
)

// The signals that StopAPIServer and StartAPIServer send to Run's process.
const (
	stopAPIServerSignal  = syscall.SIGUSR1
	startAPIServerSignal = syscall.SIGUSR2
)

// The hollow nodes: by default, room for make bench's 1,000 objects of 3
// pods, spread over several nodes as on a real cluster. One kubelet's API
// client sends at most 50 requests a second and spends about four on
// every pod it starts, so a single node holding them all, not the
// controller that created them, would set how soon they run. Each node
// costs about 1.5% of a core while it runs; the suites need fewer
// (LOCAL_CLUSTER_NODES: CI's clusters have 4).
const (
	DefaultNodes = 8
	podsPerNode  = 400
	// NodesEnv names the variable that sets how many hollow nodes a local
	// cluster has.
	NodesEnv = "LOCAL_CLUSTER_NODES"
)

// NodesFromEnv is the number of hollow nodes that LOCAL_CLUSTER_NODES asks
// for, DefaultNodes when it is unset.
func NodesFromEnv() (int, error) {
	v := os.Getenv(NodesEnv)
	if v == "" {
		return DefaultNodes, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > 32 {
		return 0, fmt.Errorf("%s must be a number of hollow nodes from 1 to 32, got %q", NodesEnv, v)
	}
	return n, nil
}

// nodeCount is how many hollow nodes the cluster has.
func (o Options) nodeCount() int {
	if o.Nodes > 0 {
		return o.Nodes
	}
	return DefaultNodes
}

func nodeName(i int) string { return "hollow-node-" + strconv.Itoa(i+1) }

func nodeNames(n int) []string {
	names := make([]string, n)
	for i := range names {
		names[i] = nodeName(i)
	}
	return names
}

// configVersion changes whenever what Run starts changes (its flags, its
// components, its nodes), and is written to the ready file: a running
// cluster that an older checkout, or other options, started is restarted
// rather than silently reused.
func (o Options) configVersion() string {
	if o.APIServerOnly {
		return "1 (envtest.Environment: etcd and kube-apiserver alone)"
	}
	return fmt.Sprintf("6 (%d nodes of %d pods; kubelet API QPS 50; API server restartable)", o.nodeCount(), podsPerNode)
}

// Components are the binaries Run needs in BinDir.
var Components = []string{"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubemark"}

// Options says where the binaries are and where the cluster keeps its state.
type Options struct {
	// BinDir holds etcd, kube-apiserver, kube-controller-manager,
	// kube-scheduler and kubemark.
	BinDir string
	// StateDir holds the kubeconfig, the pid file and every component's log.
	StateDir string
	// Nodes is how many hollow nodes the cluster has; 0: DefaultNodes.
	Nodes int
	// APIServerOnly makes it the middle rung of the testing ladder: etcd
	// and kube-apiserver as controller-runtime's envtest.Environment
	// starts them for a test, and nothing else: no controller manager
	// (no garbage collector, no namespace controller), no scheduler, no
	// kubelet (RunAPIServerOnly).
	APIServerOnly bool
}

// what names the cluster in messages.
func (o Options) what() string {
	if o.APIServerOnly {
		return "API server alone (envtest)"
	}
	return "local cluster"
}

// upper is s with its first letter upper case, to start a message.
func upper(s string) string { return strings.ToUpper(s[:1]) + s[1:] }

// errAPIServerOnly is StopAPIServer's and StartAPIServer's answer on the
// API server alone: chapter 14's restarts need the whole cluster.
var errAPIServerOnly = fmt.Errorf("the API server alone (envtest) is not stopped and started under a test; the local cluster's is: %w", errors.ErrUnsupported)

// KubeconfigPath is where a running cluster's admin kubeconfig is written.
func (o Options) KubeconfigPath() string { return filepath.Join(o.StateDir, KubeconfigFile) }

// LogDir holds one log file per component.
func (o Options) LogDir() string { return filepath.Join(o.StateDir, "logs") }

// APIServerComponents are the binaries RunAPIServerOnly needs in BinDir.
var APIServerComponents = []string{"etcd", "kube-apiserver"}

// MissingBinaries lists the components that are not in BinDir.
func (o Options) MissingBinaries() []string {
	need := Components
	if o.APIServerOnly {
		need = APIServerComponents
	}
	var missing []string
	for _, c := range need {
		if fi, err := os.Stat(filepath.Join(o.BinDir, c)); err != nil || fi.IsDir() {
			missing = append(missing, c)
		}
	}
	return missing
}

// Running reports the pid of the process that owns a ready cluster in
// StateDir, or 0 if there is none.
func (o Options) Running() int {
	pid := readPid(filepath.Join(o.StateDir, pidFile))
	if pid == 0 || !alive(pid) {
		return 0
	}
	if _, err := os.Stat(filepath.Join(o.StateDir, readyFile)); err != nil {
		return 0
	}
	return pid
}

// Up returns once a cluster is ready in StateDir, starting one with
// `self run` in a detached process if none is running. self is the path of a
// binary whose "run" subcommand calls Run with the same options. Progress
// goes to progress.
func Up(ctx context.Context, o Options, self []string, progress io.Writer) error {
	if err := os.MkdirAll(o.StateDir, 0o755); err != nil {
		return err
	}
	// Two `up`s at once (two suites, two terminals) must not both start a
	// cluster in the same directory: the second waits for the first.
	unlock, err := lock(filepath.Join(o.StateDir, lockFile), progress)
	if err != nil {
		return err
	}
	defer unlock()

	if pid := o.Running(); pid != 0 {
		ready, _ := os.ReadFile(filepath.Join(o.StateDir, readyFile))
		err := apiserver.Ready(ctx, o.KubeconfigPath())
		switch {
		case err == nil && string(ready) == o.configVersion():
			fmt.Fprintf(progress, "%s already running (pid %d)\n", upper(o.what()), pid)
			return nil
		case err == nil:
			fmt.Fprintf(progress, "%s (pid %d) was started with another configuration (an older checkout); restarting it\n", upper(o.what()), pid)
		default:
			fmt.Fprintf(progress, "%s (pid %d) does not answer; restarting it\n", upper(o.what()), pid)
		}
		if err := Down(o, progress); err != nil {
			return err
		}
	}
	if missing := o.MissingBinaries(); len(missing) > 0 {
		return fmt.Errorf("missing Kubernetes binaries in %s: %s (build them with `make kubernetes`)",
			o.BinDir, strings.Join(missing, ", "))
	}
	if pid := readPid(filepath.Join(o.StateDir, pidFile)); pid != 0 && alive(pid) {
		return fmt.Errorf("a %s (pid %d) is starting or stopping in %s; try again, or `make cluster-down`", o.what(), pid, o.StateDir)
	}
	_ = os.Remove(filepath.Join(o.StateDir, readyFile))

	logPath := filepath.Join(o.StateDir, logFile)
	logf, err := os.Create(logPath)
	if err != nil {
		return err
	}
	defer logf.Close()
	cmd := exec.Command(self[0], self[1:]...)
	cmd.Stdout, cmd.Stderr = logf, logf
	// A new session: the cluster outlives this command and does not get the
	// terminal's Ctrl-C meant for it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if o.APIServerOnly {
		fmt.Fprintf(progress, "Starting an API server alone, as envtest starts it (etcd, kube-apiserver; no controller manager, scheduler or kubelet); log: %s\n", logPath)
	} else {
		fmt.Fprintf(progress, "Starting local cluster (etcd, kube-apiserver, kube-controller-manager, kube-scheduler, %d kubemark nodes); log: %s\n", o.nodeCount(), logPath)
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting %s: %w", o.what(), err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()

	err = wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 3*time.Minute, false, func(context.Context) (bool, error) {
		select {
		case err := <-exited:
			return false, fmt.Errorf("%s exited during start-up (%v); last lines of %s:\n%s", o.what(), err, logPath, proc.Tail(logPath, 20))
		default:
		}
		return o.Running() != 0, nil
	})
	if err != nil {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		if wait.Interrupted(err) && ctx.Err() == nil {
			return fmt.Errorf("%s not ready after 3 minutes; see %s:\n%s", o.what(), logPath, proc.Tail(logPath, 20))
		}
		return err
	}
	fmt.Fprintf(progress, "%s ready in %.1fs\n", upper(o.what()), time.Since(start).Seconds())
	// Let the child go: it is its own session and lives on.
	_ = cmd.Process.Release()
	return nil
}

// Down stops the cluster in StateDir, if any, and waits for it to exit.
func Down(o Options, progress io.Writer) error {
	pidPath := filepath.Join(o.StateDir, pidFile)
	pid := readPid(pidPath)
	if pid == 0 || !alive(pid) {
		fmt.Fprintf(progress, "No %s running\n", o.what())
		_ = os.Remove(pidPath)
		_ = os.Remove(filepath.Join(o.StateDir, readyFile))
		// A cluster that was killed left its nodes' files behind.
		return removeNodeFiles(o.StateDir)
	}
	fmt.Fprintf(progress, "Stopping %s (pid %d)\n", o.what(), pid)
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		return fmt.Errorf("stopping %s: %w", o.what(), err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for alive(pid) {
		if time.Now().After(deadline) {
			_ = syscall.Kill(-pid, syscall.SIGKILL)
			return errors.Join(fmt.Errorf("%s (pid %d) did not stop within 60s; killed its process group", o.what(), pid),
				removeNodeFiles(o.StateDir))
		}
		time.Sleep(100 * time.Millisecond)
	}
	fmt.Fprintf(progress, "%s stopped\n", upper(o.what()))
	// Run removed what its nodes left in the temp directory, unless it
	// was killed.
	return removeNodeFiles(o.StateDir)
}

// StopAPIServer stops the API server of the running cluster and returns
// once its process has exited. etcd and every other component keep
// running; StartAPIServer starts it again.
func StopAPIServer(ctx context.Context, o Options, progress io.Writer) error {
	if o.APIServerOnly {
		return errAPIServerOnly
	}
	pid := o.Running()
	if pid == 0 {
		return fmt.Errorf("no local cluster is running in %s", o.StateDir)
	}
	stopped := filepath.Join(o.StateDir, stoppedFile)
	if _, err := os.Stat(stopped); err == nil {
		fmt.Fprintln(progress, "The local cluster's kube-apiserver is stopped already")
		return nil
	}
	fmt.Fprintf(progress, "Stopping the local cluster's kube-apiserver (pid %d stops it)\n", pid)
	if err := syscall.Kill(pid, stopAPIServerSignal); err != nil {
		return fmt.Errorf("asking the local cluster (pid %d) to stop its kube-apiserver: %w", pid, err)
	}
	return o.waitFor(ctx, pid, time.Minute, "kube-apiserver to stop", func(context.Context) bool {
		_, err := os.Stat(stopped)
		return err == nil
	})
}

// StartAPIServer starts the API server that StopAPIServer stopped, with
// the same flags, port, certificates and storage, and returns once it
// answers. An API server that runs already is left alone.
func StartAPIServer(ctx context.Context, o Options, progress io.Writer) error {
	if o.APIServerOnly {
		return errAPIServerOnly
	}
	pid := o.Running()
	if pid == 0 {
		return fmt.Errorf("no local cluster is running in %s", o.StateDir)
	}
	stopped := filepath.Join(o.StateDir, stoppedFile)
	if _, err := os.Stat(stopped); err == nil {
		fmt.Fprintf(progress, "Starting the local cluster's kube-apiserver again (pid %d starts it)\n", pid)
		if err := syscall.Kill(pid, startAPIServerSignal); err != nil {
			return fmt.Errorf("asking the local cluster (pid %d) to start its kube-apiserver: %w", pid, err)
		}
	}
	return o.waitFor(ctx, pid, 2*time.Minute, "kube-apiserver to answer", func(ctx context.Context) bool {
		_, err := os.Stat(stopped)
		return errors.Is(err, os.ErrNotExist) && apiserver.Ready(ctx, o.KubeconfigPath()) == nil
	})
}

// waitFor polls done until it holds, the cluster's process pid exits, or
// timeout passes; the errors end with the cluster log's last lines.
func (o Options) waitFor(ctx context.Context, pid int, timeout time.Duration, what string, done func(context.Context) bool) error {
	logPath := filepath.Join(o.StateDir, logFile)
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		if !alive(pid) {
			return false, fmt.Errorf("the local cluster (pid %d) exited while waiting for %s; last lines of %s:\n%s", pid, what, logPath, proc.Tail(logPath, 20))
		}
		return done(ctx), nil
	})
	if wait.Interrupted(err) && ctx.Err() == nil {
		return fmt.Errorf("waited %s for %s; last lines of %s:\n%s", timeout, what, logPath, proc.Tail(logPath, 20))
	}
	return err
}

// Run starts every component, writes the kubeconfig and the ready file, and
// keeps the cluster up until ctx ends; then it stops everything and removes
// what the components left in the temp directory. Meanwhile SIGUSR1 stops
// the API server and SIGUSR2 starts it again (StopAPIServer and
// StartAPIServer send them).
func Run(ctx context.Context, o Options) (retErr error) {
	// Before anything else: these signals' default is to end the process.
	apiserverSignals := make(chan os.Signal, 1)
	signal.Notify(apiserverSignals, stopAPIServerSignal, startAPIServerSignal)
	defer signal.Stop(apiserverSignals)
	logDir := o.LogDir()
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		return err
	}
	pidPath := filepath.Join(o.StateDir, pidFile)
	if pid := readPid(pidPath); pid != 0 && pid != os.Getpid() && alive(pid) {
		return fmt.Errorf("a %s (pid %d) already runs in %s", o.what(), pid, o.StateDir)
	}
	if err := os.WriteFile(pidPath, []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
		return err
	}
	defer os.Remove(pidPath)
	defer os.Remove(filepath.Join(o.StateDir, readyFile))
	// A kubeconfig left behind would point at a stopped API server.
	defer os.Remove(o.KubeconfigPath())
	if o.APIServerOnly {
		return runAPIServerOnly(ctx, o)
	}
	stoppedPath := filepath.Join(o.StateDir, stoppedFile)
	_ = os.Remove(stoppedPath)
	defer os.Remove(stoppedPath)
	// A directory of our own rather than envtest's temporary one, which its
	// Stop deletes: started again, the API server finds its serving
	// certificate, its client CA and its ServiceAccount signing key there,
	// and every kubeconfig and token stays valid.
	certDir := filepath.Join(o.StateDir, apiserverDir)
	if err := os.RemoveAll(certDir); err != nil {
		return err
	}
	if err := os.MkdirAll(certDir, 0o700); err != nil {
		return err
	}
	defer os.RemoveAll(certDir)

	openLog := func(name string) (*os.File, error) { return os.Create(filepath.Join(logDir, name+".log")) }
	etcdLog, err := openLog("etcd")
	if err != nil {
		return err
	}
	defer etcdLog.Close()
	apiLog, err := openLog("kube-apiserver")
	if err != nil {
		return err
	}
	defer apiLog.Close()

	plane := &envtest.ControlPlane{
		Etcd: &envtest.Etcd{
			Path: filepath.Join(o.BinDir, "etcd"),
			Out:  etcdLog, Err: etcdLog,
			StartTimeout: time.Minute,
		},
		APIServer: &envtest.APIServer{
			Path: filepath.Join(o.BinDir, "kube-apiserver"),
			Out:  apiLog, Err: apiLog,
			CertDir:      certDir,
			StartTimeout: 2 * time.Minute,
			StopTimeout:  time.Minute,
		},
	}
	plane.Etcd.Configure().Set("unsafe-no-fsync", "true")
	api := plane.APIServer.Configure()
	// envtest turns the ServiceAccount admission plugin off because it runs
	// no controller manager. This cluster does, so it behaves like a real one.
	api.Disable("disable-admission-plugins")
	api.Set("authorization-mode", "Node", "RBAC")
	// As on production clusters that enforce it: setting blockOwnerDeletion
	// on a child needs update on the owner's finalizers subresource.
	api.Set("enable-admission-plugins", "OwnerReferencesPermissionEnforcement")
	api.Set("endpoint-reconciler-type", "none")
	// Stopped (see StopAPIServer), it answers 429 with Retry-After until
	// its requests in flight are done, then closes its connections within
	// 2 s, as kubeadm's control planes do. Without it, net/http waits up to
	// the request timeout, a minute, for the watches to end.
	api.Set("shutdown-send-retry-after", "true")

	log("Starting etcd and kube-apiserver")
	if err := plane.Start(); err != nil {
		return fmt.Errorf("starting etcd and kube-apiserver: %w", err)
	}
	defer func() {
		log("Stopping kube-apiserver and etcd")
		if err := plane.Stop(); err != nil && retErr == nil {
			retErr = err
		}
	}()

	caPath := filepath.Join(certDir, "serving-ca.crt")
	if err := os.WriteFile(caPath, plane.APIServer.CA, 0o644); err != nil {
		return err
	}
	kubeconfigFor := func(name string, user envtest.User) (string, error) {
		u, err := plane.AddUser(user, nil)
		if err != nil {
			return "", err
		}
		data, err := u.KubeConfig()
		if err != nil {
			return "", err
		}
		path := filepath.Join(o.StateDir, name+".kubeconfig")
		return path, os.WriteFile(path, data, 0o600)
	}
	kcmConfig, err := kubeconfigFor("kube-controller-manager", envtest.User{Name: "system:kube-controller-manager"})
	if err != nil {
		return err
	}
	schedConfig, err := kubeconfigFor("kube-scheduler", envtest.User{Name: "system:kube-scheduler"})
	if err != nil {
		return err
	}
	var kubelets []*component
	for _, name := range nodeNames(o.nodeCount()) {
		// The Node authorizer lets a kubelet touch only its own node and
		// the pods bound to it: each one has its own user.
		config, err := kubeconfigFor(name, envtest.User{Name: "system:node:" + name, Groups: []string{"system:nodes"}})
		if err != nil {
			return err
		}
		port, err := proc.FreePort()
		if err != nil {
			return err
		}
		kubelets = append(kubelets, &component{name: name, bin: "kubemark", args: []string{
			"--morph=kubelet",
			"--name=" + name,
			"--kubeconfig=" + config,
			"--use-host-image-service=false",
			"--kubelet-port=" + strconv.Itoa(port),
			"--kubelet-read-only-port=0",
			// A hollow pod costs no container, so a node holds more
			// than a real one's 110.
			"--max-pods=" + strconv.Itoa(podsPerNode),
			// A real kubelet's client limits since Kubernetes 1.27; the
			// hollow one's default to 10 and 20, and would hold pods
			// back from Running when many start at once.
			"--kube-api-qps=50",
			"--kube-api-burst=100",
		}})
	}

	procs := []*component{
		{name: "kube-controller-manager", args: []string{
			"--kubeconfig=" + kcmConfig,
			"--use-service-account-credentials=true",
			"--service-account-private-key-file=" + filepath.Join(certDir, "sa-signer.key"),
			"--root-ca-file=" + caPath,
			"--leader-elect=false",
			"--secure-port=0",
			"--controllers=*",
		}},
		{name: "kube-scheduler", args: []string{
			"--kubeconfig=" + schedConfig,
			"--leader-elect=false",
			"--secure-port=0",
		}},
	}
	procs = append(procs, kubelets...)
	// What the hollow kubelets leave in the temp directory goes once they
	// are stopped (deferred before their stops, so it runs after them);
	// and what an earlier Run that was killed left, now, before its
	// kubelets' logs are started afresh.
	if err := removeNodeFiles(o.StateDir); err != nil {
		log(err.Error())
	}
	defer func() {
		if err := removeNodeFiles(o.StateDir); err != nil {
			log(err.Error())
		}
	}()
	for _, p := range procs {
		log("Starting " + p.name)
		if err := p.start(o.BinDir, logDir); err != nil {
			return err
		}
		defer p.stop()
	}

	admin, err := kubeconfigFor("admin", envtest.User{Name: "admin", Groups: []string{"system:masters"}})
	if err != nil {
		return err
	}
	// Until the cluster is ready, a component that exits ends it; after,
	// it is started again.
	exited := make(chan *component, len(procs))
	for _, p := range procs {
		p.notifyExit(exited)
	}
	log("Waiting for " + strconv.Itoa(o.nodeCount()) + " nodes to be Ready and the default service account to exist")
	if err := waitReady(ctx, admin, o.nodeCount(), exited); err != nil {
		return err
	}
	// Publish the admin kubeconfig under its well-known name only now, so a
	// kubeconfig that exists always points at a ready cluster.
	if err := os.Rename(admin, o.KubeconfigPath()); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(o.StateDir, readyFile), []byte(o.configVersion()), 0o644); err != nil {
		return err
	}
	log("Cluster ready; kubeconfig: " + o.KubeconfigPath())

	for {
		select {
		case <-ctx.Done():
			log("Shutting down")
			return nil
		case c := <-exited:
			if err := c.restart(o.BinDir, logDir); err != nil {
				return err
			}
			c.notifyExit(exited)
		case sig := <-apiserverSignals:
			if err := toggleAPIServer(plane.APIServer, sig, stoppedPath); err != nil {
				return err
			}
		}
	}
}

// toggleAPIServer stops the API server or starts it again, as sig asks,
// and marks which with the stopped file. A signal that asks for what is
// already so is ignored. The API server starts again with the same flags:
// envtest keeps its port, and its certificates stay in their directory.
func toggleAPIServer(api *envtest.APIServer, sig os.Signal, stoppedPath string) error {
	_, err := os.Stat(stoppedPath)
	stopped := err == nil
	switch {
	case sig == stopAPIServerSignal && !stopped:
		log("Stopping kube-apiserver (asked with SIGUSR1)")
		if err := api.Stop(); err != nil {
			return fmt.Errorf("stopping kube-apiserver: %w", err)
		}
		log("kube-apiserver stopped; SIGUSR2 starts it again")
		return os.WriteFile(stoppedPath, nil, 0o644)
	case sig == startAPIServerSignal && stopped:
		log("Starting kube-apiserver again (asked with SIGUSR2)")
		if err := api.Start(); err != nil {
			return fmt.Errorf("starting kube-apiserver again: %w", err)
		}
		log("kube-apiserver started again")
		return os.Remove(stoppedPath)
	default:
		log(fmt.Sprintf("Ignoring %v: kube-apiserver is %s already", sig, map[bool]string{true: "stopped", false: "running"}[stopped]))
		return nil
	}
}

// waitReady waits until every node is Ready and the service-account
// controller has made the default namespace usable for pods; a component
// that exits meanwhile, sent on exited, ends the wait with an error.
func waitReady(ctx context.Context, kubeconfig string, nodes int, exited <-chan *component) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	notReady := nodeNames(nodes) // until the nodes are listed: all of them
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		select {
		case c := <-exited:
			return false, fmt.Errorf("%s exited unexpectedly (%v); see %s", c.name, c.proc.Err(), c.logPath)
		default:
		}
		names, err := nodesNotReady(ctx, cs, nodes)
		if err != nil {
			return false, nil // the API server may still be settling
		}
		notReady = names
		return len(names) == 0 && saExists(ctx, cs), nil
	})
	switch {
	case wait.Interrupted(err) && len(notReady) > 0:
		return fmt.Errorf("nodes not Ready after 2 minutes: %s", strings.Join(notReady, ", "))
	case wait.Interrupted(err):
		return errors.New("the default service account still missing after 2 minutes")
	}
	return err
}

// nodesNotReady names the hollow nodes, of the first n, that are not
// registered and Ready.
func nodesNotReady(ctx context.Context, cs kubernetes.Interface, n int) ([]string, error) {
	list, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	ready := map[string]bool{}
	for _, n := range list.Items {
		for _, c := range n.Status.Conditions {
			if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
				ready[n.Name] = true
			}
		}
	}
	var missing []string
	for _, name := range nodeNames(n) {
		if !ready[name] {
			missing = append(missing, name)
		}
	}
	return missing, nil
}

func saExists(ctx context.Context, cs kubernetes.Interface) bool {
	_, err := cs.CoreV1().ServiceAccounts(metav1.NamespaceDefault).Get(ctx, "default", metav1.GetOptions{})
	return err == nil
}

// component is one cluster process that is not managed by envtest.
type component struct {
	name     string // also its log file's
	bin      string // the binary in BinDir, when not name
	args     []string
	logPath  string
	proc     *proc.Process
	restarts int
}

// maxRestarts bounds how many times a component that exits once the
// cluster is ready is started again: more means it cannot run, and the
// cluster stops with its error.
const maxRestarts = 5

func (c *component) start(binDir, logDir string) error {
	c.logPath = filepath.Join(logDir, c.name+".log")
	flags := os.O_CREATE | os.O_WRONLY | os.O_TRUNC
	if c.restarts > 0 {
		flags = os.O_CREATE | os.O_WRONLY | os.O_APPEND // keep why it exited
	}
	out, err := os.OpenFile(c.logPath, flags, 0o644)
	if err != nil {
		return err
	}
	bin := c.bin
	if bin == "" {
		bin = c.name
	}
	cmd := exec.Command(filepath.Join(binDir, bin), c.args...)
	c.proc, err = proc.Start(cmd, out)
	return err
}

func (c *component) stop() {
	log("Stopping " + c.name)
	if err := c.proc.Stop(20 * time.Second); err != nil {
		log(fmt.Sprintf("Stopping %s: %v", c.name, err))
	}
}

// restart starts again a component that exited once the cluster was
// ready, as the kubelet restarts a control plane's static pods and systemd
// a kubelet. They may exit on purpose: kube-scheduler does when its cache
// and the API server disagree, which an API server restart can cause.
func (c *component) restart(binDir, logDir string) error {
	if c.restarts == maxRestarts {
		return fmt.Errorf("%s exited unexpectedly (%v), after %d restarts; see %s", c.name, c.proc.Err(), c.restarts, c.logPath)
	}
	c.restarts++
	log(fmt.Sprintf("%s exited (%v); starting it again (%d of at most %d); see %s", c.name, c.proc.Err(), c.restarts, maxRestarts, c.logPath))
	return c.start(binDir, logDir)
}

// notifyExit sends c on ch when its process exits.
func (c *component) notifyExit(ch chan<- *component) {
	p := c.proc
	go func() {
		<-p.Done()
		ch <- c
	}()
}

// lock takes an exclusive lock on path, waiting for it if needed, and
// returns the function that releases it.
func lock(path string, progress io.Writer) (func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		fmt.Fprintf(progress, "Waiting for another `cluster up` in %s\n", filepath.Dir(path))
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
			f.Close()
			return nil, fmt.Errorf("locking %s: %w", path, err)
		}
	}
	return func() { f.Close() }, nil
}

func readPid(path string) int {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		return 0
	}
	return pid
}

func alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

func log(msg string) {
	fmt.Fprintf(os.Stderr, "%s %s\n", time.Now().Format("15:04:05.000"), msg)
}
