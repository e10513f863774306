package controller

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	myappv1 "example.com/redis-operator/api/v1"
)

// Event reasons. They are part of the operator's interface: users filter
// `kubectl get events` by them, so they never change once published.
const (
	// ReasonSuccessfulCreate is a Normal event: a pod was created, for the
	// first time or again (the operator keeps no record that would tell).
	ReasonSuccessfulCreate = "SuccessfulCreate"
	// ReasonFailedCreate is a Warning event: the API server refused a pod.
	ReasonFailedCreate = "FailedCreate"
	// ReasonSuccessfulDelete is a Normal event: a pod was deleted, because
	// its Redis was scaled down or the pod ended.
	ReasonSuccessfulDelete = "SuccessfulDelete"
	// ReasonErrResourceExists is a Warning event: a pod with the name the
	// Redis needs exists but is not controlled by it, so it is left alone.
	ReasonErrResourceExists = "ErrResourceExists"
)

// Condition types of a Redis' status, and their reasons. Like event
// reasons, they are an interface: people and tools wait on them.
const (
	// ConditionAvailable is True when every desired pod exists and is Ready.
	ConditionAvailable = "Available"
	// ConditionProgressing is True while pods are being created, deleted or
	// waited for.
	ConditionProgressing = "Progressing"

	// ReasonAllPodsReady: Available, every desired pod is Ready.
	ReasonAllPodsReady = "AllPodsReady"
	// ReasonPodsNotReady: not Available, some desired pods are missing or not Ready.
	ReasonPodsNotReady = "PodsNotReady"
	// ReasonCreatingPods: Progressing, fewer pods exist than desired.
	ReasonCreatingPods = "CreatingPods"
	// ReasonDeletingPods: Progressing, more pods exist than desired.
	ReasonDeletingPods = "DeletingPods"
	// ReasonWaitingForReadiness: Progressing, the pods exist, some are not Ready yet.
	ReasonWaitingForReadiness = "WaitingForReadiness"
	// ReasonComplete: not Progressing, the pods match the spec.
	ReasonComplete = "Complete"
)

// Labels put on every pod, so that `kubectl get pods -l` finds a Redis' pods.
const (
	// LabelName is the well-known label for the application's name.
	LabelName = "app.kubernetes.io/name"
	// LabelInstance names the Redis a pod belongs to.
	LabelInstance = "app.kubernetes.io/instance"
	// LabelManagedBy names the operator, so people know who creates these
	// pods; the operator's cache holds only the pods that carry it.
	LabelManagedBy = "app.kubernetes.io/managed-by"
	// ManagedBy is LabelManagedBy's value.
	ManagedBy = "redis-operator"
)

// RedisReconciler makes the pods of a Redis match its spec and reports
// what it sees in the Redis' status.
type RedisReconciler struct {
	client.Client
	// APIReader reads from the API server, not the cache. It is used only
	// when the cache is known to be behind.
	APIReader client.Reader
	Scheme    *runtime.Scheme
	Recorder  events.EventRecorder
}

