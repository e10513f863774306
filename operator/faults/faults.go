// Package faults makes the operator misbehave on purpose, in the ways
// that find the bugs of a controller (Sieve, OSDI '22; Acto, SOSP '23): a
// crash between two writes, a write the API server refuses, a cache that
// is behind. Environment variables ask for each fault; the end-to-end
// suites of chapters 12 and 13 set them, and so can you (see their
// READMEs).
//
// It is never in the operator that ships: only a build with the tag
// faults (make build-faults: bin/operator-faults, which the suites run on
// the host) has operator/faults.go, the one file that imports this
// package. bin/operator and the image are built without it and carry
// none of this code; `strings` finds none of these variables in them.
//
// This package is also the protocol between that build and the tests: the
// variables' names, the exit status of a crash and the log lines of the
// writes (WritesIn reads them) are defined here, once.
package faults

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/manager"
)

// The environment variables that ask for faults. They share Prefix, so
// that a misspelt one is refused rather than ignored.
const (
	Prefix = "REDIS_OPERATOR_FAULT_"
	// EnvCrashAfterWrite is a number N: the operator logs each write it
	// makes (a create, update, patch, apply or delete, of an object or of its
	// status) with its number, and exits with CrashExitCode right after
	// the N-th, whatever the API server answered. 0 logs and never exits:
	// that is how a run counts its writes. It can name the write instead
	// of numbering it, as the log does: "delete Pod cache-4#1" is the
	// first delete of a pod cache-4 (in any namespace), "patch status
	// Redis cache#3" the third patch of that Redis' status. A name stays
	// with its write when other writes come and go: how many status
	// patches a run makes depends on how events fall together.
	EnvCrashAfterWrite = Prefix + "CRASH_AFTER_WRITE"
	// EnvCrashBeforeWrite names a write in the same way: the operator
	// exits right before it is sent. That is right after the write before
	// it, whichever that was in this run.
	EnvCrashBeforeWrite = Prefix + "CRASH_BEFORE_WRITE"
	// EnvConflictOnce, set to true, answers each write with 409 Conflict,
	// as a write that lost a race would be, the first time it is made: it
	// is not sent. The same write made again (the same verb, object and,
	// for a patch, the same patch) goes through. A reconciler that drops
	// the error of a write, instead of returning it to be retried, is left
	// with that write never made. The error says ConflictInjected.
	EnvConflictOnce = Prefix + "CONFLICT_ONCE"
	// EnvStalePods, set to true, lets two signals hold the pod watch:
	// after SIGUSR1 the cache keeps the pods as they were and no pod event
	// arrives (the log says WatchHeld); after SIGUSR2 the events held
	// come through, in order, as they would from an informer that catches
	// up.
	EnvStalePods = Prefix + "STALE_PODS"

	// CrashExitCode is the status the operator exits with when it crashes
	// on purpose.
	CrashExitCode = 3
)

// The log lines of the faults: the logger's name and the messages that
// WritesIn and the suites look for.
const (
	LoggerName       = "faults"
	WriteMessage     = "Write"
	CrashBefore      = "Crashing before write"
	CrashAfter       = "Crashing after write"
	WatchHeld        = "Pod watch held"
	WatchReleased    = "Pod watch released"
	ConflictInjected = "injected by " + EnvConflictOnce
)

// known are the variables this package reads.
var known = []string{EnvCrashAfterWrite, EnvCrashBeforeWrite, EnvConflictOnce, EnvStalePods}

