package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	myappv1 "example.com/redis-operator/api/v1"
	"example.com/redis-operator/chapters"
	"example.com/redis-operator/internal/proc"
	"example.com/redis-operator/internal/promtext"
)

var scheme = runtime.NewScheme()

func init() {
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(myappv1.AddToScheme(scheme))
}

// replicas is the size of every measured object.
const replicas = 3

// target is one controller under measurement, with a namespace of its own.
type target struct {
	name string // as printed: "chapter 5", "StatefulSet", ...
	ns   string
	// sameName: a replacement takes the deleted pod's name (so the
	// controller's share, from the old pod's DELETED event, means something).
	sameName bool
	// chapter is the operator's chapter; 0 for Kubernetes' own controllers.
	chapter int
	// op is the operator that reconciles ns, once started; nil for
	// Kubernetes' own.
	op *operator
	// object returns the object of the given name that asks for 3 pods.
	object func(name string) client.Object
}

// targets returns what a run measures, in the order the table prints
// them: each chapter's operator, in the order of config.chapters, each in
// a namespace of its own (bench-ch05), then the StatefulSet and the
// ReplicaSet.
func (b *bench) targets() []*target {
	podTemplate := func(app string) corev1.PodTemplateSpec {
		return corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": app}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{
				Name: "redis", Image: b.cfg.image,
				Ports: []corev1.ContainerPort{{Name: "redis", ContainerPort: 6379}},
			}}},
		}
	}
	redis := func(ns string) func(string) client.Object {
		return func(name string) client.Object {
			return &myappv1.Redis{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
				Spec: myappv1.RedisSpec{Replicas: replicas, Image: b.cfg.image}}
		}
	}
	var targets []*target
	for _, n := range b.cfg.chapters() {
		ns := "bench-" + chapters.Tag(n)
		targets = append(targets, &target{name: chapterName(n), chapter: n, ns: ns, sameName: true, object: redis(ns)})
	}
	return append(targets,
		&target{name: sts, ns: "bench-sts", sameName: true, object: func(name string) client.Object {
			return &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: "bench-sts", Name: name},
				Spec: appsv1.StatefulSetSpec{
					Replicas: ptr.To[int32](replicas), ServiceName: name,
					PodManagementPolicy: appsv1.ParallelPodManagement,
					Selector:            &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
					Template:            podTemplate(name),
				}}
		}},
		&target{name: rs, ns: "bench-rs", sameName: false, object: func(name string) client.Object {
			return &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: "bench-rs", Name: name},
				Spec: appsv1.ReplicaSetSpec{
					Replicas: ptr.To[int32](replicas),
					Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
					Template: podTemplate(name),
				}}
		}},
	)
}

// chapterName is a chapter's target as printed and keyed in the report.
func chapterName(chapter int) string { return fmt.Sprintf("chapter %d", chapter) }

// operated returns the targets that one of the course's operators
// reconciles, in their order.
func operated(targets []*target) []*target {
	var out []*target
	for _, t := range targets {
		if t.chapter != 0 {
			out = append(out, t)
		}
	}
	return out
}

// operator is bin/operator running one chapter, as `make run` runs it,
// with its pprof endpoint on for forcing garbage collections.
type operator struct {
	chapter   int
	namespace string // "" for every namespace
	*proc.Operator
	pprof string // http://host:port
}

// startOperator starts chapter's operator, reconciling namespace only
// (every namespace when empty), and waits until it is ready.
func (b *bench) startOperator(ctx context.Context, chapter int, namespace string) (*operator, error) {
	port, err := proc.FreePort()
	if err != nil {
		return nil, err
	}
	args := []string{"--pprof-bind-address", fmt.Sprintf("127.0.0.1:%d", port)}
	if namespace != "" {
		args = append(args, "--namespace", namespace)
	}
	p, err := proc.StartOperator(ctx, proc.OperatorOptions{
		Binary: b.cfg.operatorBin, Chapter: chapter, Kubeconfig: b.kubeconfig, Args: args,
		LogPath: filepath.Join(b.cfg.out, "operator-"+chapters.SuiteName(chapter)+".log"),
	})
	if err != nil {
		return nil, fmt.Errorf("chapter %d: %w", chapter, err)
	}
	o := &operator{chapter: chapter, namespace: namespace, Operator: p, pprof: fmt.Sprintf("http://127.0.0.1:%d", port)}
	b.operators = append(b.operators, o)
	return o, nil
}