// The finalizers subresource is not for finalizers of the Redis' own: with
// the OwnerReferencesPermissionEnforcement admission plugin (on in the
// course's clusters, as in hardened ones), the API server requires update
// on it to set blockOwnerDeletion in a pod's owner reference to a Redis.
// Patching pods restores the labels of a pod that lost them (see
// restoreLabels).
// +kubebuilder:rbac:groups=myapp.example.com,resources=redis,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=myapp.example.com,resources=redis/status,verbs=patch
// +kubebuilder:rbac:groups=myapp.example.com,resources=redis/finalizers,verbs=update
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconcile reads a Redis and makes its pods match the spec: it creates the
// missing ones, deletes those above spec.replicas and replaces those that
// ended, then writes what it saw into the status. It keeps no record of
// the pods: what it needs to know, it reads from them. Deleting a Redis
// needs nothing from it: the garbage collector deletes the pods that the
// Redis owns.
func (r *RedisReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	redis := &myappv1.Redis{}
	if err := r.Get(ctx, req.NamespacedName, redis); err != nil {
		// Not found means the Redis is gone and there is nothing left to do;
		// any other error is returned so the request is retried with backoff.
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if err := r.removeLegacyFinalizers(ctx, redis); err != nil {
		return ctrl.Result{}, err
	}
	if !redis.DeletionTimestamp.IsZero() {
		// The garbage collector deletes the pods once the Redis is gone; a
		// pod created now would only be deleted with them.
		return ctrl.Result{}, nil
	}

	pods, err := r.ownPods(ctx, redis)
	if err != nil {
		return ctrl.Result{}, err
	}
	var errs []error
	for _, name := range excessPods(redis, pods) {
		errs = append(errs, r.deletePod(ctx, redis, name, fmt.Sprintf("scaled down to %d", redis.Spec.Replicas)))
	}
	for _, pod := range pods {
		if ordinal(redis, pod.Name) < redis.Spec.Replicas && podEnded(&pod) && pod.DeletionTimestamp.IsZero() {
			// Its delete event brings us back to create it again, as the
			// StatefulSet controller replaces a failed pod.
			errs = append(errs, r.deletePod(ctx, redis, pod.Name, fmt.Sprintf("it ended (phase %s)", pod.Status.Phase)))
		}
	}
	for i := range redis.Spec.Replicas {
		err := r.ensurePod(ctx, redis, PodName(redis, i))
		if errors.Is(err, errNamespaceTerminating) {
			// The namespace is going, and the Redis with it: the API
			// server would refuse every other pod too, and there is
			// nothing to retry.
			return ctrl.Result{}, errors.Join(errs...)
		}
		// One pod that cannot be created does not hold up the others.
		errs = append(errs, err)
	}
	errs = append(errs, r.updateStatus(ctx, redis, computeStatus(redis, pods, metav1.Now())))
	return ctrl.Result{}, errors.Join(errs...)
}

// ownPods lists, from the cache, the pods this Redis controls.
func (r *RedisReconciler) ownPods(ctx context.Context, redis *myappv1.Redis) ([]corev1.Pod, error) {
	list := &corev1.PodList{}
	if err := r.List(ctx, list, client.InNamespace(redis.Namespace), client.MatchingLabels(selectorLabels(redis))); err != nil {
		return nil, fmt.Errorf("listing the pods of Redis %s: %w", redis.Name, err)
	}
	return slices.DeleteFunc(list.Items, func(p corev1.Pod) bool { return !metav1.IsControlledBy(&p, redis) }), nil
}

// excessPods returns the names of the pods above spec.replicas, highest
// ordinal first: a scale-down removes the newest pods first, as a
// StatefulSet's does. A pod created a moment ago that the cache has not
// seen yet is not among them; its create event brings the Redis back.
func excessPods(redis *myappv1.Redis, pods []corev1.Pod) []string {
	var excess []string
	for _, p := range pods {
		if ordinal(redis, p.Name) >= redis.Spec.Replicas {
			excess = append(excess, p.Name)
		}
	}
	slices.SortFunc(excess, func(a, b string) int { return int(ordinal(redis, b) - ordinal(redis, a)) })
	return excess
}

// ordinal is the index in a pod name <redis>-<index>, or -1 for a name
// of another form.
func ordinal(redis *myappv1.Redis, podName string) int32 {
	suffix, ok := strings.CutPrefix(podName, redis.Name+"-")
	if !ok {
		return -1
	}
	i, err := strconv.ParseInt(suffix, 10, 32)
	if err != nil || strconv.FormatInt(i, 10) != suffix {
		return -1
	}
	return int32(i)
}

// podEnded reports whether all of a pod's containers have stopped for good:
// an evicted pod, for example, is Failed and never runs again.
func podEnded(pod *corev1.Pod) bool {
	return pod.Status.Phase == corev1.PodFailed || pod.Status.Phase == corev1.PodSucceeded
}

// podReady reports whether a pod's Ready condition is True.
func podReady(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// computeStatus is the status that pods (as the cache showed them at the
// start of the reconcile) give the Redis. It reads nothing else and writes
// nothing; now is the transition time of a condition that changes.
func computeStatus(redis *myappv1.Redis, pods []corev1.Pod, now metav1.Time) myappv1.RedisStatus {
	desired := redis.Spec.Replicas
	// ready counts all Ready pods, for status.readyReplicas; readyDesired
	// only those below spec.replicas, which are the ones Available is about
	// (a pod a scale-down is about to delete does not make up for one that
	// is not Ready).
	var existing, ready, readyDesired int32
	for _, p := range pods {
		if !p.DeletionTimestamp.IsZero() {
			continue
		}
		existing++
		if podReady(&p) {
			ready++
			if ordinal(redis, p.Name) < desired {
				readyDesired++
			}
		}
	}
	status := *redis.Status.DeepCopy()
	status.Replicas = existing
	status.ReadyReplicas = ready
	status.ObservedGeneration = redis.Generation
	status.Selector = labels.SelectorFromSet(selectorLabels(redis)).String()

	available := metav1.Condition{Type: ConditionAvailable, Status: metav1.ConditionTrue, Reason: ReasonAllPodsReady,
		Message: fmt.Sprintf("All %d pods are ready", desired)}
	if readyDesired < desired {
		available.Status, available.Reason = metav1.ConditionFalse, ReasonPodsNotReady
		available.Message = fmt.Sprintf("%d of %d pods are ready; `kubectl describe redis %s` shows the events", readyDesired, desired, redis.Name)
	}
	progressing := metav1.Condition{Type: ConditionProgressing, Status: metav1.ConditionTrue}
	switch {
	case existing < desired:
		progressing.Reason = ReasonCreatingPods
		progressing.Message = fmt.Sprintf("%d of %d pods exist", existing, desired)
	case existing > desired:
		progressing.Reason = ReasonDeletingPods
		progressing.Message = fmt.Sprintf("%d pods exist, %d desired", existing, desired)
	case readyDesired < desired:
		progressing.Reason = ReasonWaitingForReadiness
		progressing.Message = fmt.Sprintf("%d of %d pods are ready", readyDesired, desired)
	default:
		progressing.Status, progressing.Reason = metav1.ConditionFalse, ReasonComplete
		progressing.Message = fmt.Sprintf("All %d pods exist and are ready", desired)
	}
	for _, c := range []metav1.Condition{available, progressing} {
		c.ObservedGeneration = redis.Generation
		c.LastTransitionTime = now
		meta.SetStatusCondition(&status.Conditions, c)
	}
	return status
}

// updateStatus patches the Redis' status to status, only when that
// changes it: a Redis whose pods do not change causes no write. The
// patch comes back as an update event of the Redis, and so as one more
// reconcile, which computes the same status and writes nothing. That
// reconcile is also what corrects a status computed from a Redis that the
// cache showed from before the last write.
func (r *RedisReconciler) updateStatus(ctx context.Context, redis *myappv1.Redis, status myappv1.RedisStatus) error {
	if equality.Semantic.DeepEqual(status, redis.Status) {
		return nil
	}
	base := redis.DeepCopy()
	redis.Status = status
	if err := r.Status().Patch(ctx, redis, client.MergeFrom(base)); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("updating the status: %w", err)
	}
	return nil
}

// deletePod deletes the named pod if the Redis controls it; why says why,
// in the event. It returns nil once the pod is gone or going. A pod that
// took the name after ours was deleted is someone else's: it is left
// alone, with a Warning event. The UID precondition makes the API server
// refuse the delete if the pod was replaced after it was read; the retry
// reads again.
func (r *RedisReconciler) deletePod(ctx context.Context, redis *myappv1.Redis, name, why string) error {
	key := types.NamespacedName{Namespace: redis.Namespace, Name: name}
	pod := &corev1.Pod{}
	err := r.Get(ctx, key, pod)
	if apierrors.IsNotFound(err) {
		err = r.APIReader.Get(ctx, key, pod)
	}
	if err != nil {
		return client.IgnoreNotFound(err)
	}
	if !metav1.IsControlledBy(pod, redis) {
		r.Recorder.Eventf(redis, pod, corev1.EventTypeWarning, ReasonErrResourceExists, "DeletePod",
			"Pod %s is not controlled by this Redis; it is left alone", name)
		return nil
	}
	if !pod.DeletionTimestamp.IsZero() {
		return nil
	}
	ctrl.LoggerFrom(ctx).Info("Deleting pod", "Pod", klog.KObj(pod), "why", why)
	if err := r.Delete(ctx, pod, client.Preconditions{UID: &pod.UID}); err != nil {
		return client.IgnoreNotFound(err)
	}
	r.Recorder.Eventf(redis, pod, corev1.EventTypeNormal, ReasonSuccessfulDelete, "DeletePod",
		"Deleted pod %s: %s", name, why)
	return nil
}

// errNamespaceTerminating is what ensurePod returns when the API server
// refused the pod because its namespace is being deleted.
var errNamespaceTerminating = errors.New("the namespace is being deleted")

// ensurePod creates the named pod unless it exists. The name is
// deterministic, so the API server refuses a second pod of that name with
// AlreadyExists: when the cache has not yet seen a pod created a moment
// ago, or does not hold a pod because it lacks the managed-by label, a
// reconcile cannot create it twice.
func (r *RedisReconciler) ensurePod(ctx context.Context, redis *myappv1.Redis, name string) error {
	log := ctrl.LoggerFrom(ctx)
	existing := &corev1.Pod{}
	err := r.Get(ctx, types.NamespacedName{Namespace: redis.Namespace, Name: name}, existing)
	if err == nil {
		return r.checkExistingPod(ctx, redis, existing)
	}
	if !apierrors.IsNotFound(err) {
		return fmt.Errorf("getting pod %s: %w", name, err)
	}

	pod, err := r.newPod(redis, name)
	if err != nil {
		return err
	}
	log.Info("Creating pod", "Pod", klog.KObj(pod))
	if err := r.Create(ctx, pod); err != nil {
		if apierrors.IsAlreadyExists(err) {
			// Our cache was behind: it had not seen a pod that exists. Ask
			// the API server whose pod it is.
			if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(pod), existing); err != nil {
				// Gone again already: the retry creates it.
				return fmt.Errorf("reading pod %s after AlreadyExists: %w", name, err)
			}
			return r.checkExistingPod(ctx, redis, existing)
		}
		if apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) {
			log.V(1).Info("Not creating pod: its namespace is being deleted", "Pod", klog.KObj(pod))
			return errNamespaceTerminating
		}
		r.Recorder.Eventf(redis, nil, corev1.EventTypeWarning, ReasonFailedCreate, "CreatePod",
			"Failed to create pod %s: %v", name, err)
		return fmt.Errorf("creating pod %s: %w", name, err)
	}
	r.Recorder.Eventf(redis, pod, corev1.EventTypeNormal, ReasonSuccessfulCreate, "CreatePod", "Created pod %s", name)
	return nil
}

