//go:build e2e

package chapter09

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"example.com/redis-operator/tests/framework"
)

// The behaviour of the chapters before, with the operator deployed.

var _ = Describe("A pod deleted with kubectl, with the operator deployed", func() {
	It("comes back with the same name, a new UID, and runs", func(ctx SpecContext) {
		ns := env.NewNamespace(ctx)
		env.CreateRedis(ctx, ns, "cache", 3)
		env.ExpectPodComesBack(ctx, ns)
	})
})

// What chapter 9 changes.

var _ = Describe("The operator's two replicas", Serial, func() {
	var ns string

	BeforeEach(func(ctx SpecContext) {
		ns = env.NewNamespace(ctx)
	})

	It("are one leader, which holds the Lease and reconciles, and one standby, which reconciles nothing", func(ctx SpecContext) {
		env.ExpectOneLeaderOthersIdle(ctx, ns)
	})

	It("hand over within seconds when the leader gets SIGTERM: it releases the Lease; a pod deleted meanwhile is rebuilt", framework.Lesson, func(ctx SpecContext) {
		env.CreateRedis(ctx, ns, "cache", 3)
		takeover, _ := env.ExpectHandover(ctx, ns, false,
			"the leader gets SIGTERM; another replica holds the Lease within "+framework.GracefulTakeoverLimit.String())
		Expect(takeover).To(BeNumerically("<", framework.GracefulTakeoverLimit),
			"the handover waited for the Lease to expire: the leader did not release it")
	})

	It("take over when the leader is killed (SIGKILL), once the Lease expires; a pod deleted meanwhile is rebuilt", func(ctx SpecContext) {
		env.CreateRedis(ctx, ns, "cache", 3)
		takeover, lease := env.ExpectHandover(ctx, ns, true,
			"the leader gets SIGKILL; another replica holds the Lease once it has expired")
		duration := time.Duration(*lease.Spec.LeaseDurationSeconds) * time.Second
		Expect(takeover).To(BeNumerically(">", duration-framework.KilledTakeoverEarliest),
			"a replica took the Lease before it expired")
		Expect(takeover).To(BeNumerically("<", duration+framework.KilledTakeoverLatest),
			"no replica took the Lease within its duration and two tries")
	})
})

var _ = Describe("The operator's metrics", Serial, func() {
	It("are served over HTTPS to metrics readers only: 401 without a token, 403 to others", framework.Lesson, func(ctx SpecContext) {
		env.ExpectMetricsNeedToken(ctx, env.NewNamespace(ctx))
	})
})

var _ = Describe("The operator's credentials", Serial, func() {
	It("are a projected, expiring ServiceAccount token that the kubelet mounts, not a Secret", func(ctx SpecContext) {
		env.ExpectProjectedToken(ctx)
	})
})

var _ = Describe("make undeploy", Serial, func() {
	It("keeps the CRD, every Redis and its pods; make deploy brings back an operator that looks after them", func(ctx SpecContext) {
		env.ExpectUndeployKeepsRedis(ctx, env.NewNamespace(ctx))
	})
})
