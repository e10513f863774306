//go:build e2e

package chapter02

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	myappv1 "example.com/redis-operator/api/v1"
	"example.com/redis-operator/tests/framework"
)

var _ = Describe("A Redis", func() {
	var ns string

	BeforeEach(func(ctx SpecContext) {
		ns = env.NewNamespace(ctx)
		env.CreateRedis(ctx, ns, "cache", 3)
	})

	It("records each of its pods as a domain-qualified finalizer", framework.Lesson, func(ctx SpecContext) {
		framework.LessonStep("the Redis carries one finalizer per pod")
		framework.DecidingCheck("the Redis' finalizers are myapp.example.com/ and the name of each of its pods", func() {
			Eventually(env.Finalizers).WithContext(ctx).WithArguments(ns, "cache").Should(ConsistOf(
				"myapp.example.com/cache-0", "myapp.example.com/cache-1", "myapp.example.com/cache-2"),
				"the Redis does not record its pods as finalizers")
		})
	})

	It("takes its pods with it when deleted", framework.Lesson, func(ctx SpecContext) {
		framework.LessonStep("deleting the Redis deletes its pods, then the Redis goes")
		env.MustKubectl(ctx, "delete", "redis", "cache", "-n", ns, "--wait=false")

		framework.DecidingCheck("the Redis goes", func() {
			env.ExpectGone(ctx, &myappv1.Redis{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cache"}})
		})
		framework.DecidingCheck("once the Redis is gone, none of its pods is left", func() {
			Eventually(env.PodNamesFunc(ctx, ns, "cache")).WithContext(ctx).Should(BeEmpty(), "the pods were not deleted with their Redis")
		})
	})

	// Not a lesson spec: chapter 1 has no finalizer, so its Redis goes at
	// once whatever happened to its pods, and the one red it can show is
	// the spec before's (the pods stay). Its mutant
	// (chapters/02-finalizer-tracking/mutants/notfound-is-an-error.patch)
	// is a delete loop that returns the pod's NotFound error, as the
	// original code did: the Redis stays in Terminating.
	It("is deleted even when one of its pods was deleted first", func(ctx SpecContext) {
		Eventually(env.Finalizers).WithContext(ctx).WithArguments(ns, "cache").Should(HaveLen(3), "the Redis does not record its pods")
		By("deleting cache-1 first")
		env.MustKubectl(ctx, "delete", "pod", "cache-1", "-n", ns)
		env.ExpectGone(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cache-1"}})

		By("deleting the Redis: it goes, and its other pods with it")
		env.MustKubectl(ctx, "delete", "redis", "cache", "-n", ns, "--wait=false")

		framework.DecidingCheck("the Redis goes, and none of its pods is left", func() {
			env.ExpectGone(ctx, &myappv1.Redis{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cache"}})
			Eventually(env.PodNamesFunc(ctx, ns, "cache")).WithContext(ctx).Should(BeEmpty(), "the pods were not deleted with their Redis")
		})
	})

	It("does not get back a pod deleted with kubectl, even when reconciled (the limitation chapter 5 fixes)", func(ctx SpecContext) {
		Eventually(env.Finalizers).WithContext(ctx).WithArguments(ns, "cache").Should(HaveLen(3))

		By("deleting cache-0, then touching the Redis so that the operator reconciles it after the delete")
		env.DeletePodAndExpectNoRebuild(ctx, ns, "cache-0", func() { env.TouchRedis(ctx, ns, "cache") })

		By("the finalizer still records the pod that is gone: creation trusts it")
		Expect(env.Finalizers(ctx, ns, "cache")).To(ContainElement("myapp.example.com/cache-0"))
	})
})
