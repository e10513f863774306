//go:build e2e

package chapter08

import (
	. "github.com/onsi/ginkgo/v2"

	"example.com/redis-operator/tests/framework"
)

// The behaviour of chapters 3, 5, 6 and 7, unchanged.
var (
	_ = framework.RebuildSpec(framework.SpecInput{Env: env})
	_ = framework.ScaleSpec(framework.SpecInput{Env: env})
	_ = framework.StatusSpec(framework.SpecInput{Env: env})
	_ = framework.EndedPodSpec(framework.SpecInput{Env: env})
	_ = framework.ForeignPodSpec(framework.SpecInput{Env: env})
	_ = framework.NoFinalizerSpec(framework.SpecInput{Env: env})
)

// What chapter 8 changes.

var _ = Describe("The operator, with chapter 8", func() {
	It("reconciles several Redis objects at once, up to 4 by default, and never one twice at once", Serial, framework.Lesson, func(ctx SpecContext) {
		env.ExpectConcurrentReconciles(ctx)
	})

	It("does not cache or watch pods that it did not create", Serial, framework.Lesson, func(ctx SpecContext) {
		ns := env.NewNamespace(ctx)
		env.CreateRedis(ctx, ns, "cache", 1)
		env.ExpectPodOutsideCacheIgnored(ctx, ns)
	})

	It("creates a deleted pod again before it reconciles the new Redis objects waiting in its queue", Serial, framework.Lesson, func(ctx SpecContext) {
		ns := env.NewNamespace(ctx)
		env.CreateRedis(ctx, ns, "cache", 1)
		env.ExpectRebuildGoesFirst(ctx, ns)
	})
})

var _ = Describe("A pod, with chapter 8", func() {
	It("that lost the operator's labels gets them back, the same pod", func(ctx SpecContext) {
		ns := env.NewNamespace(ctx)
		env.CreateRedis(ctx, ns, "cache", 3)
		env.ExpectLabelsRestored(ctx, ns)
	})
})
