// Package trace follows pod events through the layers of an operator's
// informer, from the API server's watch to the event handlers, and the
// operator's pod creates, writing one log line per stage (`bin/operator
// --trace-pods`). Chapter 15's suite reads the lines to follow one
// `kubectl delete pod` from the watch to the pod created again.
//
// It stands in the hooks that controller-runtime's cache offers
// (cache.Options.NewInformer, through which the cache makes every
// informer) and the REST config's transport wrapper; chapter 15's
// client-go controller makes its pod informer through the same hook. The
// stages, in the order client-go goes through them:
//
//   - StageWatch: the reflector's watch delivered the event (the
//     ListerWatcher's watch, wrapped).
//   - StageQueued: the reflector put the object into the informer's FIFO
//     (the informer's transform, which the FIFO calls as it queues). The
//     FIFO is the RealFIFO, which keeps every event in order: it took the
//     place of the DeltaFIFO of the older diagrams in Kubernetes 1.33
//     (client-go's InOrderInformers, locked on since 1.36).
//   - StageIndexed: the informer took the object off the FIFO and applied
//     it to its indexer (an index function, which the indexer calls with
//     each object it stores or removes).
//   - StageHandler: an event handler was called (it enqueues), and
//     StageHandled: it returned.
//   - StageCreate: the operator sent a create of a pod.
package trace

import (
	"context"
	"maps"
	"net/http"
	"regexp"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
)

// Message is the message of every trace line; its "stage" value says which.
const Message = "Trace"

// The stages, as the lines' "stage" values name them.
const (
	StageWatch   = "watch"
	StageQueued  = "queued"
	StageIndexed = "indexed"
	StageHandler = "handler"
	StageHandled = "handled"
	StageCreate  = "create"
)

// Tracer writes the trace lines to its logger.
type Tracer struct {
	log logr.Logger
}

// New returns a Tracer that writes to log.
func New(log logr.Logger) *Tracer { return &Tracer{log: log} }

// line writes one stage of a pod's way.
func (t *Tracer) line(stage string, pod *corev1.Pod, kv ...any) {
	kv = append([]any{"stage", stage, "namespace", pod.Namespace, "name", pod.Name,
		"uid", string(pod.UID), "resourceVersion", pod.ResourceVersion}, kv...)
	t.log.Info(Message, kv...)
}

// podOf returns the pod in an informer's object, or nil.
func podOf(obj any) *corev1.Pod {
	if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tombstone.Obj
	}
	pod, _ := obj.(*corev1.Pod)
	return pod
}

// NewInformer has the signature of cache.Options.NewInformer. It makes the
// informer that cache.NewSharedIndexInformer makes; for pods, its watch,
// transform, indexer and handlers write the trace lines.
func (t *Tracer) NewInformer(lw cache.ListerWatcher, obj runtime.Object, resync time.Duration, indexers cache.Indexers) cache.SharedIndexInformer {
	if _, ok := obj.(*corev1.Pod); !ok {
		return cache.NewSharedIndexInformer(lw, obj, resync, indexers)
	}
	indexers = maps.Clone(indexers)
	if indexers == nil {
		indexers = cache.Indexers{}
	}
	indexers["trace"] = t.index
	inner := cache.NewSharedIndexInformer(t.listerWatcher(lw), obj, resync, indexers)
	inf := &informer{SharedIndexInformer: inner, t: t}
	_ = inf.SetTransform(nil) // the stage "queued", until the owner sets its own transform
	return inf
}

// listerWatcher wraps lw's watch: each event is traced as the reflector
// receives it.
func (t *Tracer) listerWatcher(lw cache.ListerWatcher) cache.ListerWatcher {
	inner := cache.ToListerWatcherWithContext(lw)
	traced := &cache.ListWatch{
		ListWithContextFunc: inner.ListWithContext,
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			w, err := inner.WatchWithContext(ctx, opts)
			if err != nil {
				return nil, err
			}
			return watch.Filter(w, func(ev watch.Event) (watch.Event, bool) {
				if pod := podOf(ev.Object); pod != nil {
					t.line(StageWatch, pod, "event", string(ev.Type))
				}
				return ev, true
			}), nil
		},
	}
	if u, ok := lw.(watchListUnsupported); ok {
		return &tracedWatchList{traced, u.IsWatchListSemanticsUnSupported()}
	}
	return traced
}

