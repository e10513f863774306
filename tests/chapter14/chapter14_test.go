//go:build e2e

package chapter14

import (
	"context"
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"example.com/redis-operator/tests/framework"
)

var _ = Describe("The API server stopped and started again", Serial, framework.RestartsAPIServer, func() {
	It("does not end an operator without leader election: its watches reconnect, and it acts on what changed", framework.Lesson, func(ctx SpecContext) {
		expectRecoversFromAPIServerRestart(ctx, env.NewNamespace(ctx), false)
	})
	It("makes an operator with leader election give up its Lease and exit; restarted, it takes the Lease over and acts", framework.Lesson, func(ctx SpecContext) {
		expectRecoversFromAPIServerRestart(ctx, env.NewNamespace(ctx), true)
	})
})

// The operator's leader election, as its main's flags and
// controller-runtime's defaults set it: a leader that cannot renew its
// Lease for renewDeadline gives it up and exits, and a new process takes
// over a Lease that nobody released once it has seen it unchanged for
// leaseDuration.
const (
	renewDeadline = 10 * time.Second
	leaseDuration = 15 * time.Second
)

// kubeletBackOff is how much later than usual a kubelet may see a pod's
// delete made right after the API server answers again: its watch, cut
// meanwhile, is tried again with a back-off that reaches 30 s, jittered
// up to twice that.
const kubeletBackOff = time.Minute

// leaderElectArgs are the operator's flags for leader election on the
// host, where it has no namespace of its own to keep its Lease in.
var leaderElectArgs = []string{"--leader-elect", "--leader-election-namespace=" + framework.OperatorNamespace}

// APIServerRestart is what expectRecoversFromAPIServerRestart measured,
// printed in the report.
type APIServerRestart struct {
	LeaderElection bool
	// Down is from the stop asked to the API server answering again.
	Down time.Duration
	// LeaseLost is from the stop asked to the operator's exit, with
	// leader election.
	LeaseLost time.Duration
	// Exits counts the operator's exits and failed starts.
	Exits int
	// Rebuilt is from the API server answering again to a pod deleted
	// then made again and running, and the status saying so; Scaled is
	// how long a scale-up takes after that.
	Rebuilt, Scaled time.Duration
}

func (r APIServerRestart) String() string {
	recovery := fmt.Sprintf("once it answered, a pod deleted was back in %.1fs, then a scale to 5 took %.1fs", r.Rebuilt.Seconds(), r.Scaled.Seconds())
	if !r.LeaderElection {
		return fmt.Sprintf("API server restart, no leader election: down %.1fs; the operator stayed up (%d exits); %s",
			r.Down.Seconds(), r.Exits, recovery)
	}
	return fmt.Sprintf("API server restart, leader election: down %.1fs; the operator lost its Lease and exited %.1fs after the stop (%d exits and failed starts in all), and was restarted; %s",
		r.Down.Seconds(), r.LeaseLost.Seconds(), r.Exits, recovery)
}

