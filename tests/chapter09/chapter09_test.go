//go:build e2e

package chapter09

import (
	"context"
	"fmt"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	myappv1 "example.com/redis-operator/api/v1"
	"example.com/redis-operator/tests/framework"
)

// One pod deletion, stage by stage (chapter 15 prints the same for its
// client-go controller, to set beside this one).
var _ = framework.TraceSpec(framework.SpecInput{Env: env})

// What chapter 9 changes. Its specs read the operator's log and count its
// reconciles, so each runs alone (Serial): a rebuild goes ahead of the
// new Redis objects waiting (a spec chapter 15 proves too), and the
// workers that reconcile several at once.
var _ = framework.RebuildFirstSpec(framework.SpecInput{Env: env, Lesson: true})

var _ = Describe("The operator, with chapter 9", Serial, func() {
	It("reconciles several Redis objects at once, up to 4 by default, and never one twice at once", framework.Lesson, func(ctx SpecContext) {
		expectConcurrentReconciles(ctx)
	})
})

// concurrentRedis Redis objects of concurrentReplicas pods each, created
// at once: each reconcile creates that many pods, long enough that the
// workers are all busy at once, so that the most reconciles at once is
// the number of workers, not how many happened to overlap.
const (
	concurrentRedis    = 16
	concurrentReplicas = myappv1.MaxReplicas
)

// expectConcurrentReconciles: concurrentRedis Redis objects created with
// one kubectl apply are reconciled two or more at once, exactly
// framework.DefaultWorkers at once at the most, and never one twice at
// once. Their pods ask for more CPU than a node has (unschedulable), so
// that no kubelet has to start them.
func expectConcurrentReconciles(ctx context.Context) {
	GinkgoHelper()
	ns := env.UnschedulableNamespace(ctx)
	env.SettledReconcileTotal(ctx, ns)
	offset := env.Operator.LogOffset()
	var manifests []string
	for i := range concurrentRedis {
		manifests = append(manifests, framework.RedisManifest(ns, fmt.Sprintf("cache%d", i), concurrentReplicas))
	}

	framework.LessonStep(fmt.Sprintf("creating %d Redis objects with one kubectl apply: two or more are reconciled at the same time", concurrentRedis))
	_, err := env.Apply(ctx, strings.Join(manifests, "---\n"))
	Expect(err).NotTo(HaveOccurred())
	framework.DecidingCheck("two or more reconciles of different Redis objects overlap", func() {
		Eventually(env.Operator.ReconcileOverlapSince).WithContext(ctx).WithArguments(offset).
			Should(HaveField("MaxObjects", BeNumerically(">=", 2)), "the operator never reconciled two Redis objects at once")
	})

	By(fmt.Sprintf("all %d get their pods, with %d reconciles at once at the most, the default, and no Redis reconciled twice at once", concurrentRedis, framework.DefaultWorkers))
	Eventually(func(g Gomega) {
		for i := range concurrentRedis {
			pods, err := env.Pods(ctx, ns, fmt.Sprintf("cache%d", i))
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(pods).To(HaveLen(concurrentReplicas))
		}
	}).WithContext(ctx).Should(Succeed())
	overlap := env.Operator.ReconcileOverlapSince(offset)
	GinkgoWriter.Printf("at most %d reconciles at once\n", overlap.MaxObjects)
	framework.DecidingCheck("the most reconciles at once is the default, 4; no Redis is reconciled twice at once", func() {
		Expect(overlap.MaxObjects).To(Equal(framework.DefaultWorkers), "the most reconciles at once was not the default number of workers")
		Expect(overlap.SameObject).To(BeEmpty(), "a Redis was reconciled twice at once")
	})
}