// checkExistingPod looks at a pod that has the name the Redis needs. Never
// adopt what we do not control: it may be someone else's. A pod of ours
// that is terminating is created again when its delete event brings the
// Redis back; one that lost its labels gets them back.
func (r *RedisReconciler) checkExistingPod(ctx context.Context, redis *myappv1.Redis, pod *corev1.Pod) error {
	if !metav1.IsControlledBy(pod, redis) {
		r.Recorder.Eventf(redis, pod, corev1.EventTypeWarning, ReasonErrResourceExists, "CreatePod",
			"Pod %s already exists and is not controlled by this Redis", pod.Name)
		return fmt.Errorf("pod %s exists and is not controlled by Redis %s", pod.Name, redis.Name)
	}
	if !pod.DeletionTimestamp.IsZero() {
		ctrl.LoggerFrom(ctx).V(1).Info("Waiting for pod to terminate before creating it again", "Pod", klog.KObj(pod))
		return nil
	}
	if !labelsInclude(pod.Labels, podLabels(redis)) {
		return r.restoreLabels(ctx, redis, pod)
	}
	return nil
}

// restoreLabels puts back the labels of a pod the Redis controls that
// someone removed or changed. Without them the pod is out of the status and
// out of reach of a scale-down: the status counts the pods that match the
// selector, and the cache holds only those with the managed-by label.
func (r *RedisReconciler) restoreLabels(ctx context.Context, redis *myappv1.Redis, pod *corev1.Pod) error {
	ctrl.LoggerFrom(ctx).Info("Restoring the labels of pod", "Pod", klog.KObj(pod))
	patch := client.MergeFrom(pod.DeepCopy())
	if pod.Labels == nil {
		pod.Labels = map[string]string{}
	}
	maps.Copy(pod.Labels, podLabels(redis))
	if err := r.Patch(ctx, pod, patch); err != nil {
		return fmt.Errorf("restoring the labels of pod %s: %w", pod.Name, err)
	}
	return nil
}

