package framework

import (
	"context"
	"fmt"
	"sort"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	myappv1 "example.com/redis-operator/api/v1"
	"example.com/redis-operator/internal/cluster"
)

// ClusterProxy is a suite's way into the cluster: kubectl for what a user
// types, and a controller-runtime client for the reads that specs poll
// (they are not what a learner types, and polling kubectl would flood the
// report with command lines). Its methods read objects, run kubectl and
// assert what a namespace holds; none needs the operator.
type ClusterProxy struct {
	Cluster cluster.Provider
	Kubectl *Kubectl
	// Client reads (and, in rare setup steps, writes) with the cluster's
	// admin credentials, and watches what a poll could miss. What a
	// learner would type stays kubectl.
	Client client.WithWatch
}

var scheme = runtime.NewScheme()

func init() {
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(myappv1.AddToScheme(scheme))
}

// NewClient returns a client for the cluster behind kubeconfig. It reads
// straight from the API server (no cache), so what a spec sees is current.
func NewClient(kubeconfig string) (client.WithWatch, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("loading %s: %w", kubeconfig, err)
	}
	// No client-side rate limit, as controller-runtime sets for the
	// operator: a spec that creates a hundred objects at once is not held
	// to five requests a second (the API server's own flow control stays).
	cfg.QPS = -1
	return client.NewWithWatch(cfg, client.Options{Scheme: scheme})
}

// Pods lists the pods of a Redis (by its instance label), sorted by name.
func (p *ClusterProxy) Pods(ctx context.Context, ns, redis string) ([]corev1.Pod, error) {
	list := &corev1.PodList{}
	if err := p.Client.List(ctx, list, client.InNamespace(ns),
		client.MatchingLabels{"app.kubernetes.io/instance": redis}); err != nil {
		return nil, err
	}
	sort.Slice(list.Items, func(i, j int) bool { return list.Items[i].Name < list.Items[j].Name })
	return list.Items, nil
}

// PodNamesFunc is for Eventually: the sorted names of a Redis' pods that
// are not being deleted.
func (p *ClusterProxy) PodNamesFunc(ctx context.Context, ns, redis string) func(Gomega) []string {
	return func(g Gomega) []string {
		pods, err := p.Pods(ctx, ns, redis)
		g.Expect(err).NotTo(HaveOccurred())
		names := []string{}
		for _, p := range pods {
			if p.DeletionTimestamp == nil {
				names = append(names, p.Name)
			}
		}
		return names
	}
}

// Pod gets one pod. The pod it returns is never nil: with Eventually, its
// error is what fails (NotFound), so check what matters of the pod itself.
func (p *ClusterProxy) Pod(ctx context.Context, ns, name string) (*corev1.Pod, error) {
	pod := &corev1.Pod{}
	return pod, p.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, pod)
}

// Redis gets one Redis.
func (p *ClusterProxy) Redis(ctx context.Context, ns, name string) (*myappv1.Redis, error) {
	redis := &myappv1.Redis{}
	return redis, p.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, redis)
}

// PodUIDs maps pod name to UID for a Redis' pods.
func (p *ClusterProxy) PodUIDs(ctx context.Context, ns, redis string) map[string]types.UID {
	GinkgoHelper()
	pods, err := p.Pods(ctx, ns, redis)
	Expect(err).NotTo(HaveOccurred())
	uids := map[string]types.UID{}
	for _, p := range pods {
		uids[p.Name] = p.UID
	}
	return uids
}

// ExpectSamePods fails unless each pod of kept (by name, as PodUIDs
// gives them) is still the same object: a pod deleted and made again
// under its name has the name, not the UID. what says what kept them.
func (p *ClusterProxy) ExpectSamePods(ctx context.Context, ns, redis string, kept map[string]types.UID, what string) {
	GinkgoHelper()
	now := p.PodUIDs(ctx, ns, redis)
	for name, uid := range kept {
		Expect(now).To(HaveKeyWithValue(name, uid), "%s replaced pod %s, which it should have kept", what, name)
	}
}

// Finalizers returns a Redis' finalizers.
func (p *ClusterProxy) Finalizers(ctx context.Context, ns, redis string) ([]string, error) {
	r, err := p.Redis(ctx, ns, redis)
	if err != nil {
		return nil, err
	}
	return r.Finalizers, nil
}

// notFound is for Eventually and Consistently: it passes while the API
// server says NotFound for obj (its namespace and name are what count).
func (p *ClusterProxy) notFound(ctx context.Context, obj client.Object) func(Gomega) {
	return func(g Gomega) {
		err := p.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj.DeepCopyObject().(client.Object))
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "want NotFound, got %v", err)
	}
}

// ExpectGone waits until the API server says NotFound for obj.
func (p *ClusterProxy) ExpectGone(ctx context.Context, obj client.Object) {
	GinkgoHelper()
	Eventually(p.notFound(ctx, obj)).WithContext(ctx).Should(Succeed(),
		"%T %s still exists", obj, client.ObjectKeyFromObject(obj))
}

