//go:build e2e

package chapter09

import (
	"context"
	"fmt"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	myappv1 "example.com/redis-operator/api/v1"
	"example.com/redis-operator/internal/parallel"
	"example.com/redis-operator/tests/framework"
)

// The behaviour of chapters 3, 5, 6, 7 and 8, unchanged.
var (
	_ = framework.RebuildSpec(framework.SpecInput{Env: env})
	_ = framework.ScaleSpec(framework.SpecInput{Env: env})
	_ = framework.StatusSpec(framework.SpecInput{Env: env})
	_ = framework.SteadySpec(framework.SpecInput{Env: env})
	_ = framework.EndedPodSpec(framework.SpecInput{Env: env})
	_ = framework.ForeignPodSpec(framework.SpecInput{Env: env})
	_ = framework.NoFinalizerSpec(framework.SpecInput{Env: env})
	_ = framework.OwnPodsSpec(framework.SpecInput{Env: env})
)

// One pod deletion, stage by stage (chapter 13 prints the same for its
// client-go controller, to set beside this one).
var _ = framework.TraceSpec(framework.SpecInput{Env: env})

// What chapter 9 changes. Its specs read the operator's log and count its
// reconciles, so each runs alone (Serial).

var _ = Describe("The operator, with chapter 9", Serial, func() {
	It("reconciles several Redis objects at once, up to 4 by default, and never one twice at once", framework.Lesson, func(ctx SpecContext) {
		expectConcurrentReconciles(ctx)
	})

	It("creates a deleted pod again before it reconciles the new Redis objects waiting in its queue", framework.Lesson, func(ctx SpecContext) {
		ns := env.NewNamespace(ctx)
		env.CreateRedis(ctx, ns, "cache", 1)
		rebuildGoesFirst(ctx, ns)
	})
})

// concurrentRedis Redis objects of concurrentReplicas pods each, created
// at once: each reconcile creates that many pods, long enough that the
// workers are all busy at once, so that the most reconciles at once is
// the number of workers, not how many happened to overlap.
const (
	concurrentRedis    = 16
	concurrentReplicas = myappv1.MaxReplicas
	// defaultWorkers is chapter 9's DefaultMaxConcurrentReconciles, as the
	// README documents it.
	defaultWorkers = 4
)

// expectConcurrentReconciles: concurrentRedis Redis objects created with
// one kubectl apply are reconciled two or more at once, exactly
// defaultWorkers at once at the most, and never one twice at once. Their
// pods ask for more CPU than a node has (unschedulable), so that no
// kubelet has to start them.
func expectConcurrentReconciles(ctx context.Context) {
	GinkgoHelper()
	ns := unschedulableNamespace(ctx)
	env.SettledReconcileTotal(ctx, ns)
	offset := env.Operator.LogOffset()
	var manifests []string
	for i := range concurrentRedis {
		manifests = append(manifests, framework.RedisManifest(ns, fmt.Sprintf("cache%d", i), concurrentReplicas))
	}

	framework.LessonStep(fmt.Sprintf("creating %d Redis objects with one kubectl apply: two or more are reconciled at the same time", concurrentRedis))
	_, err := env.Apply(ctx, strings.Join(manifests, "---\n"))
	Expect(err).NotTo(HaveOccurred())
	framework.DecidingCheck("two or more reconciles of different Redis objects overlap; the most at once is the default, 4; no Redis is reconciled twice at once")
	Eventually(env.Operator.ReconcileOverlapSince).WithContext(ctx).WithArguments(offset).
		Should(HaveField("MaxObjects", BeNumerically(">=", 2)), "the operator never reconciled two Redis objects at once")

	By(fmt.Sprintf("all %d get their pods, with %d reconciles at once at the most, the default, and no Redis reconciled twice at once", concurrentRedis, defaultWorkers))
	Eventually(func(g Gomega) {
		for i := range concurrentRedis {
			pods, err := env.Pods(ctx, ns, fmt.Sprintf("cache%d", i))
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(pods).To(HaveLen(concurrentReplicas))
		}
	}).WithContext(ctx).Should(Succeed())
	overlap := env.Operator.ReconcileOverlapSince(offset)
	GinkgoWriter.Printf("at most %d reconciles at once\n", overlap.MaxObjects)
	Expect(overlap.MaxObjects).To(Equal(defaultWorkers), "the most reconciles at once was not the default number of workers")
	Expect(overlap.SameObject).To(BeEmpty(), "a Redis was reconciled twice at once")
}

