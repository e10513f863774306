package chapter02

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("A Redis", func() {
	var ns string

	BeforeEach(func(ctx SpecContext) {
		ns = env.NewNamespace(ctx)
		env.CreateRedis(ctx, ns, "cache", 3)
	})

	It("records each of its pods as a domain-qualified finalizer", func(ctx SpecContext) {
		Eventually(env.Finalizers).WithContext(ctx).WithArguments(ns, "redis/cache").Should(ConsistOf(
			"myapp.example.com/cache-0", "myapp.example.com/cache-1", "myapp.example.com/cache-2"))
	})

	It("takes its pods with it when deleted", func(ctx SpecContext) {
		env.MustKubectl(ctx, "delete", "redis", "cache", "-n", ns, "--wait=false")

		env.ExpectGone(ctx, ns, "redis/cache")
		Eventually(env.PodNamesFunc(ctx, ns, "cache")).WithContext(ctx).Should(BeEmpty())
	})

	It("is deleted even when one of its pods was deleted first", func(ctx SpecContext) {
		// The original code returned the pod's NotFound error from its
		// delete loop, so this Redis stayed Terminating forever.
		Eventually(env.Finalizers).WithContext(ctx).WithArguments(ns, "redis/cache").Should(HaveLen(3))
		env.MustKubectl(ctx, "delete", "pod", "cache-1", "-n", ns)

		env.MustKubectl(ctx, "delete", "redis", "cache", "-n", ns, "--wait=false")

		env.ExpectGone(ctx, ns, "redis/cache")
		Eventually(env.PodNamesFunc(ctx, ns, "cache")).WithContext(ctx).Should(BeEmpty())
	})

	It("does not get back a pod deleted with kubectl (the limitation chapter 5 fixes)", func(ctx SpecContext) {
		Eventually(env.Finalizers).WithContext(ctx).WithArguments(ns, "redis/cache").Should(HaveLen(3))

		env.DeletePodAndExpectNoRebuild(ctx, ns, "cache-0")

		By("the finalizer still records the pod that is gone")
		Expect(env.Finalizers(ctx, ns, "redis/cache")).To(ContainElement("myapp.example.com/cache-0"))
	})
})