// labelsInclude reports whether have holds every label of want.
func labelsInclude(have, want map[string]string) bool {
	for k, v := range want {
		if have[k] != v {
			return false
		}
	}
	return true
}

// newPod builds the pod for one replica of a Redis, with a controller owner
// reference to the Redis: the garbage collector deletes the pod when the
// Redis is gone, and `kubectl get pod -o yaml` shows who manages it.
func (r *RedisReconciler) newPod(redis *myappv1.Redis, name string) (*corev1.Pod, error) {
	image := redis.Spec.Image
	if image == "" {
		image = myappv1.DefaultImage
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: redis.Namespace,
			Name:      name,
			Labels:    podLabels(redis),
		},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{
				Name:  "redis",
				Image: image,
				Ports: []corev1.ContainerPort{{Name: "redis", ContainerPort: 6379}},
			}},
		},
	}
	if err := controllerutil.SetControllerReference(redis, pod, r.Scheme); err != nil {
		return nil, fmt.Errorf("setting the owner of pod %s: %w", name, err)
	}
	return pod, nil
}

// podLabels are the labels of a Redis' pods: the selector's, and the
// managed-by label that the cache selects.
func podLabels(redis *myappv1.Redis) map[string]string {
	l := selectorLabels(redis)
	l[LabelManagedBy] = ManagedBy
	return l
}

