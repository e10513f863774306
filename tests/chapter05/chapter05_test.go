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
		Eventually(env.Finalizers).WithContext(ctx).WithArguments(ns, "redis/cache").Should(HaveLen(3))
	})

	It("comes back with the same name, a new UID, and runs", func(ctx SpecContext) {
		uids := env.PodUIDs(ctx, ns, "cache")

		env.MustKubectl(ctx, "delete", "pod", "cache-1", "-n", ns)

		env.ExpectRebuilt(ctx, ns, "cache-1", uids["cache-1"])
		after := env.PodUIDs(ctx, ns, "cache")
		Expect(after).To(HaveKeyWithValue("cache-0", uids["cache-0"]), "an untouched pod was replaced")
		Expect(after).To(HaveKeyWithValue("cache-2", uids["cache-2"]), "an untouched pod was replaced")
		Eventually(env.EventReasons).WithContext(ctx).WithArguments(ns, "Redis", "cache").
			Should(ContainElement("SuccessfulRebuild"))
	})

	DescribeTable("comes back also when deleted together with others",
		func(ctx SpecContext, deleteArgs ...string) {
			uids := env.PodUIDs(ctx, ns, "cache")

			env.MustKubectl(ctx, append(deleteArgs, "-n", ns)...)

			for _, name := range framework.PodNames("cache", 3) {
				env.ExpectRebuilt(ctx, ns, name, uids[name])
			}
		},
		Entry("by name", "delete", "pod", "cache-0", "cache-1", "cache-2"),
		Entry("by label", "delete", "pods", "-l", "app.kubernetes.io/instance=cache"),
		Entry("forced, without grace period", "delete", "pod", "cache-0", "cache-1", "cache-2", "--force", "--grace-period=0"),
	)

	It("leaves one finalizer per pod, however often it is rebuilt", func(ctx SpecContext) {
		for round := 0; round < 3; round++ {
			uid := env.PodUIDs(ctx, ns, "cache")["cache-0"]
			env.MustKubectl(ctx, "delete", "pod", "cache-0", "-n", ns)
			env.ExpectRebuilt(ctx, ns, "cache-0", uid)
		}

		Consistently(env.Finalizers).WithContext(ctx).WithArguments(ns, "redis/cache").Should(ConsistOf(
			"myapp.example.com/cache-0", "myapp.example.com/cache-1", "myapp.example.com/cache-2"))
	})

	It("does not stop the Redis from being deleted, leaving nothing behind", func(ctx SpecContext) {
		uid := env.PodUIDs(ctx, ns, "cache")["cache-2"]
		env.MustKubectl(ctx, "delete", "pod", "cache-2", "-n", ns)
		env.ExpectRebuilt(ctx, ns, "cache-2", uid)

		env.MustKubectl(ctx, "delete", "redis", "cache", "-n", ns, "--wait=false")

		env.ExpectGone(ctx, ns, "redis/cache")
		Eventually(env.PodNamesFunc(ctx, ns, "cache")).WithContext(ctx).Should(BeEmpty())
		Consistently(env.PodNamesFunc(ctx, ns, "cache")).WithContext(ctx).Should(BeEmpty(), "a pod was rebuilt after its Redis went")
	})
})