// unschedulableNamespace returns a new namespace whose pods ask for more
// CPU than any node has (a LimitRange): they are never scheduled.
func unschedulableNamespace(ctx context.Context) string {
	GinkgoHelper()
	ns := env.NewNamespace(ctx)
	_, err := env.Apply(ctx, fmt.Sprintf(`apiVersion: v1
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
`, ns))
	Expect(err).NotTo(HaveOccurred())
	return ns
}

// The queue that rebuildGoesFirst builds: crowdSize new Redis
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

// rebuildGoesFirst: while the operator works through a queue of
// new Redis objects, pod cache-0 of Redis cache (one running pod) is
// deleted. The reconcile that creates it again starts before those of all
// but defaultWorkers of the new objects still waiting. The new objects'
// pods ask for more CPU than a node has (a LimitRange of their
// namespace), so that no kubelet has to start a thousand containers.
func rebuildGoesFirst(ctx context.Context, ns string) {
	GinkgoHelper()
	env.ExpectAvailable(ctx, ns, "cache")
	env.SettledReconcileTotal(ctx, ns)
	crowd := unschedulableNamespace(ctx)
	offset := env.Operator.LogOffset()

	By(fmt.Sprintf("creating %d Redis objects of %d pods at once in namespace %s, then deleting pod cache-0 with --force --grace-period=0",
		crowdSize, crowdReplicas, crowd))
	Expect(parallel.Create(ctx, env.Client, crowdSize, func(i int) client.Object {
		return &myappv1.Redis{ObjectMeta: metav1.ObjectMeta{Namespace: crowd, Name: fmt.Sprintf("crowd-%d", i)},
			Spec: myappv1.RedisSpec{Replicas: crowdReplicas}}
	})).To(Succeed())
	env.MustKubectl(ctx, "delete", "pod", "cache-0", "-n", ns, "--force", "--grace-period=0")
	firstStarts := func(calls []framework.ReconcileCall) map[string]int {
		first := map[string]int{}
		for i, c := range calls {
			if _, seen := first[c.Namespace+"/"+c.Name]; !seen {
				first[c.Namespace+"/"+c.Name] = i
			}
		}
		return first
	}
	started := 0
	for key := range firstStarts(env.Operator.ReconcilesSince(offset)) {
		if strings.HasPrefix(key, crowd+"/") {
			started++
		}
	}
	queued := crowdSize - started
	Expect(queued).To(BeNumerically(">=", crowdQueued),
		"the operator had started reconciling %d of the %d new Redis objects when the pod was deleted: no queue formed", started, crowdSize)

	framework.LessonStep(fmt.Sprintf("the reconcile of Redis cache starts before those of all but %d of the %d new Redis objects still waiting", defaultWorkers, queued))
	framework.DecidingCheck("of the new Redis objects waiting when the pod was deleted, at most one per worker has its first reconcile start before Redis cache's")
	var first map[string]int
	Eventually(func() map[string]int {
		first = firstStarts(env.Operator.ReconcilesSince(offset))
		return first
	}).WithContext(ctx).Should(HaveKey(ns+"/cache"), "Redis cache was not reconciled after its pod was deleted")
	overtaken := 0
	for i := range crowdSize {
		if at, seen := first[fmt.Sprintf("%s/crowd-%d", crowd, i)]; !seen || at > first[ns+"/cache"] {
			overtaken++
		}
	}
	GinkgoWriter.Printf("%d new Redis objects waited when the pod was deleted; the rebuild started before the first reconcile of %d of them\n", queued, overtaken)
	// The queue hands the rebuild to the next free worker once the delete
	// event reaches it; before that, each worker may start one more of the
	// new objects.
	Expect(overtaken).To(BeNumerically(">=", queued-defaultWorkers),
		"Redis cache waited behind %d of the %d new Redis objects that were queued before its pod was deleted", queued-overtaken, queued)
	env.ExpectPodsRun(ctx, ns, "cache", 1)
}
