package controller

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"

	myappv1 "example.com/redis-operator/api/v1"
)

// NewRedisReconciler returns a reconciler that uses the manager's client,
// API reader, scheme and event recorder.
func NewRedisReconciler(mgr ctrl.Manager) *RedisReconciler {
	return &RedisReconciler{
		Client:    mgr.GetClient(),
		APIReader: mgr.GetAPIReader(),
		Scheme:    mgr.GetScheme(),
		Recorder:  mgr.GetEventRecorder("redis-controller"),
	}
}

// NewManager returns a manager that runs this reconciler, made with the
// operator's options (metrics, probes, leader election, the namespaces to
// watch). The operator's main calls it, and it is the only call it makes
// into this package: the manager's cache is made with the manager, so
// options the reconciler needs there belong here.
func NewManager(cfg *rest.Config, opts ctrl.Options) (ctrl.Manager, error) {
	mgr, err := ctrl.NewManager(cfg, opts)
	if err != nil {
		return nil, err
	}
	return mgr, NewRedisReconciler(mgr).SetupWithManager(mgr)
}

// SetupWithManager registers the reconciler with the manager: it reconciles
// a Redis whenever the Redis itself changes, and whenever a pod it controls
// is created, deleted, or changes in a way its status shows (Ready, phase,
// being deleted).
func (r *RedisReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&myappv1.Redis{}).
		Watches(&corev1.Pod{}, podHandler()).
		Named("redis").
		Complete(r)
}
