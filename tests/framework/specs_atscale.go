package framework

import (
	"context"
	"fmt"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	myappv1 "example.com/redis-operator/api/v1"
	"example.com/redis-operator/tests/parallel"
)

// Spec bodies of chapter 8 (at scale), which the chapters after it run
// unchanged.

// ExpectConcurrentReconciles: 8 Redis objects created with one kubectl
// apply are reconciled two or more at a time, never more than the default
// of 4, and never one Redis twice at once.
func (e *Env) ExpectConcurrentReconciles(ctx context.Context) {
	GinkgoHelper()
	ns := e.NewNamespace(ctx)
	e.SettledReconcileTotal(ctx, ns)
	offset := e.Operator.LogOffset()
	var manifests []string
	for i := range 8 {
		manifests = append(manifests, RedisManifest(ns, fmt.Sprintf("cache%d", i), 1))
	}

	LessonStep("creating 8 Redis objects with one kubectl apply: two or more are reconciled at the same time")
	_, err := e.Apply(ctx, strings.Join(manifests, "---\n"))
	Expect(err).NotTo(HaveOccurred())
	Eventually(e.Operator.ReconcileOverlapSince).WithContext(ctx).WithArguments(offset).
		Should(HaveField("MaxObjects", BeNumerically(">=", 2)), "the operator never reconciled two Redis objects at once")

	By("all 8 get their pod, with at most 4 reconciles at once, and no Redis reconciled twice at once")
	for i := range 8 {
		e.ExpectPodsRun(ctx, ns, fmt.Sprintf("cache%d", i), 1)
	}
	overlap := e.Operator.ReconcileOverlapSince(offset)
	Expect(overlap.MaxObjects).To(BeNumerically("<=", 4))
	Expect(overlap.SameObject).To(BeEmpty(), "a Redis was reconciled twice at once")
}