// watchListUnsupported is a ListerWatcher that says whether its client
// streams a watch's first list (cache.ToListWatcherWithWatchListSemantics):
// the traced one says the same.
type watchListUnsupported interface {
	IsWatchListSemanticsUnSupported() bool
}

type tracedWatchList struct {
	*cache.ListWatch
	unsupported bool
}

func (lw *tracedWatchList) IsWatchListSemanticsUnSupported() bool { return lw.unsupported }

// index is an index function that indexes nothing: the indexer calls it
// with every pod it stores, and with the stored pod it removes.
func (t *Tracer) index(obj any) ([]string, error) {
	if pod := podOf(obj); pod != nil {
		t.line(StageIndexed, pod)
	}
	return nil, nil
}

// informer is a shared informer whose transform and handlers are traced.
type informer struct {
	cache.SharedIndexInformer
	t *Tracer
}

// SetTransform sets f, traced: the FIFO calls it on each object it
// queues.
func (i *informer) SetTransform(f cache.TransformFunc) error {
	return i.SharedIndexInformer.SetTransform(func(obj any) (any, error) {
		if pod := podOf(obj); pod != nil {
			i.t.line(StageQueued, pod)
		}
		if f == nil {
			return obj, nil
		}
		return f(obj)
	})
}

func (i *informer) AddEventHandler(h cache.ResourceEventHandler) (cache.ResourceEventHandlerRegistration, error) {
	return i.SharedIndexInformer.AddEventHandler(handler{h, i.t})
}

func (i *informer) AddEventHandlerWithResyncPeriod(h cache.ResourceEventHandler, resync time.Duration) (cache.ResourceEventHandlerRegistration, error) {
	return i.SharedIndexInformer.AddEventHandlerWithResyncPeriod(handler{h, i.t}, resync)
}

func (i *informer) AddEventHandlerWithOptions(h cache.ResourceEventHandler, opts cache.HandlerOptions) (cache.ResourceEventHandlerRegistration, error) {
	return i.SharedIndexInformer.AddEventHandlerWithOptions(handler{h, i.t}, opts)
}

// handler traces the calls of the handler it wraps.
type handler struct {
	inner cache.ResourceEventHandler
	t     *Tracer
}

func (h handler) traced(event string, obj any, call func()) {
	pod := podOf(obj)
	if pod == nil {
		call()
		return
	}
	h.t.line(StageHandler, pod, "event", event)
	call()
	h.t.line(StageHandled, pod, "event", event)
}

func (h handler) OnAdd(obj any, isInInitialList bool) {
	h.traced("add", obj, func() { h.inner.OnAdd(obj, isInInitialList) })
}

func (h handler) OnUpdate(oldObj, newObj any) {
	h.traced("update", newObj, func() { h.inner.OnUpdate(oldObj, newObj) })
}

func (h handler) OnDelete(obj any) {
	h.traced("delete", obj, func() { h.inner.OnDelete(obj) })
}

// createPath is the path of a create of a pod: POST to a namespace's pods.
var createPath = regexp.MustCompile(`^/api/v1/namespaces/([^/]+)/pods$`)

// WrapTransport has the signature of rest.Config's WrapTransport: it
// traces each create of a pod as the operator sends it.
func (t *Tracer) WrapTransport(rt http.RoundTripper) http.RoundTripper {
	return roundTripper{rt, t}
}

type roundTripper struct {
	inner http.RoundTripper
	t     *Tracer
}

func (r roundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	if m := createPath.FindStringSubmatch(req.URL.Path); req.Method == http.MethodPost && m != nil {
		// The logger of the reconcile that sends the create, with its
		// reconcileID, when the request's context has one.
		log := r.t.log
		if l, err := logr.FromContext(req.Context()); err == nil {
			log = l
		}
		log.Info(Message, "stage", StageCreate, "namespace", m[1])
	}
	return r.inner.RoundTrip(req)
}
