// Command cluster brings the test cluster up and down for the Makefile and
// for learners. The backend is CLUSTER (or --cluster): kind, local,
// existing, or auto (the default: kind when a Docker daemon answers, local
// otherwise). `cluster up` prints `export CLUSTER=...` and, as its last
// line, `export KUBECONFIG=<path>`, and writes both to --env-file for the
// Makefile; `cluster down` stops what `up` started.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"example.com/redis-operator/tests/framework/clusters"
	"example.com/redis-operator/tests/framework/kindcluster"
	"example.com/redis-operator/tests/framework/localcluster"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}

func usage(fs *flag.FlagSet) func() {
	return func() {
		fmt.Fprintf(fs.Output(), "Usage: %s up|down|status|choose|run [flags]\n\n", os.Args[0])
		fmt.Fprintln(fs.Output(), "  up      start the cluster (or reuse a running one) and print its KUBECONFIG")
		fmt.Fprintln(fs.Output(), "  down    stop the cluster (with auto: every backend's cluster that runs)")
		fmt.Fprintln(fs.Output(), "  status  say whether the cluster is running")
		fmt.Fprintln(fs.Output(), "  choose  print the backend CLUSTER resolves to, and why (on stderr)")
		fmt.Fprintln(fs.Output(), "  run     keep the local cluster in the foreground until interrupted (what up starts)")
		fmt.Fprintln(fs.Output(), "\nThe kind backend also reads KIND_CLUSTER_NAME, KIND_CLUSTER_DIR, KIND_NODE_IMAGE,")
		fmt.Fprintln(fs.Output(), "KIND_OFFLINE_NODE_IMAGE and KIND_API_SERVER_PORT.\n\nFlags:")
		fs.PrintDefaults()
	}
}

type config struct {
	cluster string
	local   localcluster.Options
	kind    kindcluster.Options
	envFile string
}

func run() error {
	fs := flag.NewFlagSet("cluster", flag.ContinueOnError)
	var c config
	fs.StringVar(&c.cluster, "cluster", os.Getenv("CLUSTER"), "kind, local, existing or auto (default $CLUSTER, else auto)")
	fs.StringVar(&c.local.BinDir, "bin-dir", "", "local: directory with etcd, kube-apiserver, kube-controller-manager, kube-scheduler and kubemark")
	fs.StringVar(&c.local.StateDir, "state-dir", "_output/local-cluster", "local: directory for the kubeconfig, pid file and logs")
	fs.StringVar(&c.envFile, "env-file", "", "up: also write the export lines to this file; down: remove it")
	fs.Usage = usage(fs)
	if len(os.Args) < 2 {
		fs.Usage()
		return errors.New("missing command")
	}
	cmd := os.Args[1]
	if err := fs.Parse(os.Args[2:]); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments: %v", fs.Args())
	}
	var err error
	for _, p := range []*string{&c.local.StateDir, &c.local.BinDir, &c.envFile} {
		if *p, err = abs(*p); err != nil {
			return err
		}
	}
	kindDir, err := abs(filepath.Join("_output", "kind-cluster"))
	if err != nil {
		return err
	}
	if c.kind, err = kindcluster.OptionsFromEnv(kindDir); err != nil {
		return err
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if cmd == "run" {
		if c.local.BinDir == "" {
			return errors.New("--bin-dir is required")
		}
		return localcluster.Run(ctx, c.local)
	}
	explicit := c.cluster != "" && c.cluster != "auto"
	backend, reason, err := clusters.Choose(ctx, c.cluster)
	if err != nil {
		return err
	}
	switch cmd {
	case "choose":
		fmt.Fprintf(os.Stderr, "Cluster: %s (%s)\n", backend, reason)
		fmt.Println(backend)
		return nil
	case "up":
		if !explicit {
			fmt.Fprintf(os.Stderr, "Cluster: %s (%s)\n", backend, reason)
		}
		return up(ctx, c, backend)
	case "down":
		if explicit {
			return down(ctx, c, backend)
		}
		return errors.Join(down(ctx, c, clusters.Local), down(ctx, c, clusters.Kind))
	case "status":
		return status(c, backend)
	default:
		fs.Usage()
		return fmt.Errorf("unknown command %q", cmd)
	}
}

func up(ctx context.Context, c config, backend string) error {
	var kubeconfig string
	switch backend {
	case clusters.Local:
		if c.local.BinDir == "" {
			return errors.New("--bin-dir is required for the local cluster")
		}
		self, err := os.Executable()
		if err != nil {
			return err
		}
		args := []string{self, "run", "--bin-dir", c.local.BinDir, "--state-dir", c.local.StateDir}
		if err := localcluster.Up(ctx, c.local, args, os.Stderr); err != nil {
			return err
		}
		kubeconfig = c.local.KubeconfigPath()
	case clusters.Kind:
		if err := kindcluster.Up(ctx, c.kind, os.Stderr); err != nil {
			return err
		}
		kubeconfig = c.kind.KubeconfigPath()
	case clusters.Existing:
		kubeconfig = os.Getenv("KUBECONFIG")
		if kubeconfig == "" {
			return errors.New("CLUSTER=existing needs KUBECONFIG to point at the cluster")
		}
	}
	exports := fmt.Sprintf("export CLUSTER=%s\nexport KUBECONFIG=%s\n", backend, kubeconfig)
	if c.envFile != "" {
		if err := os.MkdirAll(filepath.Dir(c.envFile), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(c.envFile, []byte(exports), 0o644); err != nil {
			return err
		}
	}
	fmt.Print(exports)
	return nil
}

func down(ctx context.Context, c config, backend string) error {
	if c.envFile != "" {
		if err := os.Remove(c.envFile); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	switch backend {
	case clusters.Local:
		return localcluster.Down(c.local, os.Stderr)
	case clusters.Kind:
		if _, err := kindcluster.DockerAnswers(ctx); err != nil {
			fmt.Fprintf(os.Stderr, "No kind cluster to delete (%v)\n", err)
			return nil
		}
		return kindcluster.Down(c.kind, os.Stderr)
	}
	return nil // existing: not ours to stop
}

func status(c config, backend string) error {
	var kubeconfig string
	switch backend {
	case clusters.Local:
		pid := c.local.Running()
		if pid == 0 {
			return errors.New("no local cluster running (start one with `make cluster-up CLUSTER=local`)")
		}
		fmt.Printf("Local cluster running (pid %d)\n", pid)
		kubeconfig = c.local.KubeconfigPath()
	case clusters.Kind:
		exists, err := kindcluster.Exists(c.kind)
		if err != nil {
			return err
		}
		if !exists {
			return fmt.Errorf("no kind cluster %q (start one with `make cluster-up CLUSTER=kind`)", c.kind.Name)
		}
		fmt.Printf("kind cluster %q exists\n", c.kind.Name)
		kubeconfig = c.kind.KubeconfigPath()
	case clusters.Existing:
		kubeconfig = os.Getenv("KUBECONFIG")
	}
	fmt.Println("export KUBECONFIG=" + kubeconfig)
	return nil
}

func abs(path string) (string, error) {
	if path == "" {
		return "", nil
	}
	return filepath.Abs(path)
}
