package controller

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"

	myappv1 "example.com/redis-operator/api/v1"
)

// Controller is the Redis controller on client-go alone: two informers
// (pods, Redis objects), their listers, a rate-limited workqueue of Redis
// keys, and workers that take keys off it.
type Controller struct {
	kube    kubernetes.Interface
	dynamic dynamic.Interface

	pods        corelisters.PodLister
	redis       cache.GenericLister
	podsSynced  cache.InformerSynced
	redisSynced cache.InformerSynced

	queue    workqueue.TypedRateLimitingInterface[cache.ObjectName]
	waiting  *rebuildFirst // the queue's keys waiting for a worker
	workers  int
	recorder events.EventRecorder

	start func(ctx context.Context)
}

// redisResource is the Redis objects' resource, for the dynamic client.
var redisResource = myappv1.GroupVersion.WithResource("redis")

// NewInformer makes a shared informer, as cache.NewSharedIndexInformer
// does; it is the signature of controller-runtime's cache.Options.NewInformer.
type NewInformer func(cache.ListerWatcher, runtime.Object, time.Duration, cache.Indexers) cache.SharedIndexInformer

// NewController makes the controller's clients, informers and queue, and
// registers its event handlers. namespace limits it to one namespace
// ("" for all); newInformer makes the pod informer (nil:
// cache.NewSharedIndexInformer).
func NewController(kube kubernetes.Interface, dyn dynamic.Interface, namespace string, workers int, newInformer NewInformer) *Controller {
	if newInformer == nil {
		newInformer = cache.NewSharedIndexInformer
	}
	// The operator's own pods only, as chapter 8's cache: the reflector
	// lists and watches them with this label selector. The wrapper tells
	// the reflector whether the client streams a watch's first list
	// (client-go's fakes do not), as the generated informers' does.
	selector := labels.SelectorFromSet(labels.Set{LabelManagedBy: ManagedBy}).String()
	podInformer := newInformer(cache.ToListWatcherWithWatchListSemantics(&cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			o.LabelSelector = selector
			return kube.CoreV1().Pods(namespace).List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.LabelSelector = selector
			return kube.CoreV1().Pods(namespace).Watch(ctx, o)
		},
	}, kube), &corev1.Pod{}, 0, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	redisFactory := dynamicinformer.NewFilteredDynamicSharedInformerFactory(dyn, 0, namespace, nil)
	redisInformer := redisFactory.ForResource(redisResource)

	// The workqueue, its rate limiter and its delays as
	// NewTypedRateLimitingQueueWithConfig makes them, with the keys
	// waiting for a worker kept in rebuildFirst, not in one FIFO.
	waiting := newRebuildFirst()
	queue := workqueue.NewTypedRateLimitingQueueWithConfig(
		workqueue.DefaultTypedControllerRateLimiter[cache.ObjectName](),
		workqueue.TypedRateLimitingQueueConfig[cache.ObjectName]{
			Name: "redis",
			DelayingQueue: workqueue.NewTypedDelayingQueueWithConfig(workqueue.TypedDelayingQueueConfig[cache.ObjectName]{
				Name:  "redis",
				Queue: workqueue.NewTypedWithConfig(workqueue.TypedQueueConfig[cache.ObjectName]{Name: "redis", Queue: waiting}),
			}),
		})

	c := &Controller{
		kube:        kube,
		dynamic:     dyn,
		pods:        corelisters.NewPodLister(podInformer.GetIndexer()),
		redis:       redisInformer.Lister(),
		podsSynced:  podInformer.HasSynced,
		redisSynced: redisInformer.Informer().HasSynced,
		queue:       queue,
		waiting:     waiting,
		workers:     workers,
	}
	broadcaster := events.NewBroadcaster(&events.EventSinkImpl{Interface: kube.EventsV1()})
	c.recorder = broadcaster.NewRecorder(eventScheme, "redis-controller")
	c.start = func(ctx context.Context) {
		go podInformer.RunWithContext(ctx)
		redisFactory.Start(ctx.Done())
		_ = broadcaster.StartRecordingToSinkWithContext(ctx)
	}

	// The handlers only enqueue: the work is the workers'.
	_, _ = redisInformer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.enqueueRedis,
		UpdateFunc: func(_, obj any) { c.enqueueRedis(obj) },
		DeleteFunc: c.enqueueRedis,
	})
	_, _ = podInformer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: c.enqueueOwner,
		UpdateFunc: func(oldObj, newObj any) {
			oldPod, ok1 := oldObj.(*corev1.Pod)
			newPod, ok2 := newObj.(*corev1.Pod)
			if ok1 && ok2 && podChanged(oldPod, newPod) {
				c.enqueueOwner(newObj)
			}
		},
		// A pod that is gone: its Redis goes ahead of the others.
		DeleteFunc: c.enqueueOwnerFirst,
	})
	return c
}

