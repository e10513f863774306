// Command bench measures the Redis operator next to Kubernetes' own
// controllers on one cluster, in one run: by default the operators of the
// chapters the table of chapters names as its baselines and of the one it
// measures (a row's Bench; --old-chapters, --new-chapter), each reconciling its own namespace, against a StatefulSet (same-name
// rebuilds: the direct peer) and a ReplicaSet (new names: the lower bound)
// of the same size. `make bench` runs it; see Usage for what it measures.
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
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"example.com/redis-operator/chapters"
)

const usage = `Usage: bench [flags]

Measures, on the cluster of KUBECONFIG (make bench sets it), the
operators of the chapters compared and of the chapter measured (the table
of chapters' Bench column; --old-chapters, --new-chapter), each in a
namespace of its own, against a StatefulSet and a ReplicaSet:
  rebuild   latency from the delete call to the replacement's ADDED watch
            event, and the controller's own share (from the old pod's
            DELETED event, or for the ReplicaSet from the start of its
            deletion), graceful and --grace-period=0, p50/p90/p99, every
            target interleaved delete by delete, after warm-up rounds
  converge  time from the first create until N objects x 3 pods exist and
            until they run, one target at a time in a random order, each
            on a node that has stopped the last one's pods, with rebuilds
            under churn (a grace-0 delete a second while they converge)
  api       requests per reconcile while converging; writes and requests
            in steady state; requests by method and code, reconciles and
            reconcile errors while a namespace of Redis objects is deleted
  memory    each operator's RSS and Go heap after forced GCs, idle and
            with unrelated pods in the cluster, one operator at a time

It prints one table, with the ratios to the StatefulSet and the ReplicaSet
and whether the chapter measured meets its targets, and writes the raw
samples to OUT/bench-<time>.json. N is 100, or what the nodes have room
for; the local backend's nodes hold 3,200 pods.

Flags:
`

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}

// defaultSamples is how many rounds of deletes a run makes by default:
// enough for the rebuild verdict's tail test to catch a chapter 3% of
// whose rebuilds are 1.5 s slower in 95% of runs, with a margin (the rule
// is in print.go). A round deletes two pods of every target, one after the
// other: with the five default targets it took about 6.5 s on the local
// backend (2026-11-24), so 600 take about 65 minutes.
const defaultSamples = 600

// config is what a run measures, from the flags.
type config struct {
	operatorBin     string
	oldChapters     chapterList // compared against, in this order
	newChapter      int         // the one the verdicts judge
	samples         int
	warmup          int
	objects         int
	apiObjects      int
	unrelatedPods   int
	steady          time.Duration
	churnInterval   time.Duration
	out             string
	image           string
	skipMemory      bool
	skipConvergence bool
}