// Inject reads the faults that the environment asks for and sets the
// manager's options for them: a client whose writes go through the write
// faults, pod informers behind a gate. It returns what to add to the
// manager once it is made (nil: nothing). With no fault asked for it
// changes nothing. It refuses to run in a pod: faults are for an operator
// that a test runs on its machine, never for one that a cluster runs.
func Inject(opts *ctrl.Options) (func(ctrl.Manager) error, error) {
	f, err := faultsFromEnv()
	if err != nil || !f.any() {
		return nil, err
	}
	if host := os.Getenv("KUBERNETES_SERVICE_HOST"); host != "" {
		return nil, fmt.Errorf("%s* asks for faults, but this process runs in a pod (KUBERNETES_SERVICE_HOST=%s): faults are for the test build of the operator on your machine, never in a cluster", Prefix, host)
	}
	gate := f.apply(opts)
	if gate == nil {
		return nil, nil
	}
	return func(mgr ctrl.Manager) error { return mgr.Add(holdOnSignals(gate)) }, nil
}

// faults are the faults the environment asks for.
type faults struct {
	crashAfter int // -1: none
	// crashAt names the write to crash at ("" none), right before it if
	// crashBefore.
	crashAt      string
	crashBefore  bool
	conflictOnce bool
	stalePods    bool
}

// writeName checks the name of a write, as the log gives it: a verb, with
// its subresource if any, a kind, an object's name and, after #, which of
// the writes of that name it is, from 1.
func writeName(env, v string) (string, error) {
	fields := strings.Fields(v)
	if len(fields) == 3 || len(fields) == 4 {
		name, k, _ := strings.Cut(fields[len(fields)-1], "#")
		if n, err := strconv.Atoi(k); name != "" && err == nil && n >= 1 {
			return strings.Join(fields, " "), nil
		}
	}
	return "", fmt.Errorf(`%s must name a write as the log does, such as "delete Pod cache-4#1", got %q`, env, v)
}

// faultsFromEnv reads the faults from the environment; an invalid value is
// an error, never a fault silently left out.
func faultsFromEnv() (faults, error) {
	f := faults{crashAfter: -1}
	for _, kv := range os.Environ() {
		if name, _, _ := strings.Cut(kv, "="); strings.HasPrefix(name, Prefix) && !slices.Contains(known, name) {
			return f, fmt.Errorf("%s is no fault this operator knows: the faults are %s", name, strings.Join(known, ", "))
		}
	}
	number := func(name string, min int) (int, error) {
		n, err := strconv.Atoi(os.Getenv(name))
		if err != nil || n < min {
			return 0, fmt.Errorf("%s must be a whole number from %d, got %q", name, min, os.Getenv(name))
		}
		return n, nil
	}
	var err error
	after, before := os.Getenv(EnvCrashAfterWrite), os.Getenv(EnvCrashBeforeWrite)
	switch {
	case after != "" && before != "":
		return f, fmt.Errorf("%s and %s ask for two crashes: set one", EnvCrashAfterWrite, EnvCrashBeforeWrite)
	case before != "":
		f.crashBefore = true
		if f.crashAt, err = writeName(EnvCrashBeforeWrite, before); err != nil {
			return f, err
		}
	case strings.ContainsAny(after, "# "):
		if f.crashAt, err = writeName(EnvCrashAfterWrite, after); err != nil {
			return f, err
		}
	case after != "":
		if f.crashAfter, err = number(EnvCrashAfterWrite, 0); err != nil {
			return f, err
		}
	}
	for name, b := range map[string]*bool{EnvConflictOnce: &f.conflictOnce, EnvStalePods: &f.stalePods} {
		if v := os.Getenv(name); v != "" {
			if *b, err = strconv.ParseBool(v); err != nil {
				return f, fmt.Errorf("%s must be true or false, got %q", name, v)
			}
		}
	}
	return f, nil
}

func (f faults) writes() bool { return f.crashAfter >= 0 || f.crashAt != "" || f.conflictOnce }

func (f faults) any() bool { return f.writes() || f.stalePods }

