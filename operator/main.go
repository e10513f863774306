// Command operator runs the Redis operator: a controller-runtime manager
// with the reconciler that controller.NewManager sets up, wired as
// kubebuilder's cmd/main.go wires it, plus a clear error for the two most
// common start-up mistakes (see preflight).
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/discovery"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	myappv1 "example.com/redis-operator/api/v1"
	"example.com/redis-operator/operator/controller"
	"example.com/redis-operator/operator/trace"
)

var scheme = runtime.NewScheme()

// injectFaults is nil in the operator that ships. The test build (the tag
// faults: make build-faults) sets it, in faults.go, to faults.Inject, so
// that the suites of chapters 12 and 13 can make this process misbehave on
// purpose; see operator/faults.
var injectFaults func(*ctrl.Options) (func(ctrl.Manager) error, error)

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
		metricsAddr, probeAddr  string
		pprofAddr               string
		leaderElect             bool
		leaderElectionNamespace string
		namespace               string
		maxConcurrentReconciles int
		webhookPort             int
		webhookCertDir          string
		tracePods               bool
	)
	flag.StringVar(&metricsAddr, "metrics-bind-address", "0", "address the metrics endpoint binds to, e.g. :8080; 0 disables it")
	flag.StringVar(&probeAddr, "health-probe-bind-address", ":8081", "address the health probe endpoint binds to; 0 disables it")
	flag.StringVar(&pprofAddr, "pprof-bind-address", "", "address the Go pprof endpoints bind to, e.g. 127.0.0.1:6060; disabled when empty")
	flag.BoolVar(&leaderElect, "leader-elect", false, "enable leader election, so that only one replica of the operator is active")
	flag.StringVar(&leaderElectionNamespace, "leader-election-namespace", "", "namespace of the leader election lease; required with --leader-elect outside a cluster")
	flag.StringVar(&namespace, "namespace", "", "reconcile only the Redis objects of this namespace (and cache only its objects); all namespaces when empty")
	flag.IntVar(&maxConcurrentReconciles, "max-concurrent-reconciles", 0, "how many Redis objects are reconciled at once (one Redis is never reconciled twice at once); 0 leaves it to the reconciler, whose default is 1 unless it sets its own")
	flag.IntVar(&webhookPort, "webhook-port", webhook.DefaultPort, "port the admission webhook server listens on, when the reconciler serves webhooks")
	flag.StringVar(&webhookCertDir, "webhook-cert-dir", "", "directory of the webhook server's tls.crt and tls.key, reloaded when they change; empty: "+filepath.Join(os.TempDir(), "k8s-webhook-server", "serving-certs"))
	flag.BoolVar(&tracePods, "trace-pods", false, "log each pod event's way from the API server's watch through the informer to the event handlers, and each pod create (see operator/trace)")
	opts := zap.Options{Development: true}
	opts.BindFlags(flag.CommandLine)
	flag.Parse()
	if flag.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q (flags start with --)", flag.Args())
	}
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&opts)))
	log := ctrl.Log.WithName("setup")

	if maxConcurrentReconciles < 0 {
		return fmt.Errorf("--max-concurrent-reconciles must be 0 or more, got %d", maxConcurrentReconciles)
	}
	if webhookPort < 1 || webhookPort > 65535 {
		return fmt.Errorf("--webhook-port must be a port number from 1 to 65535, got %d", webhookPort)
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
		Controller:              config.Controller{MaxConcurrentReconciles: maxConcurrentReconciles},
		// The server starts only if the reconciler registers a webhook.
		WebhookServer: webhook.NewServer(webhook.Options{Port: webhookPort, CertDir: webhookCertDir}),
	}
	if namespace != "" {
		mgrOptions.Cache.DefaultNamespaces = map[string]cache.Config{namespace: {}}
	}
	if tracePods {
		tracer := trace.New(ctrl.Log.WithName("trace"))
		mgrOptions.Cache.NewInformer = tracer.NewInformer
		cfg.Wrap(tracer.WrapTransport)
	}
	var addFaults func(ctrl.Manager) error
	if injectFaults != nil {
		if addFaults, err = injectFaults(&mgrOptions); err != nil {
			return err
		}
	}
	mgr, err := controller.NewManager(cfg, mgrOptions)
	if err != nil {
		return fmt.Errorf("setting up the manager: %w", err)
	}
	if addFaults != nil {
		if err := addFaults(mgr); err != nil {
			return err
		}
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return err
	}
	if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
		return err
	}

	log.Info("Starting operator", "host", cfg.Host)
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