func (o *operator) stop() { _ = o.Stop(30 * time.Second) } // the measurement is over

// counters is what the operator's metrics count: reconciles (and those
// that returned an error) and API requests, in total, those that wrote,
// and by method and response code ("POST 403").
type counters struct {
	reconciles, reconcileErrors float64
	requests, writes            float64
	byMethodCode                map[string]float64
}

func (o *operator) counters(ctx context.Context) (counters, error) {
	m, err := promtext.Scrape(ctx, o.MetricsURL)
	if err != nil {
		return counters{}, err
	}
	c := counters{byMethodCode: map[string]float64{}}
	redis := promtext.Label("controller", "redis")
	if c.reconciles, err = m.Sum("controller_runtime_reconcile_total", redis); err != nil {
		return c, err
	}
	if c.reconcileErrors, err = m.Sum("controller_runtime_reconcile_errors_total", redis); err != nil {
		return c, err
	}
	if c.requests, err = m.Sum("rest_client_requests_total", nil); err != nil {
		return c, err
	}
	if c.writes, err = m.Sum("rest_client_requests_total", promtext.Write); err != nil {
		return c, err
	}
	c.byMethodCode, err = m.SumBy("rest_client_requests_total", "method", "code")
	return c, err
}

// sub returns what the counters counted since before.
func (c counters) sub(before counters) counters {
	d := counters{
		reconciles: c.reconciles - before.reconciles, reconcileErrors: c.reconcileErrors - before.reconcileErrors,
		requests: c.requests - before.requests, writes: c.writes - before.writes,
		byMethodCode: map[string]float64{},
	}
	for k, v := range c.byMethodCode {
		if v -= before.byMethodCode[k]; v > 0 {
			d.byMethodCode[k] = v
		}
	}
	return d
}

// memory forces two garbage collections in the operator (through pprof's
// heap profile with gc=1), then reads the Go heap in use from its metrics
// and samples its resident set size five times, a second apart, keeping
// the median. It repeats until the heap holds still within 2% (the
// operator's caches have filled), for at most two minutes.
func (o *operator) memory(ctx context.Context) (rssMiB, heapMiB float64, err error) {
	deadline := time.Now().Add(2 * time.Minute)
	last := -1.0
	for {
		for range 2 {
			if err := httpGet(ctx, o.pprof+"/debug/pprof/heap?gc=1"); err != nil {
				return 0, 0, fmt.Errorf("forcing a GC: %w", err)
			}
		}
		m, err := promtext.Scrape(ctx, o.MetricsURL)
		if err != nil {
			return 0, 0, err
		}
		heap, err := m.Sum("go_memstats_heap_inuse_bytes", nil)
		if err != nil {
			return 0, 0, err
		}
		var rss []float64
		for range 5 {
			r, err := residentMiB(o.Pid())
			if err != nil {
				return 0, 0, err
			}
			rss = append(rss, r)
			select {
			case <-time.After(time.Second):
			case <-ctx.Done():
				return 0, 0, ctx.Err()
			}
		}
		heapMiB, rssMiB = heap/(1<<20), percentile(rss, .5)
		if last > 0 && math.Abs(heap-last) <= 0.02*last || time.Now().After(deadline) {
			return rssMiB, heapMiB, nil
		}
		last = heap
	}
}

// residentMiB reads a process' resident set size.
func residentMiB(pid int) (float64, error) {
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	m := regexp.MustCompile(`VmRSS:\s+(\d+) kB`).FindSubmatch(status)
	if m == nil {
		return 0, fmt.Errorf("no VmRSS in /proc/%d/status", pid)
	}
	kb, err := strconv.ParseFloat(string(m[1]), 64)
	return kb / 1024, err
}

func httpGet(ctx context.Context, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", url, resp.Status)
	}
	return nil
}

var httpClient = &http.Client{Timeout: 30 * time.Second}
