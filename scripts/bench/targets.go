package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	myappv1 "example.com/redis-operator/api/v1"
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
	// op is the operator that reconciles ns; nil for Kubernetes' own.
	op *operator
	// object returns the object of the given name that asks for 3 pods.
	object func(name string) client.Object
}

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
	return []*target{
		{name: fmt.Sprintf("chapter %d", b.cfg.oldChapter), ns: "bench-old", sameName: true, object: redis("bench-old")},
		{name: fmt.Sprintf("chapter %d", b.cfg.newChapter), ns: "bench-new", sameName: true, object: redis("bench-new")},
		{name: "StatefulSet", ns: "bench-sts", sameName: true, object: func(name string) client.Object {
			return &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: "bench-sts", Name: name},
				Spec: appsv1.StatefulSetSpec{
					Replicas: ptr.To[int32](replicas), ServiceName: name,
					PodManagementPolicy: appsv1.ParallelPodManagement,
					Selector:            &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
					Template:            podTemplate(name),
				}}
		}},
		{name: "ReplicaSet", ns: "bench-rs", sameName: false, object: func(name string) client.Object {
			return &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: "bench-rs", Name: name},
				Spec: appsv1.ReplicaSetSpec{
					Replicas: ptr.To[int32](replicas),
					Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
					Template: podTemplate(name),
				}}
		}},
	}
}

// operator is bin/operator running one chapter, as `make run` runs it.
type operator struct {
	chapter   int
	namespace string // "" for every namespace
	proc      *proc.Process
	metrics   string // http://host:port/metrics
}

// startOperator starts chapter's operator, reconciling namespace only
// (every namespace when empty), and waits until it is ready.
func (b *bench) startOperator(ctx context.Context, chapter int, namespace string) (*operator, error) {
	ports := make([]int, 2)
	for i := range ports {
		p, err := proc.FreePort()
		if err != nil {
			return nil, err
		}
		ports[i] = p
	}
	if err := os.MkdirAll(b.cfg.out, 0o755); err != nil {
		return nil, err
	}
	logPath := filepath.Join(b.cfg.out, fmt.Sprintf("operator-chapter%02d.log", chapter))
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	args := []string{"--chapter", strconv.Itoa(chapter), "--kubeconfig", b.kubeconfig,
		"--metrics-bind-address", fmt.Sprintf("127.0.0.1:%d", ports[0]),
		"--health-probe-bind-address", fmt.Sprintf("127.0.0.1:%d", ports[1])}
	if namespace != "" {
		args = append(args, "--namespace", namespace)
	}
	p, err := proc.Start(exec.Command(b.cfg.operatorBin, args...), logf)
	if err != nil {
		return nil, err
	}
	o := &operator{chapter: chapter, namespace: namespace, proc: p, metrics: fmt.Sprintf("http://127.0.0.1:%d/metrics", ports[0])}
	b.operators = append(b.operators, o)
	ready := fmt.Sprintf("http://127.0.0.1:%d/readyz", ports[1])
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		if !p.Running() {
			return false, fmt.Errorf("the chapter %d operator exited; its log %s ends with:\n%s", chapter, logPath, proc.Tail(logPath, 20))
		}
		return httpOK(ctx, ready), nil
	})
	return o, err
}

