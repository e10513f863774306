//go:build e2e

package chapter06

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	myappv1 "example.com/redis-operator/api/v1"
	"example.com/redis-operator/tests/framework"
)

var _ = Describe("kubectl scale", func() {
	var ns string

	BeforeEach(func(ctx SpecContext) {
		ns = env.NewNamespace(ctx)
		env.CreateRedis(ctx, ns, "cache", 3)
		Eventually(env.Finalizers).WithContext(ctx).WithArguments(ns, "cache").Should(HaveLen(3))
	})

	It("deletes the highest pods going down, and creates new ones going up", framework.Lesson, func(ctx SpecContext) {
		env.ExpectScaleDownAndUp(ctx, ns)
		Eventually(env.Finalizers).WithContext(ctx).WithArguments(ns, "cache").Should(HaveLen(4))

		By("the pods that the scale-up created again are not called rebuilt")
		Eventually(env.EventNotes).WithContext(ctx).WithArguments(ns, "Redis", "cache").
			Should(ContainElement("SuccessfulCreate: Created pod cache-3"))
		Consistently(env.EventNotes).WithContext(ctx).WithArguments(ns, "Redis", "cache").
			ShouldNot(ContainElement(HavePrefix("SuccessfulRebuild")), "a pod created by a scale-up was called a rebuild")
	})

	It("forgets the pods beyond its replicas once they are gone", framework.Lesson, func(ctx SpecContext) {
		// Whoever deletes them: chapter 5 does not scale down, so the
		// setup deletes what is still there by hand; chapter 6 has
		// usually deleted them first.
		By("scaling down to 1, and deleting cache-1 and cache-2 if they are still there")
		env.MustKubectl(ctx, "scale", "redis/cache", "--replicas=1", "-n", ns)
		env.MustKubectl(ctx, "delete", "pod", "cache-1", "cache-2", "-n", ns, "--ignore-not-found")
		Eventually(env.PodNamesFunc(ctx, ns, "cache")).WithContext(ctx).Should(Equal([]string{"cache-0"}))

		framework.LessonStep("the Redis records only cache-0")
		Eventually(env.Finalizers).WithContext(ctx).WithArguments(ns, "cache").Should(ConsistOf(myappv1.GroupName+"/cache-0"),
			"the Redis still records the pods beyond its replicas")
	})
})

var _ = Describe("A Redis' status", func() {
	var ns string

	BeforeEach(func(ctx SpecContext) {
		ns = env.NewNamespace(ctx)
		env.CreateRedis(ctx, ns, "cache", 3)
	})

	It("counts the ready pods, is Available once all are, and shows in kubectl get", framework.Lesson, func(ctx SpecContext) {
		env.ExpectStatusShowsReadyPods(ctx, ns)
	})

	// Not a lesson spec: chapter 5 has no status, so the one red it can
	// show is the spec before's. It was checked by breaking it once: a
	// status that keeps the generation it first observed fails it.
	It("follows a scale-down, and becomes Available again", func(ctx SpecContext) {
		env.ExpectStatusFollowsScaleDown(ctx, ns)
	})

	It("is not written while nothing changes: reconciling a steady Redis sends no write", func(ctx SpecContext) {
		env.ExpectNoWriteWhenSteady(ctx, ns)
	})
})

var _ = Describe("A pod", func() {
	var ns string

	BeforeEach(func(ctx SpecContext) {
		ns = env.NewNamespace(ctx)
		env.CreateRedis(ctx, ns, "cache", 3)
		Eventually(env.Finalizers).WithContext(ctx).WithArguments(ns, "cache").Should(HaveLen(3))
	})

	It("that ended (phase Failed, as after an eviction) is replaced", framework.Lesson, func(ctx SpecContext) {
		env.ExpectEndedPodReplaced(ctx, ns)
	})

	It("deleted with kubectl comes back with the same name, a new UID, and runs, and the operator says it rebuilt it", func(ctx SpecContext) {
		env.ExpectPodComesBack(ctx, ns)
		Eventually(env.EventReasons).WithContext(ctx).WithArguments(ns, "Redis", "cache").
			Should(ContainElement("SuccessfulRebuild"))
	})
})

var _ = Describe("A Redis", func() {
	It("leaves alone, when deleted, a pod that took a recorded name and that it does not control", func(ctx SpecContext) {
		env.ExpectForeignPodSurvivesRedisDeletion(ctx, env.NewNamespace(ctx))
	})
})
