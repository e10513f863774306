// Command cluster brings the test cluster up and down for the Makefile and
// for learners. The backend is CLUSTER (or --cluster): kind, local,
// envtest (an API server alone), existing, or auto (the default: kind when a Docker daemon answers, local
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
	"strings"
	"syscall"

	"example.com/redis-operator/internal/cluster"
	"example.com/redis-operator/internal/cluster/localcluster"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}

func usage(fs *flag.FlagSet) func() {
	return func() {
		fmt.Fprintf(fs.Output(), "Usage: %s up|down|status|choose|load-image|stop-apiserver|start-apiserver|run [flags]\n\n", os.Args[0])
		fmt.Fprintln(fs.Output(), "  up      start the cluster (or reuse a running one) and print its KUBECONFIG")
		fmt.Fprintln(fs.Output(), "  down    stop the cluster (with auto: every backend's cluster that runs)")
		fmt.Fprintln(fs.Output(), "  status  say whether the cluster is running")
		fmt.Fprintln(fs.Output(), "  choose  print the backend CLUSTER resolves to, and why (on stderr)")
		fmt.Fprintln(fs.Output(), "  load-image  put the image archive --archive on every node (kind only)")
		fmt.Fprintln(fs.Output(), "  stop-apiserver  stop the cluster's kube-apiserver (etcd and the nodes keep running)")
		fmt.Fprintln(fs.Output(), "  start-apiserver  start it again as it was, and wait until it answers")
		fmt.Fprintln(fs.Output(), "  run     keep the local cluster (--api-server-only: the API server alone) in the foreground until interrupted (what up starts)")
		fmt.Fprintln(fs.Output(), "\nThe kind backend also reads KIND_CLUSTER_NAME, KIND_CLUSTER_DIR, KIND_NODE_IMAGE,")
		fmt.Fprintln(fs.Output(), "KIND_OFFLINE_NODE_IMAGE and KIND_API_SERVER_PORT.\n\nFlags:")
		fs.PrintDefaults()
	}
}