func httpOK(ctx context.Context, url string) bool {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return false
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

var httpClient = &http.Client{Timeout: 5 * time.Second}

func (o *operator) stop() {
	if o.proc != nil && o.proc.Running() {
		o.proc.Stop(30 * time.Second)
	}
}

// counters reads the operator's reconciles and its API requests, in total
// and those that wrote.
type counters struct{ reconciles, requests, writes float64 }

func (o *operator) counters(ctx context.Context) (counters, error) {
	m, err := promtext.Scrape(ctx, o.metrics)
	if err != nil {
		return counters{}, err
	}
	var c counters
	if c.reconciles, err = m.Sum("controller_runtime_reconcile_total", promtext.Label("controller", "redis")); err != nil {
		return c, err
	}
	if c.requests, err = m.Sum("rest_client_requests_total", nil); err != nil {
		return c, err
	}
	c.writes, err = m.Sum("rest_client_requests_total", promtext.Write)
	return c, err
}

// byCode reads the operator's API requests by response code.
func (o *operator) byCode(ctx context.Context) (map[string]float64, error) {
	m, err := promtext.Scrape(ctx, o.metrics)
	if err != nil {
		return nil, err
	}
	out := map[string]float64{}
	for _, code := range []string{"200", "201", "403", "404", "409", "422", "429", "500"} {
		v, err := m.Sum("rest_client_requests_total", promtext.Label("code", code))
		if err != nil {
			return nil, err
		}
		out[code] = v
	}
	return out, nil
}

// memory reads the operator's resident set size and the lowest Go heap in
// use over ten seconds, once it has settled for fifteen.
func (o *operator) memory(ctx context.Context) (rssMiB, heapMiB float64, err error) {
	select {
	case <-time.After(15 * time.Second):
	case <-ctx.Done():
		return 0, 0, ctx.Err()
	}
	heap := -1.0
	for range 10 {
		m, err := promtext.Scrape(ctx, o.metrics)
		if err != nil {
			return 0, 0, err
		}
		h, err := m.Sum("go_memstats_heap_inuse_bytes", nil)
		if err != nil {
			return 0, 0, err
		}
		if heap < 0 || h < heap {
			heap = h
		}
		time.Sleep(time.Second)
	}
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", o.proc.Pid()))
	if err != nil {
		return 0, 0, err
	}
	m := regexp.MustCompile(`VmRSS:\s+(\d+) kB`).FindSubmatch(status)
	if m == nil {
		return 0, 0, fmt.Errorf("no VmRSS in /proc/%d/status", o.proc.Pid())
	}
	kb, _ := strconv.ParseFloat(string(m[1]), 64)
	return kb / 1024, heap / (1 << 20), nil
}

// latestChapter asks the operator binary for its chapters.
func latestChapter(bin string) (int, error) {
	out, _ := exec.Command(bin, "--help").CombinedOutput()
	latest := 0
	for _, line := range strings.Split(string(out), "\n") {
		var n int
		var slug string
		if _, err := fmt.Sscanf(line, "  %d  %s", &n, &slug); err == nil && n > latest {
			latest = n
		}
	}
	if latest == 0 {
		return 0, fmt.Errorf("%s --help lists no chapters; build it with `make build`", bin)
	}
	return latest, nil
}

// ensureNamespace creates ns, first waiting for an earlier run's to go.
func (b *bench) ensureNamespace(ctx context.Context, ns string) error {
	err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, 5*time.Minute, true, func(ctx context.Context) (bool, error) {
		err := b.cl.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: map[string]string{"bench": "redis-operator"}}})
		if apierrors.IsAlreadyExists(err) {
			return false, nil // an earlier run's, going
		}
		return err == nil, err
	})
	if err != nil {
		return fmt.Errorf("creating namespace %s: %w", ns, err)
	}
	b.namespaces = append(b.namespaces, ns)
	return nil
}

// cleanup stops the operators and deletes the namespaces, without waiting.
// The Redis objects lose their finalizers first: with no operator left to
// remove them, they would keep their namespaces in Terminating.
func (b *bench) cleanup() {
	for _, o := range b.operators {
		o.stop()
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, ns := range b.namespaces {
		list := &myappv1.RedisList{}
		if err := b.cl.List(ctx, list, client.InNamespace(ns)); err == nil {
			for i := range list.Items {
				r := &list.Items[i]
				if len(r.Finalizers) > 0 {
					_ = b.cl.Patch(ctx, r, client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`)))
				}
			}
		}
		_ = client.IgnoreNotFound(b.cl.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))
	}
}