// ExpectStaysGone checks that obj does not come back for the Consistently
// window; why says what it would mean if it did.
func (p *ClusterProxy) ExpectStaysGone(ctx context.Context, obj client.Object, why string) {
	GinkgoHelper()
	Consistently(p.notFound(ctx, obj)).WithContext(ctx).Should(Succeed(),
		"%T %s: %s", obj, client.ObjectKeyFromObject(obj), why)
}

// EventReasons lists the reasons of the events in a namespace that are
// about the named object (kind and name, e.g. Redis and cache).
func (p *ClusterProxy) EventReasons(ctx context.Context, ns, kind, name string) ([]string, error) {
	return p.events(ctx, ns, kind, name, func(ev corev1.Event) string { return ev.Reason })
}

// EventNotes lists the events about the named object as "Reason: note",
// e.g. "SuccessfulCreate: Created pod cache-3". An event that happened
// again with the same note is listed once (the recorder counts repeats on
// the first).
func (p *ClusterProxy) EventNotes(ctx context.Context, ns, kind, name string) ([]string, error) {
	return p.events(ctx, ns, kind, name, func(ev corev1.Event) string { return ev.Reason + ": " + ev.Message })
}

func (p *ClusterProxy) events(ctx context.Context, ns, kind, name string, show func(corev1.Event) string) ([]string, error) {
	list := &corev1.EventList{}
	if err := p.Client.List(ctx, list, client.InNamespace(ns)); err != nil {
		return nil, err
	}
	var shown []string
	for _, ev := range list.Items {
		if ev.InvolvedObject.Kind == kind && ev.InvolvedObject.Name == name {
			shown = append(shown, show(ev))
		}
	}
	return shown, nil
}

// ExpectAvailable waits until the Redis' Available condition is True for
// its current generation.
func (p *ClusterProxy) ExpectAvailable(ctx context.Context, ns, name string) {
	GinkgoHelper()
	Eventually(func(g Gomega) {
		redis, err := p.Redis(ctx, ns, name)
		g.Expect(err).NotTo(HaveOccurred())
		available := meta.FindStatusCondition(redis.Status.Conditions, "Available")
		g.Expect(available).NotTo(BeNil(), "no Available condition")
		g.Expect(available.ObservedGeneration).To(Equal(redis.Generation))
		g.Expect(available.Status).To(Equal(metav1.ConditionTrue), "Available: %s", available.Message)
	}).WithContext(ctx).Should(Succeed(), "Redis %s did not become Available", name)
}

// MustKubectl runs kubectl and fails the spec if it fails.
func (p *ClusterProxy) MustKubectl(ctx context.Context, args ...string) string {
	GinkgoHelper()
	out, err := p.Kubectl.Run(ctx, args...)
	Expect(err).NotTo(HaveOccurred())
	return out
}

// Apply pipes a manifest into `kubectl apply -f -`, with more flags.
func (p *ClusterProxy) Apply(ctx context.Context, manifest string, args ...string) (string, error) {
	return p.Kubectl.RunWithInput(ctx, manifest, append([]string{"apply", "-f", "-"}, args...)...)
}

// CreateRedis applies a Redis and waits until its pods <name>-0..N-1 exist
// and run. (A pod deleted while its container still starts can take its
// whole grace period to go, on kind: the specs start from running pods.)
func (p *ClusterProxy) CreateRedis(ctx context.Context, ns, name string, replicas int) {
	GinkgoHelper()
	_, err := p.Apply(ctx, RedisManifest(ns, name, replicas))
	Expect(err).NotTo(HaveOccurred())
	p.ExpectPodsRun(ctx, ns, name, replicas)
}

// ExpectPodsRun waits until the pods of Redis name are exactly
// <name>-0..N-1, none being deleted, and all run. On an API server alone
// (CLUSTER=envtest) no pod ever runs: no scheduler binds it, no kubelet
// starts it; the pods existing is all there is to wait for.
func (p *ClusterProxy) ExpectPodsRun(ctx context.Context, ns, name string, replicas int) {
	GinkgoHelper()
	Eventually(p.PodNamesFunc(ctx, ns, name)).WithContext(ctx).Should(Equal(PodNames(name, replicas)),
		"Redis %s did not get its pods", name)
	if p.Cluster.APIServerOnly() {
		By("an API server alone runs no pod: not waiting for Redis " + name + "'s pods to run")
		return
	}
	Eventually(func(g Gomega) {
		pods, err := p.Pods(ctx, ns, name)
		g.Expect(err).NotTo(HaveOccurred())
		for _, p := range pods {
			g.Expect(p.Status.Phase).To(Equal(corev1.PodRunning), "pod %s", p.Name)
		}
	}).WithContext(ctx).Should(Succeed(), "the pods of Redis %s do not run", name)
}