func run() error {
	fs := flag.NewFlagSet("cluster", flag.ContinueOnError)
	var backend, binDir, stateDir, envtestDir, envFile, archive string
	fs.StringVar(&backend, "cluster", os.Getenv("CLUSTER"), "kind, local, envtest, existing or auto (default $CLUSTER, else auto)")
	fs.StringVar(&binDir, "bin-dir", "", "local and envtest: directory with etcd, kube-apiserver, kube-controller-manager, kube-scheduler and kubemark")
	fs.StringVar(&stateDir, "state-dir", "_output/local-cluster", "local: directory for the kubeconfig, pid file and logs")
	fs.StringVar(&envtestDir, "envtest-state-dir", "_output/envtest-cluster", "envtest: the same for the API server alone")
	apiServerOnly := fs.Bool("api-server-only", false, "run: the API server alone (envtest), in --envtest-state-dir")
	fs.StringVar(&envFile, "env-file", "", "up: also write the export lines to this file; down: remove it")
	fs.StringVar(&archive, "archive", "", "load-image: the image archive (docker save's format), e.g. _output/image/redis-operator.tar")
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
	for _, p := range []*string{&stateDir, &envtestDir, &binDir, &envFile} {
		if *p, err = abs(*p); err != nil {
			return err
		}
	}
	root, err := os.Getwd()
	if err != nil {
		return err
	}
	opts, err := cluster.OptionsFromEnv(root)
	if err != nil {
		return err
	}
	nodes, err := localcluster.NodesFromEnv()
	if err != nil {
		return err
	}
	opts.Local = localcluster.Options{BinDir: binDir, StateDir: stateDir, Nodes: nodes}
	opts.Envtest = localcluster.Options{BinDir: binDir, StateDir: envtestDir, APIServerOnly: true}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if cmd == "run" {
		if binDir == "" {
			return errors.New("--bin-dir is required")
		}
		if *apiServerOnly {
			return localcluster.Run(ctx, opts.Envtest)
		}
		return localcluster.Run(ctx, opts.Local)
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	opts.LocalRun = []string{self, "run", "--bin-dir", binDir, "--state-dir", stateDir}
	opts.EnvtestRun = []string{self, "run", "--api-server-only", "--bin-dir", binDir, "--envtest-state-dir", envtestDir}

	explicit := backend != "" && backend != "auto"
	name, reason, err := cluster.Choose(ctx, backend)
	if err != nil {
		return err
	}
	p, err := cluster.New(name, opts)
	if err != nil {
		return err
	}
	switch cmd {
	case "choose":
		fmt.Fprintf(os.Stderr, "Cluster: %s (%s)\n", name, reason)
		fmt.Println(name)
		return nil
	case "up":
		if !explicit {
			fmt.Fprintf(os.Stderr, "Cluster: %s (%s)\n", name, reason)
		}
		if (name == cluster.Local || name == cluster.Envtest) && binDir == "" {
			return fmt.Errorf("--bin-dir is required for the %s cluster", name)
		}
		if err := p.Up(ctx, os.Stderr); err != nil {
			return err
		}
		return writeExports(envFile, name, p.KubeconfigPath())
	case "down":
		// The exports go with the cluster they name: stopping the API
		// server alone leaves those of the local cluster that is up.
		if data, err := os.ReadFile(envFile); envFile != "" && err == nil &&
			(!explicit || strings.Contains(string(data), "export CLUSTER="+name+"\n")) {
			if err := os.Remove(envFile); err != nil && !errors.Is(err, os.ErrNotExist) {
				return err
			}
		}
		if explicit {
			return p.Down(ctx, os.Stderr)
		}
		// auto: whichever backend's cluster runs.
		var errs []error
		for _, n := range []string{cluster.Local, cluster.Envtest, cluster.Kind} {
			q, err := cluster.New(n, opts)
			if err == nil {
				err = q.Down(ctx, os.Stderr)
			}
			errs = append(errs, err)
		}
		return errors.Join(errs...)
	case "load-image":
		if archive == "" {
			return errors.New("load-image needs --archive (make docker-build writes one)")
		}
		if err := p.Check(ctx); err != nil {
			return fmt.Errorf("%w (start it with `make cluster-up CLUSTER=%s`)", err, name)
		}
		return p.LoadImage(ctx, archive, os.Stdout)
	case "stop-apiserver", "start-apiserver":
		if err := p.Check(ctx); err != nil {
			return fmt.Errorf("%w (start it with `make cluster-up CLUSTER=%s`)", err, name)
		}
		if cmd == "stop-apiserver" {
			return p.StopAPIServer(ctx, os.Stderr)
		}
		return p.StartAPIServer(ctx, os.Stderr)
	case "status":
		if err := p.Check(ctx); err != nil {
			return fmt.Errorf("%w (start it with `make cluster-up CLUSTER=%s`)", err, name)
		}
		fmt.Printf("%s cluster running\nexport KUBECONFIG=%s\n", name, p.KubeconfigPath())
		return nil
	default:
		fs.Usage()
		return fmt.Errorf("unknown command %q", cmd)
	}
}

// writeExports prints the lines that point a shell at the cluster, the
// KUBECONFIG line last, and writes them to envFile for the Makefile.
func writeExports(envFile, name, kubeconfig string) error {
	exports := fmt.Sprintf("export CLUSTER=%s\nexport KUBECONFIG=%s\n", name, kubeconfig)
	if envFile != "" {
		if err := os.MkdirAll(filepath.Dir(envFile), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(envFile, []byte(exports), 0o644); err != nil {
			return err
		}
	}
	fmt.Print(exports)
	return nil
}

func abs(path string) (string, error) {
	if path == "" {
		return "", nil
	}
	return filepath.Abs(path)
}