// selectorLabels are the labels that select a Redis' pods (its status'
// selector, for the scale subresource).
func selectorLabels(redis *myappv1.Redis) map[string]string {
	return map[string]string{LabelName: "redis", LabelInstance: redis.Name}
}

// PodName is the name of the pod with the given index: <redis>-<index>.
func PodName(redis *myappv1.Redis, index int32) string {
	return redis.Name + "-" + strconv.Itoa(int(index))
}

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
// watch) and some of its own. Two are chapter 8's: the cache holds only the
// operator's pods (podCache), and DefaultMaxConcurrentReconciles workers
// reconcile Redis objects unless opts sets how many. The others are what
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

// podHandler enqueues the Redis that controls a pod, as Owns does, and
// puts it ahead of the others when the pod was deleted.
func podHandler(scheme *runtime.Scheme, mapper meta.RESTMapper) handler.EventHandler {
	return rebuildFirst(handler.EnqueueRequestForOwner(scheme, mapper, &myappv1.Redis{}, handler.OnlyControllerOwner()))
}

// RebuildPriority is the priority in the workqueue of a Redis whose pod
// was deleted. controller-runtime's queue hands out the highest priority
// first, and in the order of arrival within one priority. A new Redis, a
// pod's create or update, a spec change have priority 0; the objects of
// the cache's first list and its resyncs have handler.LowPriority.
const RebuildPriority = 10

// rebuildFirst passes the events of pods to h, the delete events with
// RebuildPriority: a pod that is gone is a Redis short of a replica, which
// should not wait behind a thousand new Redis objects to get it back.
// Without a priority queue (controller.Options.UsePriorityQueue set to
// false), it changes nothing.
func rebuildFirst(h handler.EventHandler) handler.EventHandler {
	return handler.Funcs{
		CreateFunc:  h.Create,
		UpdateFunc:  h.Update,
		GenericFunc: h.Generic,
		DeleteFunc: func(ctx context.Context, e event.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			if pq, ok := q.(priorityqueue.PriorityQueue[reconcile.Request]); ok {
				q = withPriority{pq, RebuildPriority}
			}
			h.Delete(ctx, e, q)
		},
	}
}

// withPriority is a priority queue whose Add adds with the given priority.
type withPriority struct {
	priorityqueue.PriorityQueue[reconcile.Request]
	priority int
}

func (q withPriority) Add(item reconcile.Request) {
	q.AddWithOpts(priorityqueue.AddOpts{Priority: &q.priority}, item)
}

// PodStatusChanged passes a pod's create and delete events, and its update
// events when its readiness, its phase, whether it is being deleted, or
// its labels changed (a pod whose labels were edited drops out of the
// Redis' status, or out of the cache). Most pod updates (the kubelet's
// condition timestamps, an annotation) change nothing that the Redis
// reports or acts on.
//
// An update that starts a deletion without a grace period
// (`--grace-period=0 --force`) is dropped too: see goneAtOnce.
func PodStatusChanged() predicate.Predicate {
	return predicate.Funcs{
		UpdateFunc: func(e event.UpdateEvent) bool {
			oldPod, ok1 := e.ObjectOld.(*corev1.Pod)
			newPod, ok2 := e.ObjectNew.(*corev1.Pod)
			if !ok1 || !ok2 || goneAtOnce(newPod) {
				return false
			}
			return podReady(oldPod) != podReady(newPod) || oldPod.Status.Phase != newPod.Status.Phase ||
				oldPod.DeletionTimestamp.IsZero() != newPod.DeletionTimestamp.IsZero() ||
				!maps.Equal(oldPod.Labels, newPod.Labels)
		},
	}
}

// goneAtOnce reports whether a pod is deleted in the very request that
// set its deletion timestamp: no grace period and no finalizer. The API
// server sends an update event with the timestamp, then the delete event
// right after it. The delete event alone brings the Redis back, first in
// the queue; the update would bring it back at priority 0 and, by the
// reconcile it asks for, hold up the create that the delete asks for (the
// workqueue hands a Redis to one worker at a time).
func goneAtOnce(pod *corev1.Pod) bool {
	return !pod.DeletionTimestamp.IsZero() && pod.DeletionGracePeriodSeconds != nil &&
		*pod.DeletionGracePeriodSeconds == 0 && len(pod.Finalizers) == 0
}
