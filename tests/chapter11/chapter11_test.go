//go:build e2e

package chapter11

import (
	. "github.com/onsi/ginkgo/v2"

	"example.com/redis-operator/tests/framework"
)

var _ = Describe("The operator crashed right after each of its writes in turn", Serial, func() {
	It("ends every step of the scenario as the run without a crash does", framework.Lesson, framework.CrashSweep, func(ctx SpecContext) {
		env.ExpectCrashSweep(ctx)
	})
})

var _ = Describe("The operator stopped while a Redis changes three times", Serial, func() {
	It("acts, once started, on the last state only", func(ctx SpecContext) {
		env.ExpectLastStateOnly(ctx, env.NewNamespace(ctx))
	})
})

var _ = Describe("A cache that is behind", Serial, func() {
	It("cannot make the operator delete a pod that took the name of one of its own: the UID precondition refuses it", framework.Lesson, func(ctx SpecContext) {
		env.ExpectStaleCacheSparesForeignPod(ctx, env.NewNamespace(ctx))
	})
})

var _ = Describe("Writes answered with 409 Conflict", Serial, func() {
	It("are made again until the scenario ends as the run without faults does", framework.Lesson, func(ctx SpecContext) {
		env.ExpectConvergesThroughConflicts(ctx, env.NewNamespace(ctx))
	})
})

var _ = Describe("The API server stopped and started again", Serial, framework.RestartsAPIServer, func() {
	It("does not end an operator without leader election: its watches reconnect, and it acts on what changed", func(ctx SpecContext) {
		env.ExpectRecoversFromAPIServerRestart(ctx, env.NewNamespace(ctx), false)
	})
	It("makes an operator with leader election give up its Lease and exit; restarted, it takes the Lease over and acts", func(ctx SpecContext) {
		env.ExpectRecoversFromAPIServerRestart(ctx, env.NewNamespace(ctx), true)
	})
})
