package chapter04

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// The operator's reconcile counter is observed from outside, through its
// metrics endpoint: a watch that works makes it go up, a watch that is too
// broad makes it go up when it should not.
var _ = Describe("A pod delete", func() {
	var ns string

	// settledReconcileTotal waits until the operator has stopped reconciling
	// (the counter holds still for a few seconds) and returns the counter.
	settledReconcileTotal := func(ctx SpecContext) float64 {
		GinkgoHelper()
		var total float64
		Eventually(func(g Gomega) {
			var err error
			total, err = env.Operator.ReconcileTotal()
			g.Expect(err).NotTo(HaveOccurred())
			g.Consistently(env.Operator.ReconcileTotal).WithTimeout(3 * time.Second).Should(Equal(total))
		}).WithContext(ctx).Should(Succeed())
		return total
	}

	BeforeEach(func(ctx SpecContext) {
		ns = env.NewNamespace(ctx)
		// Earlier specs' Redis objects are reconciled while their
		// namespaces go; this spec counts reconciles, so wait for them.
		env.WaitForOtherNamespacesGone(ctx, ns)
		env.CreateRedis(ctx, ns, "cache", 2)
		Eventually(env.Finalizers).WithContext(ctx).WithArguments(ns, "redis/cache").Should(HaveLen(2))
	})

	It("of a pod the Redis controls makes the operator reconcile, yet the pod is not rebuilt", func(ctx SpecContext) {
		before := settledReconcileTotal(ctx)

		env.MustKubectl(ctx, "delete", "pod", "cache-0", "-n", ns)

		Eventually(env.Operator.ReconcileTotal).WithContext(ctx).Should(BeNumerically(">", before),
			"deleting a pod the Redis controls did not trigger a reconcile")
		env.ExpectStaysGone(ctx, ns, "pod/cache-0", "creation still trusts the finalizers in chapter 4")
	})

	It("of a pod no Redis controls does not make the operator reconcile", func(ctx SpecContext) {
		By("creating a pod without owner and a pod controlled by a ConfigMap named like the Redis")
		env.MustKubectl(ctx, "create", "configmap", "cache", "-n", ns)
		cmUID, err := env.JSONPath(ctx, ns, "configmap/cache", "{.metadata.uid}")
		Expect(err).NotTo(HaveOccurred())
		_, err = env.Apply(ctx, `apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Pod
  metadata:
    name: loner
    namespace: `+ns+`
  spec:
    containers: [{name: main, image: busybox}]
- apiVersion: v1
  kind: Pod
  metadata:
    name: cache-config-user
    namespace: `+ns+`
    ownerReferences:
    - {apiVersion: v1, kind: ConfigMap, name: cache, uid: `+cmUID+`, controller: true}
  spec:
    containers: [{name: main, image: busybox}]
`)
		Expect(err).NotTo(HaveOccurred())
		before := settledReconcileTotal(ctx)

		env.MustKubectl(ctx, "delete", "pod", "loner", "cache-config-user", "-n", ns)

		Consistently(env.Operator.ReconcileTotal).WithContext(ctx).Should(Equal(before),
			"deleting a pod that no Redis controls triggered a reconcile")
	})
})
