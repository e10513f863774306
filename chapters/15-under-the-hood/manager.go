package controller

import (
	"context"
	"fmt"
	"os"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/manager"
)

// DefaultMaxConcurrentReconciles is chapter 9's: how many workers take
// keys off the queue unless the operator's options say otherwise.
const DefaultMaxConcurrentReconciles = 4

// NewManager returns the operator's frame, a manager that serves the
// metrics and the probes, running one thing: the client-go controller,
// with client-go's leader election when the options ask for one.
func NewManager(cfg *rest.Config, opts ctrl.Options) (ctrl.Manager, error) {
	elect := opts.LeaderElection
	id, ns := opts.LeaderElectionID, opts.LeaderElectionNamespace
	opts.LeaderElection = false
	workers := opts.Controller.MaxConcurrentReconciles
	if workers == 0 {
		workers = DefaultMaxConcurrentReconciles
	}
	namespace := ""
	for n := range opts.Cache.DefaultNamespaces {
		namespace = n
	}
	mgr, err := ctrl.NewManager(cfg, opts)
	if err != nil {
		return nil, err
	}
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	c := NewController(kube, dyn, namespace, workers, opts.Cache.NewInformer)
	run := c.Run
	if elect {
		run = func(ctx context.Context) error { return runElected(ctx, kube, id, ns, c.Run) }
	}
	return mgr, mgr.Add(manager.RunnableFunc(run))
}

// runElected runs run while this process holds the Lease, and releases
// the Lease when ctx ends (ReleaseOnCancel), as chapter 10's operator
// does through controller-runtime.
func runElected(ctx context.Context, kube kubernetes.Interface, id, namespace string, run func(context.Context) error) error {
	host, err := os.Hostname()
	if err != nil {
		return err
	}
	if namespace == "" {
		return fmt.Errorf("leader election needs a namespace (--leader-election-namespace)")
	}
	lock := &resourcelock.LeaseLock{
		LeaseMeta:  metav1.ObjectMeta{Namespace: namespace, Name: id},
		Client:     kube.CoordinationV1(),
		LockConfig: resourcelock.ResourceLockConfig{Identity: host + "_" + string(uuid.NewUUID())},
	}
	done := make(chan error, 1)
	leaderelection.RunOrDie(ctx, leaderelection.LeaderElectionConfig{
		Lock:            lock,
		LeaseDuration:   15 * time.Second,
		RenewDeadline:   10 * time.Second,
		RetryPeriod:     2 * time.Second,
		ReleaseOnCancel: true,
		Name:            id,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(ctx context.Context) { done <- run(ctx) },
			OnStoppedLeading: func() {},
		},
	})
	select {
	case err := <-done:
		return err
	default:
	}
	if ctx.Err() != nil {
		return nil // stopped before it led
	}
	return fmt.Errorf("lost the Lease %s/%s", namespace, id)
}
