package cluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"example.com/redis-operator/internal/cluster/kindcluster"
	"example.com/redis-operator/internal/cluster/localcluster"
)

// Provider is one test cluster backend, shaped after cluster-api's
// test/framework/bootstrap ClusterProvider: it brings the cluster up (or
// reuses it), says where its kubeconfig is, collects its logs, and takes
// it down.
type Provider interface {
	// Name is the backend: kind, local, envtest or existing.
	Name() string
	// APIServerOnly reports whether the cluster is an API server alone
	// (envtest): no controller manager, scheduler or kubelet, so nothing
	// provisions a namespace, collects garbage, schedules or runs a pod.
	APIServerOnly() bool
	// Up creates the cluster, or reuses a running one, and waits until its
	// API server answers. Progress goes to out.
	Up(ctx context.Context, out io.Writer) error
	// Down stops the cluster, if it runs; the existing backend's is not
	// ours to stop.
	Down(ctx context.Context, out io.Writer) error
	// Check returns nil when the cluster runs, else why it does not.
	Check(ctx context.Context) error
	// KubeconfigPath is the admin kubeconfig of the cluster.
	KubeconfigPath() string
	// CollectLogs writes the cluster's logs under dir, where they are not
	// files already, and returns the directory whose *.log files matter
	// most ("" when the backend has none).
	CollectLogs(ctx context.Context, dir string) (string, error)
	// LoadImage puts the image archive at path (`docker save`'s format)
	// on every node, so that a pod whose pull policy is IfNotPresent runs
	// it without a registry. ErrNoContainers when the nodes run none.
	LoadImage(ctx context.Context, path string, out io.Writer) error
	// StopAPIServer stops the cluster's API server, as an upgrade or a
	// crash of the control plane would, and returns once it has stopped;
	// its storage and every other component keep running. StartAPIServer
	// starts it again as it was and returns once it answers. Chapter 14's
	// suite restarts the API server with them. ErrUnsupported on the
	// existing backend.
	StopAPIServer(ctx context.Context, out io.Writer) error
	StartAPIServer(ctx context.Context, out io.Writer) error
}

// ErrNoContainers is LoadImage's error on the local backend: its hollow
// kubelets run no containers, so an image has nowhere to go.
var ErrNoContainers = errors.New("the local backend's nodes are hollow kubelets that run no containers: an image has nowhere to go (CLUSTER=kind runs them)")

// Options configure every backend; New uses the one it needs.
type Options struct {
	Kind  kindcluster.Options
	Local localcluster.Options
	// LocalRun is the command that runs the local cluster's supervisor in
	// the foreground (bin/cluster run ...); Up starts it in the background.
	LocalRun []string
	// Envtest and EnvtestRun are the same for the API server alone.
	Envtest    localcluster.Options
	EnvtestRun []string
}

// OptionsFromEnv reads the backends' options from the environment, with
// their state under root/_output by default: KIND_CLUSTER_NAME,
// KIND_CLUSTER_DIR, KIND_NODE_IMAGE, KIND_OFFLINE_NODE_IMAGE,
// KIND_API_SERVER_PORT, LOCAL_CLUSTER_DIR and ENVTEST_CLUSTER_DIR.
func OptionsFromEnv(root string) (Options, error) {
	k, err := kindcluster.OptionsFromEnv(filepath.Join(root, "_output", "kind-cluster"))
	if err != nil {
		return Options{}, err
	}
	dir := os.Getenv("LOCAL_CLUSTER_DIR")
	if dir == "" {
		dir = filepath.Join(root, "_output", "local-cluster")
	}
	envtestDir := os.Getenv("ENVTEST_CLUSTER_DIR")
	if envtestDir == "" {
		envtestDir = filepath.Join(root, "_output", "envtest-cluster")
	}
	return Options{Kind: k, Local: localcluster.Options{StateDir: dir},
		Envtest: localcluster.Options{StateDir: envtestDir, APIServerOnly: true}}, nil
}

// New returns the provider of the named backend (as Choose resolves it).
func New(name string, o Options) (Provider, error) {
	switch name {
	case Kind:
		return kindProvider{o.Kind}, nil
	case Local:
		return localProvider{Local, o.Local, o.LocalRun}, nil
	case Envtest:
		return localProvider{Envtest, o.Envtest, o.EnvtestRun}, nil
	case Existing:
		return existingProvider{os.Getenv("KUBECONFIG")}, nil
	default:
		return nil, fmt.Errorf("unknown cluster backend %q", name)
	}
}

type kindProvider struct{ o kindcluster.Options }