// ExpectPodOutsideCacheIgnored: a pod that names Redis cache (one pod) as
// its controller but lacks the operator's managed-by label is not in the
// operator's cache: its create event reaches no one, and the operator
// reconciles nothing.
func (e *Env) ExpectPodOutsideCacheIgnored(ctx context.Context, ns string) {
	GinkgoHelper()
	e.ExpectAvailable(ctx, ns, "cache")
	redis, err := e.Redis(ctx, ns, "cache")
	Expect(err).NotTo(HaveOccurred())
	before := e.SettledReconcileTotal(ctx, ns)

	LessonStep("a pod without the operator's managed-by label that names the Redis as its controller makes it reconcile nothing")
	// Were it in the cache, its create event would reach the controller
	// through the pod watch, and the Redis would be reconciled.
	_, err = e.Apply(ctx, fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  namespace: %s
  name: stranger
  ownerReferences:
  - apiVersion: myapp.example.com/v1
    kind: Redis
    name: cache
    uid: %s
    controller: true
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - name: main
    image: %s
`, ns, redis.UID, myappv1.DefaultImage))
	Expect(err).NotTo(HaveOccurred())
	Eventually(func(g Gomega) corev1.PodPhase {
		p, err := e.Pod(ctx, ns, "stranger")
		g.Expect(err).NotTo(HaveOccurred())
		return p.Status.Phase
	}).WithContext(ctx).Should(Equal(corev1.PodRunning))
	Consistently(e.Operator.ReconcileTotal).WithContext(ctx).WithTimeout(5*time.Second).
		Should(Equal(before), "a pod without the managed-by label reached the controller")
}

// ExpectLabelsRestored: pod cache-2 of Redis cache (three pods), stripped
// of the managed-by label (and so out of the operator's cache), gets it
// back, the same pod, and the Redis stays Available.
func (e *Env) ExpectLabelsRestored(ctx context.Context, ns string) {
	GinkgoHelper()
	e.ExpectAvailable(ctx, ns, "cache")
	uid := e.PodUIDs(ctx, ns, "cache")["cache-2"]

	e.MustKubectl(ctx, "label", "pod", "cache-2", "-n", ns, "app.kubernetes.io/managed-by-")
	Eventually(func(g Gomega) map[string]string {
		p, err := e.Pod(ctx, ns, "cache-2")
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(p.UID).To(Equal(uid), "the pod was replaced")
		return p.Labels
	}).WithContext(ctx).Should(HaveKeyWithValue("app.kubernetes.io/managed-by", "redis-operator"))
	e.ExpectAvailable(ctx, ns, "cache")
}

// The queue that ExpectRebuildGoesFirst builds: crowdSize new Redis
// objects of crowdReplicas pods each, created at once. A reconcile of one
// of them creates ten pods, so the operator takes a few seconds to get
// through them; a Redis waiting behind them all waits that long.
const (
	crowdSize     = 100
	crowdReplicas = myappv1.MaxReplicas
	// crowdQueued is how many of them must still wait for their first
	// reconcile when the pod is deleted, for the spec to mean something.
	crowdQueued = 20
)

// ExpectRebuildGoesFirst: while the operator works through a queue of
// new Redis objects, pod cache-0 of Redis cache (one running pod) is
// deleted. The reconcile that creates it again starts before those of at
// least half the new objects still waiting. The new objects' pods ask for
// more CPU than a node has (a LimitRange of their namespace), so that no
// kubelet has to start a thousand containers.
func (e *Env) ExpectRebuildGoesFirst(ctx context.Context, ns string) {
	GinkgoHelper()
	e.ExpectAvailable(ctx, ns, "cache")
	e.SettledReconcileTotal(ctx, ns)
	crowd := e.NewNamespace(ctx)
	_, err := e.Apply(ctx, fmt.Sprintf(`apiVersion: v1
kind: LimitRange
metadata:
  namespace: %s
  name: unschedulable
spec:
  limits:
  - type: Container
    default:
      cpu: "100k"
    defaultRequest:
      cpu: "100k"
`, crowd))
	Expect(err).NotTo(HaveOccurred())
	offset := e.Operator.LogOffset()

	By(fmt.Sprintf("creating %d Redis objects of %d pods at once in namespace %s, then deleting pod cache-0 with --force --grace-period=0",
		crowdSize, crowdReplicas, crowd))
	Expect(parallel.Create(ctx, e.Client, crowdSize, func(i int) client.Object {
		return &myappv1.Redis{ObjectMeta: metav1.ObjectMeta{Namespace: crowd, Name: fmt.Sprintf("crowd-%d", i)},
			Spec: myappv1.RedisSpec{Replicas: crowdReplicas}}
	})).To(Succeed())
	e.MustKubectl(ctx, "delete", "pod", "cache-0", "-n", ns, "--force", "--grace-period=0")
	firstStarts := func(calls []ReconcileCall) map[string]int {
		first := map[string]int{}
		for i, c := range calls {
			if _, seen := first[c.Namespace+"/"+c.Name]; !seen {
				first[c.Namespace+"/"+c.Name] = i
			}
		}
		return first
	}
	started := 0
	for key := range firstStarts(e.Operator.ReconcilesSince(offset)) {
		if strings.HasPrefix(key, crowd+"/") {
			started++
		}
	}
	queued := crowdSize - started
	Expect(queued).To(BeNumerically(">=", crowdQueued),
		"the operator had started reconciling %d of the %d new Redis objects when the pod was deleted: no queue formed", started, crowdSize)

	LessonStep(fmt.Sprintf("the reconcile of Redis cache starts before those of half the %d new Redis objects still waiting", queued))
	var first map[string]int
	Eventually(func() map[string]int {
		first = firstStarts(e.Operator.ReconcilesSince(offset))
		return first
	}).WithContext(ctx).Should(HaveKey(ns+"/cache"), "Redis cache was not reconciled after its pod was deleted")
	overtaken := 0
	for i := range crowdSize {
		if at, seen := first[fmt.Sprintf("%s/crowd-%d", crowd, i)]; !seen || at > first[ns+"/cache"] {
			overtaken++
		}
	}
	GinkgoWriter.Printf("%d new Redis objects waited when the pod was deleted; the rebuild started before the first reconcile of %d of them\n", queued, overtaken)
	Expect(overtaken).To(BeNumerically(">=", queued/2),
		"Redis cache waited behind %d of the %d new Redis objects that were queued before its pod was deleted", queued-overtaken, queued)
	e.ExpectPodsRun(ctx, ns, "cache", 1)
}
