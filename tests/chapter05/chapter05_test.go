//go:build e2e

package chapter05

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"example.com/redis-operator/tests/framework"
)

var _ = Describe("A pod deleted with kubectl", func() {
	var ns string

	BeforeEach(func(ctx SpecContext) {
		ns = env.NewNamespace(ctx)
		env.CreateRedis(ctx, ns, "cache", 3)
		Eventually(env.Finalizers).WithContext(ctx).WithArguments(ns, "cache").Should(HaveLen(3))
	})

	It("comes back with the same name, a new UID, and runs, and the operator says it rebuilt it", framework.Lesson, func(ctx SpecContext) {
		env.ExpectPodComesBack(ctx, ns)
		Eventually(env.EventReasons).WithContext(ctx).WithArguments(ns, "Redis", "cache").
			Should(ContainElement("SuccessfulRebuild"))
	})

	DescribeTable("comes back also when deleted together with others, without a reconcile error",
		func(ctx SpecContext, deleteArgs ...string) {
			env.ExpectPodsComeBackTogether(ctx, ns, deleteArgs...)
		},
		Entry("by name", framework.Lesson, "delete", "pod", "cache-0", "cache-1", "cache-2"),
		Entry("by label", framework.Lesson, "delete", "pods", "-l", "app.kubernetes.io/instance=cache"),
		Entry("forced, without grace period", framework.Lesson, "delete", "pod", "cache-0", "cache-1", "cache-2", "--force", "--grace-period=0"),
	)

	It("comes back each time it is deleted, still recorded by one finalizer", framework.Lesson, func(ctx SpecContext) {
		env.ExpectPodComesBackEachTime(ctx, ns)

		Expect(env.Finalizers(ctx, ns, "cache")).To(ConsistOf(
			"myapp.example.com/cache-0", "myapp.example.com/cache-1", "myapp.example.com/cache-2"))
	})

	// Not a lesson spec: chapter 4 rebuilds nothing, so its Redis deletes
	// cleanly too, and the spec fails against it only because no pod comes
	// back. It was checked by breaking it once: a delete that also runs
	// the create loop (a pod rebuilt while its Redis goes) fails it.
	It("does not stop the Redis from being deleted, leaving nothing behind", func(ctx SpecContext) {
		env.ExpectRedisDeletionLeavesNothing(ctx, ns)
	})
})

var _ = Describe("A Redis", func() {
	It("leaves alone, when deleted, a pod that took a recorded name and that it does not control", func(ctx SpecContext) {
		env.ExpectForeignPodSurvivesRedisDeletion(ctx, env.NewNamespace(ctx))
	})
})
