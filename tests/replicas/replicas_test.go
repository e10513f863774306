//go:build e2e

// Package replicas is the framework's own suite about several replicas of
// one operator at once (framework.StartReplicas): each its own process,
// log, identity and death check, and which replica did what read from
// them. It runs the first chapter of the table that elects a leader (the
// first that runs in the cluster), on the host.
package replicas

import (
	"syscall"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"example.com/redis-operator/chapters"
	"example.com/redis-operator/tests/framework"
)

// leaderElection is the first chapter whose operator elects a leader.
var leaderElection, _ = chapters.First(func(c chapters.Chapter) bool { return c.InCluster })

var env = framework.NewReplicasSuite(leaderElection.Number, "The framework: several replicas of one operator at once")

func TestReplicas(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, env.Description(), env.Labels())
}

// leaderArgs are the flags of each replica: leader election, with its
// Lease where a pod's would be.
var leaderArgs = []string{"--leader-elect", "--leader-election-namespace=" + framework.OperatorNamespace}

var _ = Describe("Three replicas of the operator with leader election", Serial, func() {
	It("elect one leader, which reconciles; the two others wait for the Lease, and reconcile nothing", func(ctx SpecContext) {
		rs := env.StartReplicas(ctx, 3, leaderArgs...)

		By("waiting until one replica logs that it acquired the Lease")
		Eventually(func() []*framework.Operator { return rs.Logged(framework.AcquiredLease) }).WithContext(ctx).Should(HaveLen(1))
		leader := rs.Logged(framework.AcquiredLease)[0]

		By("creating a Redis: the leader's log, and no other's, shows its reconciles")
		ns := env.NewNamespace(ctx)
		env.CreateRedis(ctx, ns, "cache", 2)
		env.ExpectPodsRun(ctx, ns, "cache", 2)
		Expect(leader.ReconcilesSince(0)).NotTo(BeEmpty(), "the leader, %s, logged no reconcile", leader.Name)
		Consistently(func() []*framework.Operator { return rs.Logged(framework.AcquiredLease) }).WithContext(ctx).
			Should(ConsistOf(leader), "a second replica acquired the Lease")
		for _, r := range rs.All {
			if r == leader {
				continue
			}
			Expect(r.LogSince(0)).To(ContainSubstring(framework.StandbyMessage), "%s does not wait for the Lease", r.Name)
			Expect(r.ReconcilesSince(0)).To(BeEmpty(), "%s reconciled without the Lease", r.Name)
		}
		Expect(rs.Running()).To(HaveLen(3))
	})

	It("sees exactly the replica that dies: one killed on purpose is no death, one that exits unasked is, and only it", func(ctx SpecContext) {
		rs := env.StartReplicas(ctx, 3, leaderArgs...)
		first, second, third := rs.All[0], rs.All[1], rs.All[2]

		By("killing " + second.Name + " (SIGKILL, asked)")
		Expect(second.Kill()).To(Succeed())
		Expect(rs.Running()).To(Equal([]*framework.Operator{first, third}))
		Expect(rs.Deaths("after the kill")).To(BeEmpty(), "a replica killed on purpose was taken for a death")

		By("ending " + third.Name + "'s process from outside (SIGKILL, unasked)")
		Expect(third.Signal(syscall.SIGKILL)).To(Succeed())
		Eventually(rs.Running).WithContext(ctx).Should(Equal([]*framework.Operator{first}))
		deaths := rs.Deaths("after the signal")
		Expect(deaths).To(HaveLen(1))
		Expect(deaths[0]).To(ContainSubstring("(" + third.Name + ") exited by itself"))

		By("starting " + third.Name + " again, so that the spec's own death check passes")
		Expect(third.Start(ctx)).To(Succeed())
		Expect(rs.Deaths("after the restart")).To(BeEmpty())
	})
})
