package framework

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
)

// DefaultWorkers is how many Redis objects the operator reconciles at
// once unless told otherwise, from chapter 9 on (its README documents
// it).
const DefaultWorkers = 4

// The queue that RebuildFirstSpec builds: crowdSize new Redis objects of
// crowdReplicas pods each, created at once. A reconcile of one of them
// creates ten pods, so the operator takes a few seconds to get through
// them; a Redis waiting behind them all waits that long.
const (
	crowdSize     = 100
	crowdReplicas = myappv1.MaxReplicas
	// crowdQueued is how many of them must still wait for their first
	// reconcile when the pod is deleted, for the spec to mean something.
	crowdQueued = 20
)

// RebuildFirstSpec proves that a deleted pod does not wait behind a queue
// of new Redis objects: chapter 9's priority queue, and chapter 15's
// queue of its own on client-go. It reads the operator's log, so it runs
// alone (Serial).
func RebuildFirstSpec(in SpecInput) bool {
	e := in.Env
	checkEnv("RebuildFirstSpec", e)
	return Describe("A pod deleted while the operator works through a queue of new Redis objects", Serial, func() {
		It("is created again before those waiting are reconciled", lessonIf(in.Lesson), func(ctx SpecContext) {
			ns := e.NewNamespace(ctx)
			e.CreateRedis(ctx, ns, "cache", 1)
			expectRebuildGoesFirst(ctx, e, ns)
		})
	})
}

// expectRebuildGoesFirst: while the operator works through a queue of
// new Redis objects, pod cache-0 of Redis cache (one running pod) is
// deleted. The reconcile that creates it again starts before those of all
// but DefaultWorkers of the new objects still waiting. The new objects'
// pods ask for more CPU than a node has (UnschedulableNamespace), so that
// no kubelet has to start a thousand containers.
func expectRebuildGoesFirst(ctx context.Context, e *Env, ns string) {
	GinkgoHelper()
	e.ExpectAvailable(ctx, ns, "cache")
	e.SettledReconcileTotal(ctx, ns)
	crowd := e.UnschedulableNamespace(ctx)
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

	LessonStep(fmt.Sprintf("the reconcile of Redis cache starts before those of all but %d of the %d new Redis objects still waiting", DefaultWorkers, queued))
	DecidingCheck("of the new Redis objects waiting when the pod was deleted, at most one per worker has its first reconcile start before Redis cache's", func() {
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
		// The queue hands the rebuild to the next free worker once the
		// delete event reaches it; before that, each worker may start one
		// more of the new objects.
		Expect(overtaken).To(BeNumerically(">=", queued-DefaultWorkers),
			"Redis cache waited behind %d of the %d new Redis objects that were queued before its pod was deleted", queued-overtaken, queued)
	})
	e.ExpectPodsRun(ctx, ns, "cache", 1)
}

// UnschedulableNamespace returns a new namespace whose pods ask for more
// CPU than any node has (a LimitRange): they are never scheduled.
func (e *Env) UnschedulableNamespace(ctx context.Context) string {
	GinkgoHelper()
	ns := e.NewNamespace(ctx)
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
`, ns))
	Expect(err).NotTo(HaveOccurred())
	return ns
}