func (kindProvider) Name() string { return Kind }

func (kindProvider) APIServerOnly() bool { return false }

func (p kindProvider) Up(ctx context.Context, out io.Writer) error {
	return kindcluster.Up(ctx, p.o, out)
}

func (p kindProvider) Down(ctx context.Context, out io.Writer) error {
	if _, err := kindcluster.DockerAnswers(ctx); err != nil {
		fmt.Fprintf(out, "No kind cluster to delete (%v)\n", err)
		return nil
	}
	return kindcluster.Down(p.o, out)
}

func (p kindProvider) Check(ctx context.Context) error {
	exists, err := kindcluster.Exists(p.o)
	if err != nil {
		return err
	}
	if _, statErr := os.Stat(p.o.KubeconfigPath()); !exists || statErr != nil {
		return fmt.Errorf("no kind cluster %q with a kubeconfig in %s", p.o.Name, p.o.StateDir)
	}
	return nil
}

func (p kindProvider) KubeconfigPath() string { return p.o.KubeconfigPath() }

func (p kindProvider) CollectLogs(_ context.Context, dir string) (string, error) {
	return kindcluster.ExportLogs(p.o, dir)
}

func (p kindProvider) LoadImage(_ context.Context, path string, out io.Writer) error {
	return kindcluster.LoadImage(p.o, path, out)
}

func (p kindProvider) StopAPIServer(ctx context.Context, out io.Writer) error {
	return kindcluster.StopAPIServer(ctx, p.o, out)
}

func (p kindProvider) StartAPIServer(ctx context.Context, out io.Writer) error {
	return kindcluster.StartAPIServer(ctx, p.o, out)
}

// localProvider is the local backend, and the API server alone (envtest)
// when its options say APIServerOnly.
type localProvider struct {
	name string
	o    localcluster.Options
	run  []string
}

func (p localProvider) Name() string { return p.name }

func (p localProvider) APIServerOnly() bool { return p.o.APIServerOnly }

func (p localProvider) Up(ctx context.Context, out io.Writer) error {
	if len(p.run) == 0 {
		return fmt.Errorf("the %s backend needs the command that runs it (bin/cluster run)", p.name)
	}
	return localcluster.Up(ctx, p.o, p.run, out)
}

func (p localProvider) Down(_ context.Context, out io.Writer) error {
	return localcluster.Down(p.o, out)
}

func (p localProvider) Check(context.Context) error {
	if p.o.Running() == 0 {
		return fmt.Errorf("no %s cluster is running in %s", p.name, p.o.StateDir)
	}
	return nil
}

func (p localProvider) KubeconfigPath() string { return p.o.KubeconfigPath() }

// CollectLogs returns the components' log directory: they log to files.
func (p localProvider) CollectLogs(context.Context, string) (string, error) {
	return p.o.LogDir(), nil
}

func (localProvider) LoadImage(context.Context, string, io.Writer) error { return ErrNoContainers }

func (p localProvider) StopAPIServer(ctx context.Context, out io.Writer) error {
	return localcluster.StopAPIServer(ctx, p.o, out)
}

func (p localProvider) StartAPIServer(ctx context.Context, out io.Writer) error {
	return localcluster.StartAPIServer(ctx, p.o, out)
}

type existingProvider struct{ kubeconfig string }

func (existingProvider) Name() string { return Existing }

func (existingProvider) APIServerOnly() bool { return false }

func (p existingProvider) Up(ctx context.Context, _ io.Writer) error { return p.Check(ctx) }

func (existingProvider) Down(context.Context, io.Writer) error { return nil }

func (p existingProvider) Check(context.Context) error {
	if p.kubeconfig == "" {
		return errors.New("CLUSTER=existing needs KUBECONFIG to point at the cluster")
	}
	return nil
}

func (p existingProvider) KubeconfigPath() string { return p.kubeconfig }

func (existingProvider) CollectLogs(context.Context, string) (string, error) { return "", nil }

// errNotOurs is the existing backend's answer to stopping its API server.
var errNotOurs = fmt.Errorf("CLUSTER=existing: this project does not stop or start your cluster's API server: %w", errors.ErrUnsupported)

func (existingProvider) StopAPIServer(context.Context, io.Writer) error  { return errNotOurs }
func (existingProvider) StartAPIServer(context.Context, io.Writer) error { return errNotOurs }

func (existingProvider) LoadImage(context.Context, string, io.Writer) error {
	return errors.New("CLUSTER=existing: this project cannot reach your cluster's nodes; push the image to a registry they pull from, and set the Deployment's image to it")
}