func run() error {
	c := config{oldChapters: chapterList(chapters.Where(func(c chapters.Chapter) bool { return c.Bench == chapters.BenchBaseline }))}
	flag.StringVar(&c.operatorBin, "operator", "bin/operator", "the course's operator binary")
	flag.Var(&c.oldChapters, "old-chapters", "the chapters to compare against, a comma-separated `list`; the memory verdict compares with the first")
	flag.IntVar(&c.newChapter, "new-chapter", measuredChapter, "the chapter measured")
	flag.IntVar(&c.samples, "samples", envInt("BENCH_SAMPLES", defaultSamples), "deletes per target and delete kind (BENCH_SAMPLES)")
	flag.IntVar(&c.warmup, "warmup", 2, "rebuild rounds before the recorded ones")
	flag.IntVar(&c.objects, "objects", envInt("BENCH_N", 0), "objects of 3 pods each for convergence (BENCH_N; default 100, or fewer if the nodes have no room)")
	flag.IntVar(&c.apiObjects, "api-objects", 0, "Redis objects per operator for steady state and namespace deletion (default 100, or fewer if the nodes have no room)")
	flag.IntVar(&c.unrelatedPods, "unrelated-pods", envInt("BENCH_UNRELATED_PODS", 5000), "unrelated pods for the memory measurement (BENCH_UNRELATED_PODS)")
	flag.DurationVar(&c.steady, "steady", 10*time.Minute, "how long steady state is watched for requests")
	flag.DurationVar(&c.churnInterval, "churn-interval", time.Second, "how often a rebuild pod is deleted while objects converge")
	flag.StringVar(&c.out, "out", "_output/bench", "where the raw samples go")
	flag.StringVar(&c.image, "image", "redis:7.0", "the pods' image, the Redis operator's default")
	flag.BoolVar(&c.skipMemory, "skip-memory", false, "skip the memory measurement")
	flag.BoolVar(&c.skipConvergence, "skip-convergence", false, "skip convergence, churn, steady state and namespace deletion")
	reprint := flag.String("report", "", "print the table of an earlier run's JSON instead of measuring")
	flag.Usage = func() {
		fmt.Fprint(flag.CommandLine.Output(), usage)
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q (flags start with --)", flag.Args())
	}
	if *reprint != "" {
		return printReport(*reprint)
	}
	if c.samples < 1 || c.warmup < 0 || c.objects < 0 || c.apiObjects < 0 || c.unrelatedPods < 0 || c.steady <= 0 || c.churnInterval <= 0 {
		return fmt.Errorf("--samples must be at least 1, --steady and --churn-interval positive, and --warmup, --objects, --api-objects and --unrelated-pods not negative")
	}
	if err := c.checkChapters(); err != nil {
		return err
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

	m, err := describe(ctx, cs)
	if err != nil {
		return err
	}
	m.Kubernetes = version.GitVersion
	if err := c.fit(m.PodSlots); err != nil {
		return err
	}

	b := &bench{cfg: c, cs: cs, cl: cl, kubeconfig: kubeconfig}
	b.report.Machine = m
	b.report.Config = reportConfig{Samples: c.samples, Warmup: c.warmup, Objects: c.objects, APIObjects: c.apiObjects,
		UnrelatedPods: c.unrelatedPods, OldChapters: c.oldChapters, NewChapter: c.newChapter, Steady: c.steady.String(), ChurnInterval: c.churnInterval.String()}
	defer b.cleanup()

	if err := b.all(ctx); err != nil {
		// What was measured before the error is kept: a full run takes
		// an hour.
		if werr := b.write(); werr != nil {
			fmt.Fprintln(os.Stderr, "error: writing what was measured:", werr)
		}
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

// chapters returns the operator chapters a run measures, each a target of
// its own: the old ones in their order, then the new one.
func (c config) chapters() []int {
	return append(slices.Clone(c.oldChapters), c.newChapter)
}

// measuredChapter is the chapter the benchmark measures by default (the
// table's BenchMeasured), and the last it can: the chapters after it run
// in the cluster, and serve the metrics the benchmark reads only over
// HTTPS to authorized callers.
var measuredChapter = func() int {
	if ns := chapters.Where(func(c chapters.Chapter) bool { return c.Bench == chapters.BenchMeasured }); len(ns) > 0 {
		return ns[0]
	}
	return chapters.Latest().Number
}()

// checkChapters refuses a new chapter that is also an old one: the two
// would be one target twice, in one namespace. --old-chapters' own
// mistakes are refused as the flag is parsed (chapterList.Set).
func (c config) checkChapters() error {
	if _, err := chapters.Get(c.newChapter); err != nil {
		return fmt.Errorf("--new-chapter: %w", err)
	}
	for _, n := range c.chapters() {
		if n > measuredChapter {
			return fmt.Errorf("chapter %d serves its metrics only over HTTPS to authorized callers, which the benchmark does not scrape; its reconciler is chapter %d's, which the benchmark measures", n, measuredChapter)
		}
	}
	if slices.Contains(c.oldChapters, c.newChapter) {
		return fmt.Errorf("--old-chapters=%s lists chapter %d, the chapter measured (--new-chapter): leave it out of --old-chapters", c.oldChapters, c.newChapter)
	}
	return nil
}

// fixedPods is how many pods the bench runs at most at once, besides the
// measured objects': each target's rebuild object (every chapter's, the
// StatefulSet's and the ReplicaSet's), and replacements under churn.
func (c config) fixedPods() int { return (len(c.chapters())+2)*replicas + 4 }

// fit chooses the objects' numbers the nodes have room for, when not
// given, and refuses numbers they have no room for. Convergence runs one
// target's objects at a time; API cost runs every operator's at once.
func (c *config) fit(slots int) error {
	fixedPods := c.fixedPods()
	room := slots - fixedPods
	fitting := func(name string, n *int, perObject int) error {
		most := max(room/perObject, 0)
		switch {
		case *n == 0:
			*n = min(100, most)
			if *n < 100 {
				fmt.Printf("%s: %d (the nodes have room for %d more pods)\n", name, *n, slots)
			}
		case *n > most:
			return fmt.Errorf("%s=%d needs room for %d pods, but the cluster's nodes have room for %d; at most %d fits", name, *n, *n*perObject+fixedPods, slots, most)
		}
		if *n < 1 {
			return fmt.Errorf("the cluster's nodes have room for %d more pods: not enough for the measured objects", slots)
		}
		return nil
	}
	if err := fitting("BENCH_N", &c.objects, replicas); err != nil {
		return err
	}
	return fitting("--api-objects", &c.apiObjects, len(c.chapters())*replicas)
}

// chapterList is --old-chapters: chapter numbers, comma-separated.
type chapterList []int

func (l chapterList) String() string {
	s := make([]string, len(l))
	for i, n := range l {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ",")
}

// Set parses "5,7". It refuses an empty entry, one that is not a chapter
// number, and a chapter listed twice (two targets in one namespace).
func (l *chapterList) Set(s string) error {
	var out chapterList
	for i, entry := range strings.Split(s, ",") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			return fmt.Errorf("entry %d of %q is empty (want chapter numbers, comma-separated: 5,7)", i+1, s)
		}
		c, err := chapters.Parse(entry)
		if err != nil {
			return fmt.Errorf("%w (want chapter numbers, comma-separated: 5,7)", err)
		}
		n := c.Number
		if slices.Contains(out, n) {
			return fmt.Errorf("chapter %d is listed twice in %q", n, s)
		}
		out = append(out, n)
	}
	*l = out
	return nil
}

// printReport prints the table of a report written by an earlier run.
func printReport(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	b := &bench{}
	if err := json.Unmarshal(data, &b.report); err != nil {
		return fmt.Errorf("%s is not a bench report: %w", path, err)
	}
	b.print(os.Stdout)
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
