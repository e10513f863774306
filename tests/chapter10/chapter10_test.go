//go:build e2e

package chapter10

import (
	. "github.com/onsi/ginkgo/v2"

	"example.com/redis-operator/tests/framework"
)

// The behaviour of the chapters before, with the webhook in the way of
// every create and update.

var _ = Describe("A pod deleted with kubectl, with the operator and its webhook deployed", func() {
	It("comes back with the same name, a new UID, and runs", func(ctx SpecContext) {
		ns := env.NewNamespace(ctx)
		env.CreateRedis(ctx, ns, "cache", 3)
		env.ExpectPodComesBack(ctx, ns)
	})
})

// What chapter 10 changes.

var _ = Describe("The CRD's CEL rules", func() {
	It("refuse a bad image and a change of image, each with a message that says what to fix", framework.Lesson, func(ctx SpecContext) {
		env.ExpectCELRulesRefuse(ctx, env.NewNamespace(ctx))
	})
})

var _ = Describe("The validating webhook", func() {
	It("refuses a Redis whose pod names other pods hold, naming them, and warns when a Redis grows into one", framework.Lesson, func(ctx SpecContext) {
		env.ExpectWebhookRefusesCollision(ctx, env.NewNamespace(ctx))
	})

	It("keeps answering while its certificate is rotated, and serves the new one with no restart", Serial, framework.Lesson, func(ctx SpecContext) {
		env.ExpectCertRotation(ctx, env.NewNamespace(ctx))
	})

	It("when no replica answers, lets creates through (failurePolicy Ignore); with Fail, blocks creates and updates but never a delete", Serial, framework.Lesson, func(ctx SpecContext) {
		env.ExpectDownWebhook(ctx, env.NewNamespace(ctx))
	})
})

var _ = Describe("A webhook that hangs", Serial, func() {
	It("holds a create for its timeoutSeconds, no more, and then lets it through (failurePolicy Ignore)", func(ctx SpecContext) {
		env.ExpectHungWebhook(ctx, env.NewNamespace(ctx))
	})
})
