package controller

import (
	"os"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"

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

// DefaultMaxConcurrentReconciles is how many Redis objects the operator
// reconciles at once unless its options say otherwise
// (--max-concurrent-reconciles). One Redis is never reconciled twice at
// once: the workqueue hands a key to one worker at a time.
const DefaultMaxConcurrentReconciles = 4

// NewManager returns a manager that runs this reconciler, made with the
// operator's options (metrics, probes, leader election, the namespaces to
// watch) and some of its own: the cache holds only the operator's pods
// (podCache, chapter 8's), and DefaultMaxConcurrentReconciles workers
// reconcile Redis objects unless opts sets how many (chapter 9's). The others are what
// running in a cluster asks for (see inCluster). The operator's main calls
// it, and it is the only call it makes into this package.
func NewManager(cfg *rest.Config, opts ctrl.Options) (ctrl.Manager, error) {
	opts.Cache.ByObject = podCache()
	if opts.Controller.MaxConcurrentReconciles == 0 {
		opts.Controller.MaxConcurrentReconciles = DefaultMaxConcurrentReconciles
	}
	inCluster(&opts)
	mgr, err := ctrl.NewManager(cfg, opts)
	if err != nil {
		return nil, err
	}
	if err := NewRedisReconciler(mgr).SetupWithManager(mgr); err != nil {
		return nil, err
	}
	// `make run` sets ENABLE_WEBHOOKS=false, as kubebuilder's scaffold
	// does: on your machine there is no certificate, and no API server
	// would call the webhook there.
	if os.Getenv("ENABLE_WEBHOOKS") == "false" {
		return mgr, nil
	}
	if err := SetupWebhookWithManager(mgr); err != nil {
		return nil, err
	}
	// A replica is Ready once its webhook server listens, so that the
	// webhook's Service sends the API server only to replicas that answer.
	return mgr, mgr.AddReadyzCheck("webhook", mgr.GetWebhookServer().StartedChecker())
}

// Leader election keeps a Lease (get it, create it the first time, update
// it to renew or release it) and records an event on it when a replica
// becomes leader. Serving metrics behind authentication and authorization
// asks the API server who a caller is and what it may do. The Lease and
// its events are in the operator's namespace, redis-operator-system, where
// config/ deploys it: the markers that name it make a Role there, not a
// ClusterRole.
// +kubebuilder:rbac:groups=coordination.k8s.io,namespace=redis-operator-system,resources=leases,verbs=get;create;update
// +kubebuilder:rbac:groups="",namespace=redis-operator-system,resources=events,verbs=create;patch
// +kubebuilder:rbac:groups=authentication.k8s.io,resources=tokenreviews,verbs=create
// +kubebuilder:rbac:groups=authorization.k8s.io,resources=subjectaccessreviews,verbs=create

// inCluster sets what running as several replicas in a cluster needs:
//   - A leader that stops (SIGTERM, as for a rollout or a drained node)
//     releases its Lease on the way out, so that another replica takes over
//     within a retry period (2 s) instead of waiting for the Lease to expire
//     (15 s). This is safe only because the operator's main returns as soon
//     as the manager does: nothing reconciles after the release.
//   - Metrics are served over HTTPS, to callers whom the API server
//     authenticates (a TokenReview of their bearer token) and authorizes
//     (a SubjectAccessReview: may they get /metrics?). The certificate is
//     self-signed unless opts names a directory that holds one.
func inCluster(opts *ctrl.Options) {
	opts.LeaderElectionReleaseOnCancel = true
	opts.Metrics.SecureServing = true
	opts.Metrics.FilterProvider = filters.WithAuthenticationAndAuthorization
}

// podCache is the manager's cache option for pods: the cache holds only
// the pods that carry the operator's managed-by label, which are the pods
// it creates. Without it, the informer behind the pod watch lists and
// watches every pod in the cluster and keeps each one in memory, for the
// few that matter. A pod outside the cache is read from the API server
// where it matters (see ensurePod).
func podCache() map[client.Object]cache.ByObject {
	return map[client.Object]cache.ByObject{
		&corev1.Pod{}: {Label: labels.SelectorFromSet(labels.Set{LabelManagedBy: ManagedBy})},
	}
}

// SetupWithManager registers the reconciler with the manager, whose
// options say how many Redis objects are reconciled at once. It reconciles
// a Redis whenever the Redis changes (its own status writes included, see
// updateStatus), and whenever a pod it controls is created, deleted, or
// changes in a way its status shows. A pod's delete puts its Redis ahead
// of the others waiting (see rebuildFirst).
func (r *RedisReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&myappv1.Redis{}).
		Watches(&corev1.Pod{}, podHandler(mgr.GetScheme(), mgr.GetRESTMapper()), builder.WithPredicates(PodStatusChanged())).
		Named("redis").
		Complete(r)
}
