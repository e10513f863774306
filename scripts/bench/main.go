// Command bench measures the Redis operator next to Kubernetes' own
// controllers on one cluster, in one run: chapter 5's operator and the
// latest chapter's, each reconciling its own namespace, against a
// StatefulSet (same-name rebuilds: the direct peer) and a ReplicaSet (new
// names: the lower bound) of the same size. `make bench` runs it; see
// Usage for what it measures.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"syscall"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

const usage = `Usage: bench [flags]

Measures, on the cluster of KUBECONFIG (make bench sets it):
  rebuild   latency from the delete call to the replacement's ADDED watch
            event, and the controller's own share (the old pod's DELETED
            event to the replacement's ADDED), graceful and --grace-period=0,
            p50/p90/p99, the four targets interleaved delete by delete
  converge  time from the first create until N objects x 3 pods exist
  api       requests per reconcile while converging, writes in steady
            state, and the requests (and refusals) while a namespace with
            N Redis objects is deleted
  memory    the operator's RSS and Go heap, idle, without and with
            unrelated pods in the cluster, chapter 5 against the latest

It prints one table and writes the raw samples to OUT/bench-<time>.json.

Flags:
`

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}

// config is what a run measures, from the flags.
type config struct {
	operatorBin     string
	oldChapter      int
	newChapter      int
	samples         int
	objects         int
	unrelatedPods   int
	steady          time.Duration
	out             string
	image           string
	skipMemory      bool
	skipConvergence bool
}

func run() error {
	var c config
	flag.StringVar(&c.operatorBin, "operator", "bin/operator", "the course's operator binary")
	flag.IntVar(&c.oldChapter, "old-chapter", 5, "the chapter to compare against")
	flag.IntVar(&c.newChapter, "new-chapter", 0, "the chapter measured (default: the operator's latest)")
	flag.IntVar(&c.samples, "samples", envInt("BENCH_SAMPLES", 30), "deletes per target and delete kind (BENCH_SAMPLES)")
	flag.IntVar(&c.objects, "objects", envInt("BENCH_N", 100), "objects of 3 pods each for convergence and namespace deletion (BENCH_N)")
	flag.IntVar(&c.unrelatedPods, "unrelated-pods", envInt("BENCH_UNRELATED_PODS", 5000), "unrelated pods for the memory measurement (BENCH_UNRELATED_PODS)")
	flag.DurationVar(&c.steady, "steady", 30*time.Second, "how long steady state is watched for writes")
	flag.StringVar(&c.out, "out", "_output/bench", "where the raw samples go")
	flag.StringVar(&c.image, "image", "redis:7.0", "the pods' image, the Redis operator's default")
	flag.BoolVar(&c.skipMemory, "skip-memory", false, "skip the memory measurement")
	flag.BoolVar(&c.skipConvergence, "skip-convergence", false, "skip convergence and namespace deletion")
	flag.Usage = func() {
		fmt.Fprint(flag.CommandLine.Output(), usage)
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q (flags start with --)", flag.Args())
	}
	if c.samples < 1 || c.objects < 1 || c.unrelatedPods < 0 {
		return fmt.Errorf("--samples and --objects must be at least 1 and --unrelated-pods at least 0")
	}
	if c.newChapter == 0 {
		n, err := latestChapter(c.operatorBin)
		if err != nil {
			return err
		}
		c.newChapter = n
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	kubeconfig := os.Getenv("KUBECONFIG")
	if kubeconfig == "" {
		return errors.New("KUBECONFIG is not set; run `make bench`, or `make cluster-up` and export what it prints")
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	cfg.QPS, cfg.Burst = 200, 400 // the benchmark's own client must not be the bottleneck
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	cl, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return err
	}
	version, err := cs.Discovery().ServerVersion()
	if err != nil {
		return fmt.Errorf("cannot reach the cluster of %s: %w", kubeconfig, err)
	}

	b := &bench{cfg: c, cs: cs, cl: cl, kubeconfig: kubeconfig}
	b.report.Machine = machine{
		OS: runtime.GOOS, Arch: runtime.GOARCH, CPUs: runtime.NumCPU(), Go: runtime.Version(),
		Kubernetes: version.GitVersion, Cluster: os.Getenv("CLUSTER"), Date: time.Now().UTC().Format(time.RFC3339),
	}
	b.report.Config = reportConfig{Samples: c.samples, Objects: c.objects, UnrelatedPods: c.unrelatedPods,
		OldChapter: c.oldChapter, NewChapter: c.newChapter, Steady: c.steady.String()}
	defer b.cleanup()

	if err := b.all(ctx); err != nil {
		return err
	}
	b.print(os.Stdout)
	return b.write()
}

// write saves the report as JSON under the output directory.
func (b *bench) write() error {
	if err := os.MkdirAll(b.cfg.out, 0o755); err != nil {
		return err
	}
	path := filepath.Join(b.cfg.out, "bench-"+time.Now().UTC().Format("20060102T150405Z")+".json")
	data, err := json.MarshalIndent(b.report, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, append(data, '\n'), 0o644); err != nil {
		return err
	}
	fmt.Printf("\nraw samples: %s\n", path)
	return nil
}

func envInt(name string, def int) int {
	var n int
	if v := os.Getenv(name); v != "" {
		if _, err := fmt.Sscan(v, &n); err == nil {
			return n
		}
		fmt.Fprintf(os.Stderr, "warning: %s=%q is not a number; using %d\n", name, v, def)
	}
	return def
}
