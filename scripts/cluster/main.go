// Command cluster brings the test cluster up and down for the Makefile and
// for learners: `cluster up` prints `export KUBECONFIG=<path>` as its last
// line, `cluster down` stops what `up` started.
//
// Only the local backend (no Docker; see tests/framework/localcluster) is
// implemented so far.
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
		fmt.Fprintf(fs.Output(), "Usage: %s up|down|status|run [flags]\n\n", os.Args[0])
		fmt.Fprintln(fs.Output(), "  up      start the local cluster (or reuse a running one) and print its KUBECONFIG")
		fmt.Fprintln(fs.Output(), "  down    stop the local cluster")
		fmt.Fprintln(fs.Output(), "  status  say whether the local cluster is running")
		fmt.Fprintln(fs.Output(), "  run     run the cluster in the foreground until interrupted (what up starts)")
		fmt.Fprintln(fs.Output(), "\nFlags:")
		fs.PrintDefaults()
	}
}

func run() error {
	fs := flag.NewFlagSet("cluster", flag.ContinueOnError)
	var o localcluster.Options
	fs.StringVar(&o.BinDir, "bin-dir", "", "directory with etcd, kube-apiserver, kube-controller-manager, kube-scheduler and kubemark")
	fs.StringVar(&o.StateDir, "state-dir", "_output/local-cluster", "directory for the kubeconfig, pid file and logs")
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
	if o.StateDir, err = abs(o.StateDir); err != nil {
		return err
	}
	if o.BinDir, err = abs(o.BinDir); err != nil {
		return err
	}

	switch cmd {
	case "up":
		if o.BinDir == "" {
			return errors.New("--bin-dir is required")
		}
		self, err := os.Executable()
		if err != nil {
			return err
		}
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		args := []string{self, "run", "--bin-dir", o.BinDir, "--state-dir", o.StateDir}
		if err := localcluster.Up(ctx, o, args, os.Stderr); err != nil {
			return err
		}
		fmt.Println("export KUBECONFIG=" + o.KubeconfigPath())
	case "down":
		return localcluster.Down(o, os.Stderr)
	case "status":
		if pid := o.Running(); pid != 0 {
			fmt.Printf("Local cluster running (pid %d)\nexport KUBECONFIG=%s\n", pid, o.KubeconfigPath())
			return nil
		}
		return errors.New("no local cluster running (start one with `make cluster-up`)")
	case "run":
		if o.BinDir == "" {
			return errors.New("--bin-dir is required")
		}
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		return localcluster.Run(ctx, o)
	default:
		fs.Usage()
		return fmt.Errorf("unknown command %q", cmd)
	}
	return nil
}

func abs(path string) (string, error) {
	if path == "" {
		return "", nil
	}
	return filepath.Abs(path)
}