// apply sets the manager's options for the faults: a client whose writes
// go through a writeFaults, and pod informers behind a watchGate. It
// returns the gate (nil without EnvStalePods).
func (f faults) apply(opts *ctrl.Options) *watchGate {
	log := ctrl.Log.WithName(LoggerName)
	if f.writes() {
		w := &writeFaults{faults: f, exit: os.Exit}
		opts.NewClient = func(cfg *rest.Config, o client.Options) (client.Client, error) {
			c, err := client.NewWithWatch(cfg, o)
			if err != nil {
				return nil, err
			}
			return interceptor.NewClient(c, w.funcs()), nil
		}
		log.Info("Fault injection on: writes", "crashAfterWrite", f.crashAfter, "crashAt", f.crashAt, "crashBefore", f.crashBefore, "conflictOnce", f.conflictOnce)
	}
	if !f.stalePods {
		return nil
	}
	gate := newWatchGate()
	opts.Cache.NewInformer = func(lw toolscache.ListerWatcher, obj runtime.Object, resync time.Duration, indexers toolscache.Indexers) toolscache.SharedIndexInformer {
		if _, ok := obj.(*corev1.Pod); ok {
			lw = &gatedListWatch{ListerWatcherWithContext: toolscache.ToListerWatcherWithContext(lw), gate: gate}
		}
		return toolscache.NewSharedIndexInformer(lw, obj, resync, indexers)
	}
	// The pid, so that a user signals this process and no other.
	log.Info("Fault injection on: SIGUSR1 holds the pod watch, SIGUSR2 lets it go on", "pid", os.Getpid())
	return gate
}

// holdOnSignals is a runnable that holds the gate's watches on SIGUSR1 and
// lets them go on SIGUSR2. The signals are caught from now on, so that one
// sent before the manager starts does not end the process.
func holdOnSignals(gate *watchGate) manager.RunnableFunc {
	signals := make(chan os.Signal, 2)
	signal.Notify(signals, syscall.SIGUSR1, syscall.SIGUSR2)
	return func(ctx context.Context) error {
		log := ctrl.Log.WithName(LoggerName)
		defer signal.Stop(signals)
		for {
			select {
			case <-ctx.Done():
				return nil
			case s := <-signals:
				if s == syscall.SIGUSR1 {
					gate.hold()
					log.Info(WatchHeld + ": the cache keeps the pods as they are now")
				} else {
					gate.release()
					log.Info(WatchReleased + ": the events held come through")
				}
			}
		}
	}
}

// writeFaults counts the writes of a client and injects the faults into
// them.
type writeFaults struct {
	faults
	mu sync.Mutex
	n  int
	// named counts the writes of each verb, kind and name.
	named map[string]int
	// made holds the writes made once, for conflictOnce.
	made map[string]bool
	// exit ends the process; a test replaces it.
	exit func(int)
}

// write numbers and names one write; exits if it is the one to crash
// before; refuses it or sends it with send, logs it and, if it is the one
// to crash after, exits. For conflictOnce, a patch is the same write as
// another only if it patches the same way.
func (w *writeFaults) write(c client.Client, verb string, obj client.Object, patch client.Patch, send func() error) error {
	w.mu.Lock()
	defer w.mu.Unlock() // one write at a time: the numbers are the order the API server saw
	w.n++
	kind, resource := "unknown", schema.GroupResource{}
	if gvk, err := c.GroupVersionKindFor(obj); err == nil {
		kind, resource = gvk.Kind, schema.GroupResource{Group: gvk.Group, Resource: strings.ToLower(gvk.Kind) + "s"}
		if m, err := c.RESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version); err == nil {
			resource = m.Resource.GroupResource()
		}
	}
	if w.named == nil {
		w.named = map[string]int{}
	}
	name := verb + " " + kind + " " + obj.GetName()
	w.named[name]++
	name = fmt.Sprintf("%s#%d", name, w.named[name])
	log := ctrl.Log.WithName(LoggerName).WithValues("n", w.n, "write", name, "verb", verb, "kind", kind, "object", obj.GetNamespace()+"/"+obj.GetName())
	if w.crashBefore && name == w.crashAt {
		log.Info(CrashBefore + ", as " + EnvCrashBeforeWrite + " asks")
		w.exit(CrashExitCode)
		return errors.New("crashed before the write") // only a test's exit returns
	}
	key := verb + " " + kind + " " + obj.GetNamespace() + "/" + obj.GetName()
	if patch != nil {
		data, err := patch.Data(obj)
		if err != nil {
			return err
		}
		key += " " + string(data)
	}
	var err error
	if w.conflictOnce && !w.made[key] {
		if w.made == nil {
			w.made = map[string]bool{}
		}
		w.made[key] = true
		err = apierrors.NewConflict(resource, obj.GetName(), errors.New(ConflictInjected))
	} else {
		err = send()
	}
	if err != nil {
		log = log.WithValues("error", err.Error())
	}
	log.Info(WriteMessage)
	if w.n == w.crashAfter || (!w.crashBefore && name == w.crashAt) {
		log.Info(CrashAfter + ", as " + EnvCrashAfterWrite + " asks")
		w.exit(CrashExitCode)
	}
	return err
}

