package controller

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	myappv1 "example.com/redis-operator/api/v1"
)

// Event reasons. They are part of the operator's interface: users filter
// `kubectl get events` by them, so they never change once published.
const (
	// ReasonSuccessfulCreate is a Normal event: a pod was created.
	ReasonSuccessfulCreate = "SuccessfulCreate"
	// ReasonFailedCreate is a Warning event: the API server refused a pod.
	ReasonFailedCreate = "FailedCreate"
	// ReasonSuccessfulDelete is a Normal event: a pod was deleted because its
	// Redis is being deleted.
	ReasonSuccessfulDelete = "SuccessfulDelete"
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

// RedisReconciler makes the pods of a Redis exist.
type RedisReconciler struct {
	client.Client
	Scheme   *runtime.Scheme
	Recorder events.EventRecorder
}

// +kubebuilder:rbac:groups=myapp.example.com,resources=redis,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconcile reads a Redis and creates whichever of its pods are missing, or,
// once the Redis is being deleted, deletes the pods it recorded. It is
// level-based: it never asks what happened, only what is.
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

// reconcileNormal creates the pods <name>-0 to <name>-(replicas-1) that are
// not recorded in the finalizers yet, then records them. A recorded pod is
// trusted to exist and never looked at again: that is the design this
// chapter teaches, and its flaw.
func (r *RedisReconciler) reconcileNormal(ctx context.Context, redis *myappv1.Redis) (ctrl.Result, error) {
	var created []string
	var errs []error
	for i := int32(0); i < redis.Spec.Replicas; i++ {
		name := PodName(redis, i)
		if controllerutil.ContainsFinalizer(redis, PodFinalizer(name)) {
			continue
		}
		// One pod that cannot be created does not hold up the others.
		if err := r.ensurePod(ctx, redis, name); err != nil {
			errs = append(errs, err)
			continue
		}
		created = append(created, name)
	}
	// Record what exists even when another pod failed, so the retry does
	// not lose track of it.
	if err := r.trackPods(ctx, redis, created); err != nil {
		errs = append(errs, err)
	}
	return ctrl.Result{}, errors.Join(errs...)
}

// trackPods records pods as finalizers on the Redis with one patch. The
// optimistic lock makes the patch fail on a stale Redis instead of
// overwriting finalizers someone else added meanwhile; the retry reads again.
func (r *RedisReconciler) trackPods(ctx context.Context, redis *myappv1.Redis, names []string) error {
	if len(names) == 0 {
		return nil
	}
	base := redis.DeepCopy()
	for _, name := range names {
		controllerutil.AddFinalizer(redis, PodFinalizer(name))
	}
	if err := r.Patch(ctx, redis, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("recording pods %v in finalizers: %w", names, err)
	}
	return nil
}

// reconcileDelete deletes every recorded pod, then removes the operator's
// finalizers so the API server can delete the Redis. A pod that is already
// gone counts as deleted: a Redis must never hang in Terminating because
// someone deleted a pod first.
func (r *RedisReconciler) reconcileDelete(ctx context.Context, redis *myappv1.Redis) (ctrl.Result, error) {
	log := ctrl.LoggerFrom(ctx)
	tracked := TrackedPods(redis)
	if len(tracked) == 0 {
		// Done already; what holds the Redis now is someone else's finalizer.
		return ctrl.Result{}, nil
	}
	for _, name := range tracked {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: redis.Namespace, Name: name}}
		log.Info("Deleting pod", "Pod", klog.KObj(pod))
		err := r.Delete(ctx, pod)
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return ctrl.Result{}, fmt.Errorf("deleting pod %s: %w", name, err)
		}
		r.Recorder.Eventf(redis, pod, corev1.EventTypeNormal, ReasonSuccessfulDelete, "DeletePod",
			"Deleted pod %s", name)
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

// ensurePod creates the named pod unless it exists. The name is
// deterministic, so the API server refuses a second pod of that name with
// AlreadyExists: when the cache has not yet seen a pod created a moment ago,
// a later reconcile cannot create it twice.
func (r *RedisReconciler) ensurePod(ctx context.Context, redis *myappv1.Redis, name string) error {
	log := ctrl.LoggerFrom(ctx)

	existing := &corev1.Pod{}
	err := r.Get(ctx, types.NamespacedName{Namespace: redis.Namespace, Name: name}, existing)
	if err == nil {
		return nil
	}
	if !apierrors.IsNotFound(err) {
		return fmt.Errorf("getting pod %s: %w", name, err)
	}

	pod := r.newPod(redis, name)
	log.Info("Creating pod", "Pod", klog.KObj(pod))
	if err := r.Create(ctx, pod); err != nil {
		if apierrors.IsAlreadyExists(err) {
			// Our cache was behind: someone created it a moment ago.
			return nil
		}
		if apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) {
			// The namespace is going, and the Redis with it: nothing to retry.
			return nil
		}
		r.Recorder.Eventf(redis, nil, corev1.EventTypeWarning, ReasonFailedCreate, "CreatePod",
			"Failed to create pod %s: %v", name, err)
		return fmt.Errorf("creating pod %s: %w", name, err)
	}
	r.Recorder.Eventf(redis, pod, corev1.EventTypeNormal, ReasonSuccessfulCreate, "CreatePod",
		"Created pod %s", name)
	return nil
}

// newPod builds the pod for one replica of a Redis.
func (r *RedisReconciler) newPod(redis *myappv1.Redis, name string) *corev1.Pod {
	image := redis.Spec.Image
	if image == "" {
		image = myappv1.DefaultImage
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: redis.Namespace,
			Name:      name,
			Labels: map[string]string{
				LabelName:      "redis",
				LabelInstance:  redis.Name,
				LabelManagedBy: "redis-operator",
			},
		},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{
				Name:  "redis",
				Image: image,
				Ports: []corev1.ContainerPort{{Name: "redis", ContainerPort: 6379}},
			}},
		},
	}
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
// scheme and event recorder.
func NewRedisReconciler(mgr ctrl.Manager) *RedisReconciler {
	return &RedisReconciler{
		Client:   mgr.GetClient(),
		Scheme:   mgr.GetScheme(),
		Recorder: mgr.GetEventRecorder("redis-controller"),
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
// a Redis whenever the Redis itself changes.
func (r *RedisReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&myappv1.Redis{}).
		Named("redis").
		Complete(r)
}
