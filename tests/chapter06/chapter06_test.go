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
	})

	It("forgets the pods it scales down", framework.Lesson, func(ctx SpecContext) {
		env.MustKubectl(ctx, "scale", "redis/cache", "--replicas=1", "-n", ns)
		Eventually(env.PodNamesFunc(ctx, ns, "cache")).WithContext(ctx).Should(Equal([]string{"cache-0"}))
		Eventually(env.Finalizers).WithContext(ctx).WithArguments(ns, "cache").Should(ConsistOf(myappv1.GroupName + "/cache-0"))
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

	It("follows a scale-down, and becomes Available again", framework.Lesson, func(ctx SpecContext) {
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