// funcs are the interceptor's functions: every write, of an object or of
// a subresource (status), goes through write; reads do not (a unit test
// checks every field of interceptor.Funcs).
func (w *writeFaults) funcs() interceptor.Funcs {
	return interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			return w.write(c, "create", obj, nil, func() error { return c.Create(ctx, obj, opts...) })
		},
		Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			return w.write(c, "update", obj, nil, func() error { return c.Update(ctx, obj, opts...) })
		},
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			return w.write(c, "patch", obj, patch, func() error { return c.Patch(ctx, obj, patch, opts...) })
		},
		Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
			return w.write(c, "delete", obj, nil, func() error { return c.Delete(ctx, obj, opts...) })
		},
		DeleteAllOf: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteAllOfOption) error {
			return w.write(c, "deletecollection", obj, nil, func() error { return c.DeleteAllOf(ctx, obj, opts...) })
		},
		Apply: func(ctx context.Context, c client.WithWatch, obj runtime.ApplyConfiguration, opts ...client.ApplyOption) error {
			u, patch, err := applied(obj)
			if err != nil {
				return err
			}
			return w.write(c, "apply", u, patch, func() error { return c.Apply(ctx, obj, opts...) })
		},
		SubResourceCreate: func(ctx context.Context, c client.Client, sub string, obj, subObj client.Object, opts ...client.SubResourceCreateOption) error {
			return w.write(c, "create "+sub, obj, nil, func() error { return c.SubResource(sub).Create(ctx, obj, subObj, opts...) })
		},
		SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
			return w.write(c, "update "+sub, obj, nil, func() error { return c.SubResource(sub).Update(ctx, obj, opts...) })
		},
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			return w.write(c, "patch "+sub, obj, patch, func() error { return c.SubResource(sub).Patch(ctx, obj, patch, opts...) })
		},
		SubResourceApply: func(ctx context.Context, c client.Client, sub string, obj runtime.ApplyConfiguration, opts ...client.SubResourceApplyOption) error {
			u, patch, err := applied(obj)
			if err != nil {
				return err
			}
			return w.write(c, "apply "+sub, u, patch, func() error { return c.SubResource(sub).Apply(ctx, obj, opts...) })
		},
	}
}

// applied is what write needs of a server-side apply: its configuration
// as an object, for its kind and name, and as a patch, for its data.
func applied(obj runtime.ApplyConfiguration) (*unstructured.Unstructured, client.Patch, error) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, nil, err
	}
	data, err := json.Marshal(m)
	if err != nil {
		return nil, nil, err
	}
	return &unstructured.Unstructured{Object: m}, client.RawPatch(types.ApplyPatchType, data), nil
}

// watchGate holds watches: while it is held, the events of every watch
// behind it wait, in order, until it is released.
type watchGate struct {
	mu sync.Mutex
	// open is closed while the gate lets events through.
	open chan struct{}
}