// enqueueRedis adds a Redis' key to the queue. A deleted object may come
// as a DeletedFinalStateUnknown tombstone, whose key is the object's.
func (c *Controller) enqueueRedis(obj any) {
	key, err := cache.DeletionHandlingObjectToName(obj)
	if err != nil {
		utilruntime.HandleError(err)
		return
	}
	c.queue.Add(key)
}

// enqueueOwner adds the key of the Redis that controls a pod, if one does.
func (c *Controller) enqueueOwner(obj any) {
	if key, ok := ownerKey(obj); ok {
		c.queue.Add(key)
	}
}

// enqueueOwnerFirst adds the key of the Redis that controls a deleted pod
// ahead of the keys of Redis objects whose pods are all there.
func (c *Controller) enqueueOwnerFirst(obj any) {
	if key, ok := ownerKey(obj); ok {
		c.waiting.urge(key)
		c.queue.Add(key)
	}
}

// ownerKey is the key of the Redis that controls a pod, if one does.
func ownerKey(obj any) (cache.ObjectName, bool) {
	if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tombstone.Obj
	}
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return cache.ObjectName{}, false
	}
	ref := metav1.GetControllerOf(pod)
	if ref == nil || ref.Kind != "Redis" {
		return cache.ObjectName{}, false
	}
	if gv, err := schema.ParseGroupVersion(ref.APIVersion); err != nil || gv.Group != myappv1.GroupVersion.Group {
		return cache.ObjectName{}, false
	}
	return cache.ObjectName{Namespace: pod.Namespace, Name: ref.Name}, true
}

// Run waits for the caches, then runs the workers until ctx ends, and
// shuts the queue down.
func (c *Controller) Run(ctx context.Context) error {
	defer utilruntime.HandleCrash()
	defer c.queue.ShutDown()
	log := ctrl.LoggerFrom(ctx)

	c.start(ctx)
	log.Info("Waiting for the informers' caches to sync")
	if !cache.WaitForCacheSync(ctx.Done(), c.podsSynced, c.redisSynced) {
		return errors.New("the informers' caches did not sync")
	}
	log.Info("Starting workers", "count", c.workers)
	for range c.workers {
		go wait.UntilWithContext(ctx, c.runWorker, time.Second)
	}
	<-ctx.Done()
	return nil
}

func (c *Controller) runWorker(ctx context.Context) {
	for c.processNextWorkItem(ctx) {
	}
}

// processNextWorkItem takes one key off the queue and reconciles it. The
// queue hands a key to one worker at a time; Done lets it go to another.
// Forget clears its failures after a success; AddRateLimited queues it
// again after a failure, later each time.
func (c *Controller) processNextWorkItem(ctx context.Context) bool {
	key, shutdown := c.queue.Get()
	if shutdown {
		return false
	}
	defer c.queue.Done(key)
	if err := c.reconcileLogged(ctx, key); err != nil {
		c.queue.AddRateLimited(key)
		return true
	}
	c.queue.Forget(key)
	return true
}

// reconcileLogged reconciles key between the log lines that
// controller-runtime writes around a reconcile, and counts it in the
// metric it keeps: the course's suites read both, whatever the chapter.
func (c *Controller) reconcileLogged(ctx context.Context, key cache.ObjectName) error {
	log := ctrl.LoggerFrom(ctx).WithValues("controller", "redis", "namespace", key.Namespace, "name", key.Name,
		"reconcileID", uuid.NewUUID())
	ctx = ctrl.LoggerInto(ctx, log)
	log.V(5).Info("Reconciling")
	err := c.reconcile(ctx, key)
	reconcileTotal.WithLabelValues("redis", resultLabel(err)).Inc()
	if err != nil {
		log.Error(err, "Reconciler error")
		return err
	}
	log.V(5).Info("Reconcile successful")
	return nil
}

func resultLabel(err error) string {
	if err != nil {
		return "error"
	}
	return "success"
}

// redisFor reads a Redis from the lister and converts it from the dynamic
// informer's unstructured form.
func (c *Controller) redisFor(key cache.ObjectName) (*myappv1.Redis, error) {
	obj, err := c.redis.ByNamespace(key.Namespace).Get(key.Name)
	if err != nil {
		return nil, err
	}
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return nil, fmt.Errorf("redis %s: unexpected %T in the cache", key, obj)
	}
	redis := &myappv1.Redis{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, redis); err != nil {
		return nil, fmt.Errorf("redis %s: %w", key, err)
	}
	return redis, nil
}

// eventScheme knows the Redis type, for the events' references to it.
var eventScheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(myappv1.AddToScheme(s))
	return s
}()
