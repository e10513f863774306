package controller

import (
	"context"
	"errors"
	"fmt"
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
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	myappv1 "example.com/redis-operator/api/v1"
)

// Event reasons. They are part of the operator's interface: users filter
// `kubectl get events` by them, so they never change once published.
const (
	// ReasonSuccessfulCreate is a Normal event: a pod was created.
	ReasonSuccessfulCreate = "SuccessfulCreate"
	// ReasonSuccessfulRebuild is a Normal event: a recorded pod was missing
	// (deleted by someone else, or by the operator because it ended) and
	// was created again.
	ReasonSuccessfulRebuild = "SuccessfulRebuild"
	// ReasonFailedCreate is a Warning event: the API server refused a pod.
	ReasonFailedCreate = "FailedCreate"
	// ReasonSuccessfulDelete is a Normal event: a pod was deleted, because
	// its Redis is being deleted, was scaled down, or the pod ended.
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

// FinalizerPrefix starts every finalizer this operator puts on a Redis: one
// per pod, "myapp.example.com/<pod name>". Finalizers must be qualified
// names; an unqualified one makes the API server warn on every write.
const FinalizerPrefix = myappv1.GroupName + "/"

// Labels put on every pod, so that `kubectl get pods -l` finds a Redis' pods.
const (
	// LabelName is the well-known label for the application's name.
	LabelName = "app.kubernetes.io/name"
	// LabelInstance names the Redis a pod belongs to.
	LabelInstance = "app.kubernetes.io/instance"
	// LabelManagedBy names the operator, so people know who creates these pods.
	LabelManagedBy = "app.kubernetes.io/managed-by"
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

// +kubebuilder:rbac:groups=myapp.example.com,resources=redis,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=myapp.example.com,resources=redis/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=myapp.example.com,resources=redis/finalizers,verbs=update
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconcile reads a Redis and makes its pods match the spec: it creates the
// missing ones, deletes those above spec.replicas and replaces those that
// ended, then writes what it saw into the status; or, once the Redis is
// being deleted, it deletes the pods it recorded. It is level-based: it
// never asks what happened, only what is.
func (r *RedisReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	redis := &myappv1.Redis{}
	if err := r.Get(ctx, req.NamespacedName, redis); err != nil {
		// Not found means the Redis is gone and there is nothing left to do;
		// any other error is returned so the request is retried with backoff.
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !redis.DeletionTimestamp.IsZero() {
		return r.reconcileDelete(ctx, redis)
	}
	return r.reconcileNormal(ctx, redis)
}

// reconcileNormal makes the pods <name>-0 to <name>-(replicas-1) exist,
// asking the cluster rather than the finalizers, deletes the pods and
// forgets the records above spec.replicas (the highest first), deletes
// pods that ended so that they are created again, and updates the
// tracking and the status.
func (r *RedisReconciler) reconcileNormal(ctx context.Context, redis *myappv1.Redis) (ctrl.Result, error) {
	pods, err := r.ownPods(ctx, redis)
	if err != nil {
		return ctrl.Result{}, err
	}
	var errs []error

	var forget []string
	for _, name := range excessPods(redis, pods) {
		if err := r.deletePod(ctx, redis, name, fmt.Sprintf("scaled down to %d", redis.Spec.Replicas)); err != nil {
			errs = append(errs, err)
			continue
		}
		forget = append(forget, name)
	}

	for _, pod := range pods {
		if ordinal(redis, pod.Name) < redis.Spec.Replicas && podEnded(&pod) && pod.DeletionTimestamp.IsZero() {
			// Its delete event brings us back to create it again, as the
			// StatefulSet controller replaces a failed pod.
			if err := r.deletePod(ctx, redis, pod.Name, fmt.Sprintf("it ended (phase %s)", pod.Status.Phase)); err != nil {
				errs = append(errs, err)
			}
		}
	}

	var created []string
	for i := int32(0); i < redis.Spec.Replicas; i++ {
		name := PodName(redis, i)
		// One pod that cannot be created does not hold up the others.
		there, err := r.ensurePod(ctx, redis, name)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if there && !controllerutil.ContainsFinalizer(redis, PodFinalizer(name)) {
			created = append(created, name)
		}
	}
	// Record what exists even when another pod failed, so the retry does
	// not lose track of it.
	if err := r.trackPods(ctx, redis, created, forget); err != nil {
		errs = append(errs, err)
	}
	if err := r.updateStatus(ctx, redis, pods); err != nil {
		errs = append(errs, err)
	}
	return ctrl.Result{}, errors.Join(errs...)
}

// ownPods lists, from the cache, the pods this Redis controls.
func (r *RedisReconciler) ownPods(ctx context.Context, redis *myappv1.Redis) ([]corev1.Pod, error) {
	list := &corev1.PodList{}
	if err := r.List(ctx, list, client.InNamespace(redis.Namespace), client.MatchingLabels(selectorLabels(redis))); err != nil {
		return nil, fmt.Errorf("listing the pods of Redis %s: %w", redis.Name, err)
	}
	pods := slices.DeleteFunc(list.Items, func(p corev1.Pod) bool { return !metav1.IsControlledBy(&p, redis) })
	return pods, nil
}

// excessPods returns the names above spec.replicas, of pods that exist or
// are recorded, highest ordinal first: a scale-down removes the newest
// pods first, as a StatefulSet's does.
func excessPods(redis *myappv1.Redis, pods []corev1.Pod) []string {
	names := map[string]bool{}
	for _, p := range pods {
		names[p.Name] = true
	}
	for _, name := range TrackedPods(redis) {
		names[name] = true
	}
	var excess []string
	for name := range names {
		if ordinal(redis, name) >= redis.Spec.Replicas {
			excess = append(excess, name)
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

// updateStatus writes what pods (as the cache showed them at the start of
// the reconcile) say into the Redis' status, only when that changes it: a
// Redis whose pods do not change causes no write. The pods this reconcile
// created or deleted show up in the status when their events bring the
// Redis back.
func (r *RedisReconciler) updateStatus(ctx context.Context, redis *myappv1.Redis, pods []corev1.Pod) error {
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
	status := redis.Status.DeepCopy()
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
		meta.SetStatusCondition(&status.Conditions, c)
	}

	if equality.Semantic.DeepEqual(status, &redis.Status) {
		return nil
	}
	base := redis.DeepCopy()
	redis.Status = *status
	if err := r.Status().Patch(ctx, redis, client.MergeFrom(base)); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("updating the status: %w", err)
	}
	return nil
}

// trackPods records the pods in add as finalizers on the Redis and
// forgets those in remove, with one patch. The optimistic lock makes the
// patch fail on a stale Redis instead of overwriting finalizers someone
// else changed meanwhile; the retry reads again.
func (r *RedisReconciler) trackPods(ctx context.Context, redis *myappv1.Redis, add, remove []string) error {
	if len(add) == 0 && len(remove) == 0 {
		return nil
	}
	base := redis.DeepCopy()
	for _, name := range add {
		controllerutil.AddFinalizer(redis, PodFinalizer(name))
	}
	for _, name := range remove {
		controllerutil.RemoveFinalizer(redis, PodFinalizer(name))
	}
	if err := r.Patch(ctx, redis, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("recording pods %v and forgetting %v in finalizers: %w", add, remove, err)
	}
	return nil
}

// reconcileDelete deletes every recorded pod that the Redis controls, then
// removes the operator's finalizers so the API server can delete the Redis.
// A pod that is already gone counts as deleted: a Redis must never hang in
// Terminating because someone deleted a pod first.
func (r *RedisReconciler) reconcileDelete(ctx context.Context, redis *myappv1.Redis) (ctrl.Result, error) {
	log := ctrl.LoggerFrom(ctx)
	tracked := TrackedPods(redis)
	if len(tracked) == 0 {
		// Done already; what holds the Redis now is someone else's finalizer.
		return ctrl.Result{}, nil
	}
	for _, name := range tracked {
		if err := r.deletePod(ctx, redis, name, "its Redis is being deleted"); err != nil {
			return ctrl.Result{}, err
		}
	}

	// Build the list that is kept instead of removing entries while ranging
	// over the slice being shortened, which skips every other entry.
	base := redis.DeepCopy()
	redis.Finalizers = slices.DeleteFunc(slices.Clone(redis.Finalizers), isPodFinalizer)
	log.Info("Removing pod finalizers")
	if err := r.Patch(ctx, redis, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	return ctrl.Result{}, nil
}

// deletePod deletes the named pod if the Redis controls it; why says why,
// in the event. It returns nil once the pod is gone or going, so that the
// caller may forget it: a pod the cache has not seen yet (created a moment
// ago) is looked up on the API server before it counts as gone. A pod that
// took a recorded name after ours was deleted is someone else's: it is
// left alone, with a Warning event. The UID precondition makes the API
// server refuse the delete if the pod was replaced after it was read; the
// retry reads again.
func (r *RedisReconciler) deletePod(ctx context.Context, redis *myappv1.Redis, name, why string) error {
	log := ctrl.LoggerFrom(ctx)
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
	log.Info("Deleting pod", "Pod", klog.KObj(pod), "why", why)
	if err := r.Delete(ctx, pod, client.Preconditions{UID: &pod.UID}); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("deleting pod %s: %w", name, err)
	}
	r.Recorder.Eventf(redis, pod, corev1.EventTypeNormal, ReasonSuccessfulDelete, "DeletePod",
		"Deleted pod %s: %s", name, why)
	return nil
}

// ensurePod creates the named pod unless it exists, and reports whether a
// pod of that name that the Redis controls is there and not going away,
// which is when it may be recorded. (A pod still terminating after a
// scale-down is not: recorded, its replacement would be called a rebuild.)
// The name is deterministic, so the API server refuses a second pod of
// that name with AlreadyExists: when the cache has not yet seen a pod
// created a moment ago, a later reconcile cannot create it twice.
func (r *RedisReconciler) ensurePod(ctx context.Context, redis *myappv1.Redis, name string) (bool, error) {
	log := ctrl.LoggerFrom(ctx)

	existing := &corev1.Pod{}
	err := r.Get(ctx, types.NamespacedName{Namespace: redis.Namespace, Name: name}, existing)
	if err == nil {
		if !metav1.IsControlledBy(existing, redis) {
			// Never adopt what we do not control: it may be someone else's.
			r.Recorder.Eventf(redis, existing, corev1.EventTypeWarning, ReasonErrResourceExists, "CreatePod",
				"Pod %s already exists and is not controlled by this Redis", name)
			return false, fmt.Errorf("pod %s exists and is not controlled by Redis %s", name, redis.Name)
		}
		if !existing.DeletionTimestamp.IsZero() {
			// It is terminating; its delete event brings us back to create it.
			log.V(1).Info("Waiting for pod to terminate before creating it again", "Pod", klog.KObj(existing))
			return false, nil
		}
		return true, nil
	}
	if !apierrors.IsNotFound(err) {
		return false, fmt.Errorf("getting pod %s: %w", name, err)
	}

	pod, err := r.newPod(redis, name)
	if err != nil {
		return false, err
	}
	log.Info("Creating pod", "Pod", klog.KObj(pod))
	if err := r.Create(ctx, pod); err != nil {
		if apierrors.IsAlreadyExists(err) {
			// Our cache was behind: it had not seen a pod that exists. Ask
			// the API server whose pod it is.
			return r.checkExistingPod(ctx, redis, name)
		}
		if apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) {
			// The namespace is going, and the Redis with it: nothing to
			// retry, and nothing to record.
			return false, nil
		}
		r.Recorder.Eventf(redis, nil, corev1.EventTypeWarning, ReasonFailedCreate, "CreatePod",
			"Failed to create pod %s: %v", name, err)
		return false, fmt.Errorf("creating pod %s: %w", name, err)
	}
	// A recorded pod that had to be created was deleted behind our back.
	// Said only once the create succeeded: a create that finds the pod
	// there (the cache was behind) rebuilt nothing.
	reason, verb := ReasonSuccessfulCreate, "Created"
	if controllerutil.ContainsFinalizer(redis, PodFinalizer(name)) {
		reason, verb = ReasonSuccessfulRebuild, "Rebuilt"
	}
	r.Recorder.Eventf(redis, pod, corev1.EventTypeNormal, reason, "CreatePod",
		"%s pod %s", verb, name)
	return true, nil
}

// checkExistingPod reads the named pod from the API server, bypassing the
// cache, after a create found it already there. Usually it is the pod this
// Redis created a moment ago, which the cache has not seen yet: nothing to
// do, and nothing worth an error. A pod someone else controls gets the same
// Warning as when the cache shows it.
func (r *RedisReconciler) checkExistingPod(ctx context.Context, redis *myappv1.Redis, name string) (bool, error) {
	existing := &corev1.Pod{}
	if err := r.APIReader.Get(ctx, types.NamespacedName{Namespace: redis.Namespace, Name: name}, existing); err != nil {
		// Gone again already: the retry creates it.
		return false, fmt.Errorf("reading pod %s after AlreadyExists: %w", name, err)
	}
	if !metav1.IsControlledBy(existing, redis) {
		r.Recorder.Eventf(redis, existing, corev1.EventTypeWarning, ReasonErrResourceExists, "CreatePod",
			"Pod %s already exists and is not controlled by this Redis", name)
		return false, fmt.Errorf("pod %s exists and is not controlled by Redis %s", name, redis.Name)
	}
	ctrl.LoggerFrom(ctx).V(1).Info("Pod exists already; the cache was behind", "Pod", klog.KObj(existing))
	return existing.DeletionTimestamp.IsZero(), nil
}

// newPod builds the pod for one replica of a Redis, with a controller owner
// reference to the Redis: the garbage collector deletes the pod when the
// Redis is gone, and `kubectl get pod -o yaml` shows who manages it.
func (r *RedisReconciler) newPod(redis *myappv1.Redis, name string) (*corev1.Pod, error) {
	image := redis.Spec.Image
	if image == "" {
		image = myappv1.DefaultImage
	}
	podLabels := selectorLabels(redis)
	podLabels[LabelManagedBy] = "redis-operator"
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: redis.Namespace,
			Name:      name,
			Labels:    podLabels,
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

// selectorLabels are the labels that select a Redis' pods (its status'
// selector, for the scale subresource).
func selectorLabels(redis *myappv1.Redis) map[string]string {
	return map[string]string{LabelName: "redis", LabelInstance: redis.Name}
}

// PodFinalizer is the finalizer that records the named pod.
func PodFinalizer(podName string) string {
	return FinalizerPrefix + podName
}

// TrackedPods returns the names of the pods recorded in a Redis' finalizers.
func TrackedPods(redis *myappv1.Redis) []string {
	var names []string
	for _, f := range redis.Finalizers {
		if isPodFinalizer(f) {
			names = append(names, strings.TrimPrefix(f, FinalizerPrefix))
		}
	}
	return names
}

func isPodFinalizer(finalizer string) bool {
	return strings.HasPrefix(finalizer, FinalizerPrefix)
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

// podHandler returns the pod event handler that SetupWithManager
// registers. The unit tests call it too, so that they test the handler the
// controller runs, not a copy of it.
func podHandler() handler.EventHandler {
	return handler.Funcs{
		CreateFunc: func(_ context.Context, e event.TypedCreateEvent[client.Object], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			enqueueOwner(e.Object, q)
		},
		UpdateFunc: enqueueOwnerOnPodChange,
		DeleteFunc: enqueueOwningRedis,
	}
}

// enqueueOwningRedis is the pod delete handler. Like every handler it only
// enqueues a request; deciding what to do is Reconcile's job.
func enqueueOwningRedis(_ context.Context, e event.TypedDeleteEvent[client.Object],
	q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	enqueueOwner(e.Object, q)
}

// enqueueOwnerOnPodChange is the pod update handler. Most pod updates
// (a kubelet's heartbeat of conditions, an annotation) change nothing the
// Redis reports; only readiness, the phase, or the start of a deletion do.
func enqueueOwnerOnPodChange(_ context.Context, e event.TypedUpdateEvent[client.Object],
	q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	oldPod, ok1 := e.ObjectOld.(*corev1.Pod)
	newPod, ok2 := e.ObjectNew.(*corev1.Pod)
	if !ok1 || !ok2 {
		return
	}
	if podReady(oldPod) != podReady(newPod) || oldPod.Status.Phase != newPod.Status.Phase ||
		oldPod.DeletionTimestamp.IsZero() != newPod.DeletionTimestamp.IsZero() {
		enqueueOwner(newPod, q)
	}
}

func enqueueOwner(obj client.Object, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	if req, ok := OwningRedis(obj); ok {
		q.Add(req)
	}
}

// OwningRedis returns the request for the Redis that controls obj. Owners of
// another kind, or of a kind named Redis in another API group, are not ours.
func OwningRedis(obj client.Object) (reconcile.Request, bool) {
	owner := metav1.GetControllerOf(obj)
	if owner == nil || owner.Kind != "Redis" {
		return reconcile.Request{}, false
	}
	gv, err := schema.ParseGroupVersion(owner.APIVersion)
	if err != nil || gv.Group != myappv1.GroupVersion.Group {
		return reconcile.Request{}, false
	}
	return reconcile.Request{NamespacedName: types.NamespacedName{Namespace: obj.GetNamespace(), Name: owner.Name}}, true
}