func newWatchGate() *watchGate {
	open := make(chan struct{})
	close(open)
	return &watchGate{open: open}
}

func (g *watchGate) opened() <-chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.open
}

func (g *watchGate) hold() {
	g.mu.Lock()
	defer g.mu.Unlock()
	select {
	case <-g.open:
		g.open = make(chan struct{})
	default: // held already
	}
}

func (g *watchGate) release() {
	g.mu.Lock()
	defer g.mu.Unlock()
	select {
	case <-g.open: // open already
	default:
		close(g.open)
	}
}

// gatedListWatch is an informer's list and watch whose watch events pass
// through a gate. The list is not held: an informer lists when it starts,
// before any hold, or when it cannot resume its watch.
type gatedListWatch struct {
	toolscache.ListerWatcherWithContext
	gate *watchGate
}

// List and Watch make it a ListerWatcher, which an informer is made of.
func (l *gatedListWatch) List(opts metav1.ListOptions) (runtime.Object, error) {
	return l.ListWithContext(context.Background(), opts)
}

func (l *gatedListWatch) Watch(opts metav1.ListOptions) (watch.Interface, error) {
	return l.WatchWithContext(context.Background(), opts)
}

func (l *gatedListWatch) WatchWithContext(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	w, err := l.ListerWatcherWithContext.WatchWithContext(ctx, opts)
	if err != nil {
		return nil, err
	}
	return l.gate.through(w), nil
}

// through returns a watch whose events are w's, each one passed on only
// while the gate is open.
func (g *watchGate) through(w watch.Interface) watch.Interface {
	gw := &gatedWatch{Interface: w, out: make(chan watch.Event), stop: make(chan struct{})}
	go func() {
		defer close(gw.out)
		for e := range w.ResultChan() {
			select {
			case <-g.opened():
			case <-gw.stop:
				return
			}
			select {
			case gw.out <- e:
			case <-gw.stop:
				return
			}
		}
	}()
	return gw
}

type gatedWatch struct {
	watch.Interface
	out      chan watch.Event
	stop     chan struct{}
	stopOnce sync.Once
}

func (w *gatedWatch) ResultChan() <-chan watch.Event { return w.out }

func (w *gatedWatch) Stop() {
	w.stopOnce.Do(func() { close(w.stop) })
	w.Interface.Stop()
}

// Write is one write as the log gives it (with EnvCrashAfterWrite set).
type Write struct {
	N      int    `json:"n"`
	Verb   string `json:"verb"`
	Kind   string `json:"kind"`
	Object string `json:"object"`
	Error  string `json:"error"`
	// Name is how the faults name it: its verb, kind, object's name and,
	// after #, which of the writes of that name it is ("delete Pod
	// cache-4#1").
	Name string `json:"write"`
	// Crash is true on the line that says the operator exits after it, or
	// before it if Before.
	Crash, Before bool `json:"-"`
}

func (w Write) String() string {
	s := fmt.Sprintf("%d: %s %s %s", w.N, w.Verb, w.Kind, w.Object)
	if w.Error != "" {
		s += " (" + w.Error + ")"
	}
	return s
}

// WritesIn reads the write lines of an operator's log (the operator's
// development logger: time, level, logger and message, then the key/values
// as one JSON object, separated by tabs).
func WritesIn(log string) []Write {
	var writes []Write
	for _, line := range strings.Split(log, "\n") {
		fields := strings.Split(line, "\t")
		if len(fields) < 5 || fields[2] != LoggerName || !strings.HasPrefix(fields[4], "{") {
			continue
		}
		var w Write
		if err := json.Unmarshal([]byte(fields[4]), &w); err != nil || w.N == 0 {
			continue
		}
		w.Before = strings.HasPrefix(fields[3], CrashBefore)
		w.Crash = w.Before || strings.HasPrefix(fields[3], CrashAfter)
		if w.Crash || fields[3] == WriteMessage {
			writes = append(writes, w)
		}
	}
	return writes
}