// expectRecoversFromAPIServerRestart runs a Redis of 3, stops the
// cluster's API server and starts it again, then at once deletes a pod,
// and once it is back scales the Redis to 5; the operator must leave the
// other pods alone. Without leader election, nothing ends the operator:
// it must live through the restart, its watches reconnected, and its
// liveness probe must answer all along, or a kubelet would end it. With
// it, the API server stays down until the operator, unable to renew its
// Lease, has given it up and exited; the supervisor restarts it, and it
// must take the Lease over and act.
func expectRecoversFromAPIServerRestart(ctx context.Context, ns string, leaderElect bool) {
	r := APIServerRestart{LeaderElection: leaderElect}
	var wait time.Duration
	if leaderElect {
		// A Lease left by an earlier run may have to expire first.
		wait = leaseDuration
		env.Operator.Args = leaderElectArgs
		DeferCleanup(func() { env.Operator.Args = nil })
		// Once the operator has stopped (a cleanup registered later runs
		// earlier): chapter 10's Try it counts the Lease's transitions
		// from its first.
		DeferCleanup(func(ctx SpecContext) {
			env.MustKubectl(ctx, "delete", "lease", framework.LeaseName, "-n", framework.OperatorNamespace, "--ignore-not-found")
		})
	}
	// The operator that ships (the suite's), with no fault: what an API
	// server restart meets in production.
	Expect(env.StartSupervised(ctx, nil, nil)).To(Succeed())
	steps := env.Scenario()[:1]
	steps[0].Wait = wait
	before := env.RunScenario(ctx, ns, steps)[0]
	offset := env.Operator.LogOffset()
	var liveness *framework.LivenessWatch
	if !leaderElect {
		// As a kubelet probes it, but four times a second.
		liveness = env.Operator.WatchLiveness(250 * time.Millisecond)
		DeferCleanup(liveness.Stop)
	}

	framework.LessonStep("stopping the API server")
	stopped := time.Now()
	Expect(env.Cluster.StopAPIServer(ctx, GinkgoWriter)).To(Succeed())
	// Whatever happens next, the suites after this one need it.
	DeferCleanup(func(ctx SpecContext) { Expect(env.Cluster.StartAPIServer(ctx, GinkgoWriter)).To(Succeed()) })
	if leaderElect {
		By("keeping it stopped until the operator, unable to renew its Lease, gives it up and exits")
		Eventually(env.Operator.Exits).WithContext(ctx).WithTimeout(renewDeadline+framework.EventuallyTimeout()).ShouldNot(BeEmpty(),
			"the operator did not exit, though it could not renew its Lease")
		r.LeaseLost = time.Since(stopped)
		Expect(env.Operator.LogSince(offset)).To(ContainSubstring("leader election lost"), "the operator exited, but not for its Lease")
	}
	By("starting the API server again")
	Expect(env.Cluster.StartAPIServer(ctx, GinkgoWriter)).To(Succeed())
	answered := time.Now()
	r.Down = answered.Sub(stopped)

	// One change, then the other, as soon as the API server answers: each
	// needs one of the operator's watches back, the pods' for the delete
	// and the Redis objects' for the scale.
	// Each step's state is a deciding check (RunScenario): the operator
	// (the same process, or with leader election the one that took the
	// Lease over) makes the deleted pod again, and the other pods stay
	// the same objects; then it scales.
	steps = env.Scenario()[1:3]
	steps[0].Wait = wait + kubeletBackOff
	rebuilt := env.RunScenario(ctx, ns, steps[:1])[0]
	r.Rebuilt = time.Since(answered)
	framework.DecidingCheck("pod cache-1 was made again; cache-0 and cache-2 are the same objects", func() {
		for _, name := range []string{"cache-0", "cache-2"} {
			Expect(rebuilt.UIDs[name]).To(Equal(before.UIDs[name]), "pod %s was deleted and made again", name)
		}
		Expect(rebuilt.UIDs["cache-1"]).NotTo(Equal(before.UIDs["cache-1"]), "pod cache-1 was not made again")
	})
	scaling := time.Now()
	env.RunScenario(ctx, ns, steps[1:])
	r.Scaled = time.Since(scaling)
	exits := env.Operator.Exits()
	r.Exits = len(exits)
	if !leaderElect {
		By("the operator never exited, and its liveness probe never failed: without leader election, nothing in a restart of the API server should end it, nor make a kubelet end it")
		polls, failures := liveness.Stop()
		framework.DecidingCheck("without leader election, the operator never exited, and its liveness probe never failed", func() {
			Expect(exits).To(BeEmpty(), "the operator exited: without leader election, an API server restart should not end it")
			Expect(failures).To(BeEmpty(), "the operator's liveness probe failed %d times of %d while the API server restarted: a kubelet would count each towards restarting it", len(failures), polls)
		})
	}
	Expect(env.Operator.Running()).To(BeTrue(), "the operator is not running")
	AddReportEntry("API server restart", r.String(), ReportEntryVisibilityAlways)
	GinkgoWriter.Println(r)
	Expect(env.Operator.Stop()).To(Succeed())
}
