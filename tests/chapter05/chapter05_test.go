package chapter05

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	myappv1 "example.com/redis-operator/api/v1"
	"example.com/redis-operator/tests/framework"
)

var _ = Describe("A pod deleted with kubectl", func() {
	var ns string

	BeforeEach(func(ctx SpecContext) {
		ns = env.NewNamespace(ctx)
		env.CreateRedis(ctx, ns, "cache", 3)
		Eventually(env.Finalizers).WithContext(ctx).WithArguments(ns, "cache").Should(HaveLen(3))
	})

	It("comes back with the same name, a new UID, and runs", framework.Lesson, func(ctx SpecContext) {
		env.ExpectPodComesBack(ctx, ns)
	})

	DescribeTable("comes back also when deleted together with others, without a reconcile error",
		func(ctx SpecContext, deleteArgs ...string) {
			uids := env.PodUIDs(ctx, ns, "cache")
			log := env.Operator.LogOffset()

			env.MustKubectl(ctx, append(deleteArgs, "-n", ns)...)

			for _, name := range framework.PodNames("cache", 3) {
				env.ExpectRebuilt(ctx, ns, name, uids[name])
			}
			// Many delete events in a row are where a reconcile meets a
			// cache that has not yet seen the pod it created a moment ago.
			Expect(env.Operator.LogSince(log)).NotTo(ContainSubstring("Reconciler error"))
		},
		Entry("by name", framework.Lesson, "delete", "pod", "cache-0", "cache-1", "cache-2"),
		Entry("by label", framework.Lesson, "delete", "pods", "-l", "app.kubernetes.io/instance=cache"),
		Entry("forced, without grace period", framework.Lesson, "delete", "pod", "cache-0", "cache-1", "cache-2", "--force", "--grace-period=0"),
	)

	It("comes back each time it is deleted, still recorded by one finalizer", framework.Lesson, func(ctx SpecContext) {
		for round := 0; round < 3; round++ {
			uid := env.PodUIDs(ctx, ns, "cache")["cache-0"]
			env.MustKubectl(ctx, "delete", "pod", "cache-0", "-n", ns)
			env.ExpectRebuilt(ctx, ns, "cache-0", uid)
		}

		Expect(env.Finalizers(ctx, ns, "cache")).To(ConsistOf(
			"myapp.example.com/cache-0", "myapp.example.com/cache-1", "myapp.example.com/cache-2"))
	})

	It("does not stop the Redis from being deleted, leaving nothing behind", framework.Lesson, func(ctx SpecContext) {
		uid := env.PodUIDs(ctx, ns, "cache")["cache-2"]
		env.MustKubectl(ctx, "delete", "pod", "cache-2", "-n", ns)
		env.ExpectRebuilt(ctx, ns, "cache-2", uid)

		env.MustKubectl(ctx, "delete", "redis", "cache", "-n", ns, "--wait=false")

		env.ExpectGone(ctx, &myappv1.Redis{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cache"}})
		Eventually(env.PodNamesFunc(ctx, ns, "cache")).WithContext(ctx).Should(BeEmpty())
		Consistently(env.PodNamesFunc(ctx, ns, "cache")).WithContext(ctx).Should(BeEmpty(), "a pod was rebuilt after its Redis went")
	})
})

var _ = Describe("A Redis", func() {
	It("leaves alone, when deleted, a pod that took a recorded name and that it does not control", func(ctx SpecContext) {
		env.ExpectForeignPodSurvivesRedisDeletion(ctx, env.NewNamespace(ctx))
	})
})
