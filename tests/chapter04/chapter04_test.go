//go:build e2e

package chapter04

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"example.com/redis-operator/tests/framework"
)

// The operator is observed from outside: its log names the Redis of every
// reconcile, so a watch that works shows a reconcile of that Redis (its
// namespace and name, not any Redis), and its reconcile counter, read
// from its metrics endpoint, stays still where a watch that is too broad
// would make it go up.
var _ = Describe("A pod delete", func() {
	var ns string

	BeforeEach(func(ctx SpecContext) {
		ns = env.NewNamespace(ctx)
		env.CreateRedis(ctx, ns, "cache", 2)
		Eventually(env.Finalizers).WithContext(ctx).WithArguments(ns, "cache").Should(HaveLen(2))
	})

	It("of a pod the Redis controls makes the operator reconcile that Redis", framework.Lesson, func(ctx SpecContext) {
		framework.LessonStep("deleting cache-0 makes the operator reconcile Redis cache of this namespace")
		env.WaitForIdle(ctx, ns, "cache")
		offset := env.Operator.LogOffset()
		env.MustKubectl(ctx, "delete", "pod", "cache-0", "-n", ns)
		framework.DecidingCheck("a reconcile of this namespace's Redis cache starts after cache-0 is deleted", func() {
			env.ExpectReconciledSince(ctx, offset, ns, "cache")
		})
	})

	It("of a pod the Redis controls still does not get the pod back (the limitation chapter 5 fixes)", func(ctx SpecContext) {
		By("deleting cache-0: its delete event makes the operator reconcile, which creates nothing")
		env.DeletePodAndExpectNoRebuild(ctx, ns, "cache-0", nil)
	})

	It("of a pod no Redis controls does not make the operator reconcile", Serial, func(ctx SpecContext) {
		By("creating a pod without owner and a pod controlled by a ConfigMap named like the Redis")
		env.MustKubectl(ctx, "create", "configmap", "cache", "-n", ns)
		cm := env.MustKubectl(ctx, "get", "configmap", "cache", "-n", ns, "-o", "jsonpath={.metadata.uid}")
		_, err := env.Apply(ctx, `apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Pod
  metadata:
    name: loner
    namespace: `+ns+`
  spec:
    terminationGracePeriodSeconds: 1
    containers: [{name: main, image: redis:7.0}]
- apiVersion: v1
  kind: Pod
  metadata:
    name: cache-config-user
    namespace: `+ns+`
    ownerReferences:
    - {apiVersion: v1, kind: ConfigMap, name: cache, uid: `+cm+`, controller: true}
  spec:
    terminationGracePeriodSeconds: 1
    containers: [{name: main, image: redis:7.0}]
`)
		Expect(err).NotTo(HaveOccurred())
		before := env.SettledReconcileTotal(ctx, ns)

		By("deleting both; kubectl returns once they are gone, so their delete events have been sent")
		env.MustKubectl(ctx, "delete", "pod", "loner", "cache-config-user", "-n", ns)

		framework.DecidingCheck("the operator's count of reconciles stays as it was", func() {
			Consistently(env.Operator.ReconcileTotal).WithContext(ctx).Should(Equal(before),
				"deleting a pod that no Redis controls triggered a reconcile")
		})
	})
})

// What chapter 3 taught, unchanged.
var _ = framework.ForeignPodSpec(framework.SpecInput{Env: env})
