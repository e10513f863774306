//go:build e2e

package chapter07

import (
	. "github.com/onsi/ginkgo/v2"

	"example.com/redis-operator/tests/framework"
)

// The behaviour of chapters 5 and 6, unchanged.

var _ = Describe("A pod deleted with kubectl", func() {
	var ns string

	BeforeEach(func(ctx SpecContext) {
		ns = env.NewNamespace(ctx)
		env.CreateRedis(ctx, ns, "cache", 3)
	})

	It("comes back with the same name, a new UID, and runs", func(ctx SpecContext) {
		env.ExpectPodComesBack(ctx, ns)
	})

	DescribeTable("comes back also when deleted together with others, without a reconcile error",
		func(ctx SpecContext, deleteArgs ...string) {
			env.ExpectPodsComeBackTogether(ctx, ns, deleteArgs...)
		},
		Entry("by name", "delete", "pod", "cache-0", "cache-1", "cache-2"),
		Entry("by label", "delete", "pods", "-l", "app.kubernetes.io/instance=cache"),
		Entry("forced, without grace period", "delete", "pod", "cache-0", "cache-1", "cache-2", "--force", "--grace-period=0"),
	)

	It("comes back each time it is deleted", func(ctx SpecContext) {
		env.ExpectPodComesBackEachTime(ctx, ns)
	})

	It("does not stop the Redis from being deleted, leaving nothing behind", func(ctx SpecContext) {
		env.ExpectRedisDeletionLeavesNothing(ctx, ns)
	})
})

var _ = Describe("kubectl scale", func() {
	It("deletes the highest pods going down, and creates new ones going up", func(ctx SpecContext) {
		ns := env.NewNamespace(ctx)
		env.CreateRedis(ctx, ns, "cache", 3)
		env.ExpectScaleDownAndUp(ctx, ns)
	})
})

var _ = Describe("A Redis' status", func() {
	var ns string

	BeforeEach(func(ctx SpecContext) {
		ns = env.NewNamespace(ctx)
		env.CreateRedis(ctx, ns, "cache", 3)
	})

	It("counts the ready pods, is Available once all are, and shows in kubectl get", func(ctx SpecContext) {
		env.ExpectStatusShowsReadyPods(ctx, ns)
	})

	It("follows a scale-down, and becomes Available again", func(ctx SpecContext) {
		env.ExpectStatusFollowsScaleDown(ctx, ns)
	})

	It("is not written while nothing changes: reconciling a steady Redis sends no write", func(ctx SpecContext) {
		env.ExpectNoWriteWhenSteady(ctx, ns)
	})
})

var _ = Describe("A pod that ended (phase Failed, as after an eviction)", func() {
	It("is replaced", func(ctx SpecContext) {
		ns := env.NewNamespace(ctx)
		env.CreateRedis(ctx, ns, "cache", 3)
		env.ExpectEndedPodReplaced(ctx, ns)
	})
})

var _ = Describe("A Redis", func() {
	It("leaves alone, when deleted, a pod that took the name of one of its pods and that it does not control", func(ctx SpecContext) {
		env.ExpectForeignPodSurvivesRedisDeletion(ctx, env.NewNamespace(ctx))
	})
})

// What chapter 7 changes.

var _ = Describe("A Redis, with chapter 7", func() {
	var ns string

	BeforeEach(func(ctx SpecContext) {
		ns = env.NewNamespace(ctx)
		env.CreateRedis(ctx, ns, "cache", 3)
	})

	It("carries no finalizer, and its pods go with it through the garbage collector", framework.Lesson, func(ctx SpecContext) {
		env.ExpectNoFinalizerPodsGoWithRedis(ctx, ns)
	})

	It("left by chapter 6 with a finalizer per pod loses them, keeps its pods, and still deletes cleanly", framework.Lesson, func(ctx SpecContext) {
		env.ExpectLegacyFinalizersRemoved(ctx, ns)
	})

	It("deleted while it still carries chapter 6's finalizers does not stay in Terminating", func(ctx SpecContext) {
		env.ExpectDeletedWithLegacyFinalizersGoes(ctx, ns)
	})
})
