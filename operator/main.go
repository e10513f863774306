// Command operator runs the Redis operator with the reconciler of one chapter
// (--chapter N, default the latest), so that every chapter can be run and
// tested with the same binary.
package main

import (
	"flag"
	"fmt"
	"os"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/discovery"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	myappv1 "example.com/redis-operator/api/v1"
)

var scheme = runtime.NewScheme()

func init() {
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(myappv1.AddToScheme(scheme))
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}

func run() error {
	var (
		chapter                 int
		metricsAddr, probeAddr  string
		pprofAddr               string
		leaderElect             bool
		leaderElectionNamespace string
		namespace               string
	)
	latest := chapters[len(chapters)-1].number
	flag.IntVar(&chapter, "chapter", latest, fmt.Sprintf("which chapter's reconciler to run (1-%d)", latest))
	flag.StringVar(&metricsAddr, "metrics-bind-address", "0", "address the metrics endpoint binds to, e.g. :8080; 0 disables it")
	flag.StringVar(&probeAddr, "health-probe-bind-address", ":8081", "address the health probe endpoint binds to; 0 disables it")
	flag.StringVar(&pprofAddr, "pprof-bind-address", "", "address the Go pprof endpoints bind to, e.g. 127.0.0.1:6060; disabled when empty")
	flag.BoolVar(&leaderElect, "leader-elect", false, "enable leader election, so that only one replica of the operator is active")
	flag.StringVar(&leaderElectionNamespace, "leader-election-namespace", "", "namespace of the leader election lease; required with --leader-elect outside a cluster")
	flag.StringVar(&namespace, "namespace", "", "reconcile only the Redis objects of this namespace (and cache only its objects); all namespaces when empty")
	maxConcurrentReconciles := flag.Int("max-concurrent-reconciles", 4, "how many Redis objects are reconciled at once; one Redis is never reconciled twice at once")
	opts := zap.Options{Development: true}
	opts.BindFlags(flag.CommandLine)
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "Usage: %s [flags]\n\nChapters:\n", os.Args[0])
		for _, c := range chapters {
			fmt.Fprintf(flag.CommandLine.Output(), "  %d  %s\n", c.number, c.slug)
		}
		fmt.Fprintln(flag.CommandLine.Output(), "\nFlags:")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q (flags start with --)", flag.Args())
	}
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&opts)))
	log := ctrl.Log.WithName("setup")

	ch, err := findChapter(chapter)
	if err != nil {
		return err
	}
	if err := checkConcurrency(ch, *maxConcurrentReconciles); err != nil {
		return err
	}

	cfg, err := ctrl.GetConfig()
	if err != nil {
		return fmt.Errorf("no cluster configured (%w); start one with `make cluster-up` and export the KUBECONFIG it prints", err)
	}
	if err := preflight(cfg); err != nil {
		return err
	}

	mgrOptions := ctrl.Options{
		Scheme:                  scheme,
		Metrics:                 metricsserver.Options{BindAddress: metricsAddr},
		HealthProbeBindAddress:  probeAddr,
		PprofBindAddress:        pprofAddr,
		LeaderElection:          leaderElect,
		LeaderElectionID:        "redis-operator.myapp.example.com",
		LeaderElectionNamespace: leaderElectionNamespace,
	}
	if ch.cache != nil {
		mgrOptions.Cache = ch.cache()
	}
	if namespace != "" {
		mgrOptions.Cache.DefaultNamespaces = map[string]cache.Config{namespace: {}}
	}
	mgr, err := ctrl.NewManager(cfg, mgrOptions)
	if err != nil {
		return fmt.Errorf("creating the manager: %w", err)
	}
	if err := ch.setup(mgr, *maxConcurrentReconciles); err != nil {
		return fmt.Errorf("setting up the chapter %d reconciler: %w", ch.number, err)
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return err
	}
	if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
		return err
	}

	log.Info("Starting operator", "chapter", ch.number, "lesson", ch.slug, "host", cfg.Host)
	return mgr.Start(ctrl.SetupSignalHandler())
}

// preflight turns the two most common start-up mistakes into one clear
// line each, instead of a stream of retrying reflector errors: no API server
// behind the kubeconfig, and no Redis CRD installed.
func preflight(cfg *rest.Config) error {
	cfg = rest.CopyConfig(cfg)
	cfg.Timeout = 10 * time.Second
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return err
	}
	if _, err := dc.ServerVersion(); err != nil {
		return fmt.Errorf("cannot reach the Kubernetes API server at %s: %w (is the cluster up? `make cluster-up` starts one)", cfg.Host, err)
	}
	gv := myappv1.GroupVersion.String()
	if _, err := dc.ServerResourcesForGroupVersion(gv); err != nil {
		if apierrors.IsNotFound(err) {
			return fmt.Errorf("the Redis CRD (%s) is not installed in the cluster at %s; install it with `make install`", gv, cfg.Host)
		}
		return fmt.Errorf("looking up %s: %w", gv, err)
	}
	return nil
}

// checkConcurrency refuses --max-concurrent-reconciles below 1, and for a
// chapter that reconciles one Redis at a time whatever it says.
func checkConcurrency(ch chapterSetup, n int) error {
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "max-concurrent-reconciles" })
	if set && !ch.concurrent {
		return fmt.Errorf("--max-concurrent-reconciles is not used by chapter %d, which reconciles one Redis at a time", ch.number)
	}
	if n < 1 {
		return fmt.Errorf("--max-concurrent-reconciles must be at least 1, got %d", n)
	}
	return nil
}

func findChapter(n int) (chapterSetup, error) {
	for _, c := range chapters {
		if c.number == n {
			return c, nil
		}
	}
	return chapterSetup{}, fmt.Errorf("--chapter must be between %d and %d, got %d",
		chapters[0].number, chapters[len(chapters)-1].number, n)
}
