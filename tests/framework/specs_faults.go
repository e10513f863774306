package framework

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/types"
)

// The specs of chapter 11, faults. Each runs the operator under
// StartSupervised, so that when it crashes it is back at once.

// SweepSummary is what a crash sweep found, printed in the report.
type SweepSummary struct {
	// Writes is how many writes the clean run made: the sweep runs the
	// scenario once per write, crashing the operator right after it.
	Writes int
	// Crashed counts the runs in which the operator crashed where asked;
	// in the others it made fewer writes than that run's number (the
	// number of status writes depends on how events fall together).
	Crashed int
	// Failures says, for each run that did not end as the clean run did,
	// why.
	Failures []string
}

func (s SweepSummary) String() string {
	return fmt.Sprintf("crash sweep: %d writes in the clean run, %d runs, %d crashed after their write, %d made fewer writes, %d failures",
		s.Writes, s.Writes, s.Crashed, s.Writes-s.Crashed, len(s.Failures))
}

// ExpectCrashSweep runs Scenario once with the operator counting its
// writes, then once for each write N of that clean run, with the operator
// crashing right after its N-th write and restarted at once. Every run
// must reach the clean run's state after every step.
func (e *Env) ExpectCrashSweep(ctx context.Context) {
	steps := Scenario()
	By("the clean run: the scenario with the operator counting its writes")
	Expect(e.startSupervised(ctx, countWrites, countWrites)).To(Succeed())
	// The operator numbers every write it makes. An earlier spec's
	// namespace may still be going, its Redis reconciled by this operator:
	// those writes would be counted, and end the runs early. And an API
	// server that an earlier spec restarted maps the kind Redis again only
	// once its discovery has caught up.
	e.WaitForOtherNamespacesGone(ctx, "")
	e.waitForOwnerMapping(ctx)
	offset := e.Operator.LogOffset()
	clean := e.RunScenario(ctx, e.NewNamespace(ctx), steps)
	Expect(e.Operator.Stop()).To(Succeed())
	Expect(e.Operator.Exits()).To(BeEmpty(), "the operator exited during the clean run")

	LessonStep("the clean run's writes are counted, and the operator is crashed after each one in turn")
	writes := e.Operator.WritesSince(offset)
	Expect(writes).NotTo(BeEmpty(), "the operator logged no write: it does not read %s", EnvCrashAfterWrite)
	var lines []string
	for _, w := range writes {
		lines = append(lines, w.String())
	}
	AddReportEntry("the clean run's writes", strings.Join(lines, "\n"))

	summary := SweepSummary{Writes: len(writes)}
	for n := 1; n <= len(writes); n++ {
		By(fmt.Sprintf("run %d of %d: crash after write %d (%s)", n, len(writes), n, writes[n-1]))
		ns := e.NewNamespace(ctx)
		offset := e.Operator.LogOffset()
		Expect(e.startSupervised(ctx, []string{EnvCrashAfterWrite + "=" + strconv.Itoa(n)}, countWrites)).To(Succeed())
		var states []State
		err := InterceptGomegaFailure(func() { states = e.RunScenario(ctx, ns, steps) })
		Expect(e.Operator.Stop()).To(Succeed())
		exits := e.Operator.Exits()
		var crash *Write
		for _, w := range e.Operator.WritesSince(offset) {
			if w.Crash {
				crash = &w
			}
		}
		switch {
		case err != nil:
			summary.Failures = append(summary.Failures, fmt.Sprintf("run %d: %v", n, err))
		case crash == nil && len(exits) == 0:
			// Fewer writes this time: nothing to crash after.
		case crash == nil || crash.N != n || len(exits) != 1 || !crashed(exits[0]):
			summary.Failures = append(summary.Failures, fmt.Sprintf("run %d: the operator exited %v, after write %v; want one crash, after write %d", n, exits, crash, n))
		default:
			summary.Crashed++
			for i := range states {
				if states[i].Status != clean[i].Status || !slices.Equal(states[i].Pods, clean[i].Pods) {
					summary.Failures = append(summary.Failures, fmt.Sprintf("run %d, step %q: %v, the clean run %v", n, steps[i].Name, states[i], clean[i]))
				}
			}
		}
	}
	AddReportEntry("crash sweep", summary.String(), ReportEntryVisibilityAlways)
	GinkgoWriter.Println(summary)
	Expect(summary.Failures).To(BeEmpty(), "%s", summary)
	Expect(summary.Crashed).To(BeNumerically(">", 0), "no run crashed where it was asked to: %s", summary)
}

// startSupervised starts the operator under StartSupervised, and stops it
// when the spec ends, whatever happened.
func (e *Env) startSupervised(ctx context.Context, env, restartEnv []string) error {
	if err := e.Operator.StartSupervised(ctx, env, restartEnv); err != nil {
		return err
	}
	DeferCleanup(e.Operator.Stop)
	return nil
}

// ExpectLastStateOnly stops the operator, changes a Redis three times, and
// starts it again: it acts on what the Redis asks for now, and on nothing
// it did not see. Its writes are one create, of the one pod missing, and
// status patches.
func (e *Env) ExpectLastStateOnly(ctx context.Context, ns string) {
	steps := Scenario()[:1]
	Expect(e.startSupervised(ctx, countWrites, countWrites)).To(Succeed())
	before := e.RunScenario(ctx, ns, steps)[0]
	Expect(e.Operator.Stop()).To(Succeed())

	By("scaling to 5, then 1, then 4, with the operator stopped")
	for _, n := range []string{"5", "1", "4"} {
		e.MustKubectl(ctx, "scale", "redis", scenarioRedis, "-n", ns, "--replicas="+n)
	}
	offset := e.Operator.LogOffset()
	Expect(e.startSupervised(ctx, countWrites, countWrites)).To(Succeed())
	after := e.RunScenario(ctx, ns, []Step{{Name: "start the operator", Want: convergedState(4), Do: func(context.Context, *Env, string) {}}})[0]
	for name, uid := range before.UIDs {
		Expect(after.UIDs[name]).To(Equal(uid), "pod %s was deleted and made again: the operator acted on a state it never saw", name)
	}
	Eventually(func(g Gomega) {
		var creates []string
		for _, w := range e.Operator.WritesSince(offset) {
			if !strings.HasPrefix(w.Object, ns+"/") {
				continue // an earlier spec's namespace, still going
			}
			g.Expect(w.Error).To(BeEmpty(), "write %s", w)
			switch {
			case w.Verb == "create" && w.Kind == "Pod":
				creates = append(creates, w.Object)
			case w.Verb == "patch status" && w.Kind == "Redis":
			default:
				g.Expect(w.String()).To(BeEmpty(), "a write that is neither a pod's create nor the status")
			}
		}
		g.Expect(creates).To(Equal([]string{ns + "/cache-3"}), "the pods created")
	}).WithContext(ctx).Should(Succeed())
	Expect(e.Operator.Stop()).To(Succeed())
}

// ExpectStaleCacheSparesForeignPod holds the operator's pod watch, so that
// its cache still shows pod cache-2 after it is deleted and someone else
// makes a pod of that name. A scale-down that asks the operator to delete
// cache-2 then meets the UID precondition of its delete, which the API
// server refuses for the other pod; once the watch goes on, the operator
// sees that cache-2 is not its own and leaves it alone.
func (e *Env) ExpectStaleCacheSparesForeignPod(ctx context.Context, ns string) {
	Expect(e.startSupervised(ctx, append([]string{EnvStalePods + "=true"}, countWrites...), countWrites)).To(Succeed())
	e.RunScenario(ctx, ns, Scenario()[:1])

	LessonStep("the pod watch held: the operator's cache keeps the pods as they are")
	offset := e.Operator.LogOffset()
	Expect(e.Operator.Signal(syscall.SIGUSR1)).To(Succeed())
	Eventually(func() string { return e.Operator.LogSince(offset) }).WithContext(ctx).Should(ContainSubstring("Pod watch held"))
	Expect(e.Operator.Running()).To(BeTrue(), "the operator did not survive SIGUSR1")

	By("deleting pod cache-2 and making a pod of that name that no Redis controls")
	e.MustKubectl(ctx, "delete", "pod", "cache-2", "-n", ns)
	_, err := e.Apply(ctx, ForeignPodManifest(ns, "cache-2"))
	Expect(err).NotTo(HaveOccurred())
	foreign, err := e.Pod(ctx, ns, "cache-2")
	Expect(err).NotTo(HaveOccurred())

	By("scaling to 2: the operator deletes cache-2 as its cache shows it, with that pod's UID as a precondition")
	e.MustKubectl(ctx, "scale", "redis", scenarioRedis, "-n", ns, "--replicas=2")
	var deletes []Write
	Eventually(func() []Write {
		deletes = nil
		for _, w := range e.Operator.WritesSince(offset) {
			if w.Verb == "delete" && w.Object == ns+"/cache-2" {
				deletes = append(deletes, w)
			}
		}
		return deletes
	}).WithContext(ctx).ShouldNot(BeEmpty(), "the operator did not try to delete cache-2")
	e.expectSameObject(ctx, ns, "cache-2", foreign.UID)
	Expect(deletes[0].Error).To(ContainSubstring("UID in the precondition"), "the API server did not refuse the delete for its UID")

	By("releasing the pod watch: the operator sees the pod it did not make")
	Expect(e.Operator.Signal(syscall.SIGUSR2)).To(Succeed())
	Eventually(func(g Gomega) State {
		s, err := e.stateOf(ctx, ns, scenarioRedis)
		g.Expect(err).NotTo(HaveOccurred())
		return s.withoutUIDs()
	}).WithContext(ctx).Should(Equal(State{
		Pods:   append(convergedState(2).Pods, "cache-2: Running, controlled by no controller"),
		Status: convergedState(2).Status,
	}))
	e.expectSameObject(ctx, ns, "cache-2", foreign.UID)
	Expect(e.Operator.Exits()).To(BeEmpty())
	Expect(e.Operator.Stop()).To(Succeed())
}

// expectSameObject checks, for a while, that pod name is still the object
// with uid.
func (e *Env) expectSameObject(ctx context.Context, ns, name string, uid types.UID) {
	GinkgoHelper()
	Consistently(func(g Gomega) types.UID {
		p, err := e.Pod(ctx, ns, name)
		g.Expect(err).NotTo(HaveOccurred())
		return p.UID
	}).WithContext(ctx).Should(Equal(uid), "pod %s was deleted", name)
}

// ExpectConvergesThroughConflicts runs Scenario with each write of the
// operator refused with 409 Conflict the first time it is made: each write
// refused before the Redis is deleted must be made again, and the scenario
// end as the clean run does.
func (e *Env) ExpectConvergesThroughConflicts(ctx context.Context, ns string) {
	env := append([]string{EnvConflictOnce + "=true"}, countWrites...)
	offset := e.Operator.LogOffset()
	Expect(e.startSupervised(ctx, env, env)).To(Succeed())
	LessonStep("each write the operator makes is answered with 409 Conflict the first time")
	steps := Scenario()
	last := len(steps) - 1
	e.RunScenario(ctx, ns, steps[:last])
	deleting := e.Operator.LogOffset()
	e.RunScenario(ctx, ns, steps[last:])
	Expect(e.Operator.Stop()).To(Succeed())
	Expect(e.Operator.Exits()).To(BeEmpty())

	By("each write refused before the Redis was deleted was made again")

	// Only this spec's namespace: an earlier spec's Redis may still be
	// reconciled while its namespace goes, and its refused writes, never
	// needed again, are not made again.
	inNamespace := func(log string) []Write {
		var writes []Write
		for _, w := range writesIn(log) {
			if strings.HasPrefix(w.Object, ns+"/") {
				writes = append(writes, w)
			}
		}
		return writes
	}
	log := e.Operator.LogSince(offset)
	writes := inNamespace(log)
	// Each write refused before the Redis was deleted must be made again.
	// Once it is deleted, a reconcile that still found it in the cache may
	// have a write refused that the next reconcile, which finds it gone,
	// rightly does not make.
	needed := len(inNamespace(log[:deleting-offset]))
	refused := 0
	for i, w := range writes[:needed] {
		if !strings.Contains(w.Error, "injected by "+EnvConflictOnce) {
			continue
		}
		refused++
		retried := false
		for _, later := range writes[i+1:] {
			if later.Verb == w.Verb && later.Object == w.Object && !strings.Contains(later.Error, "injected by "+EnvConflictOnce) {
				retried = true
				break
			}
		}
		Expect(retried).To(BeTrue(), "write %s was refused and never made again", w)
	}
	Expect(refused).To(BeNumerically(">", 0), "no write was refused: does the operator read %s?", EnvConflictOnce)
	AddReportEntry("conflicts", fmt.Sprintf("%d writes, %d refused with 409 Conflict, each made again", len(writes), refused), ReportEntryVisibilityAlways)
}

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
var leaderElectArgs = []string{"--leader-elect", "--leader-election-namespace=" + OperatorNamespace}

// APIServerRestart is what ExpectRecoversFromAPIServerRestart measured,
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

// ExpectRecoversFromAPIServerRestart runs a Redis of 3, stops the
// cluster's API server and starts it again, then at once deletes a pod,
// and once it is back scales the Redis to 5; the operator must leave the
// other pods alone. Without leader election, nothing ends the operator:
// it must live through the restart, its watches reconnected. With it, the
// API server stays down until the operator, unable to renew its Lease,
// has given it up and exited; the supervisor restarts it, and it must
// take the Lease over and act.
func (e *Env) ExpectRecoversFromAPIServerRestart(ctx context.Context, ns string, leaderElect bool) {
	r := APIServerRestart{LeaderElection: leaderElect}
	var wait time.Duration
	if leaderElect {
		// A Lease left by an earlier run may have to expire first.
		wait = leaseDuration
		e.Operator.Args = leaderElectArgs
		DeferCleanup(func() { e.Operator.Args = nil })
		// Once the operator has stopped (a cleanup registered later runs
		// earlier): chapter 9's Try it counts the Lease's transitions
		// from its first.
		DeferCleanup(func(ctx SpecContext) {
			e.MustKubectl(ctx, "delete", "lease", LeaseName, "-n", OperatorNamespace, "--ignore-not-found")
		})
	}
	Expect(e.startSupervised(ctx, countWrites, countWrites)).To(Succeed())
	steps := Scenario()[:1]
	steps[0].Wait = wait
	before := e.RunScenario(ctx, ns, steps)[0]
	offset := e.Operator.LogOffset()

	By("stopping the API server")
	stopped := time.Now()
	Expect(e.Cluster.StopAPIServer(ctx, GinkgoWriter)).To(Succeed())
	// Whatever happens next, the suites after this one need it.
	DeferCleanup(func(ctx SpecContext) { Expect(e.Cluster.StartAPIServer(ctx, GinkgoWriter)).To(Succeed()) })
	if leaderElect {
		By("keeping it stopped until the operator, unable to renew its Lease, gives it up and exits")
		Eventually(e.Operator.Exits).WithContext(ctx).WithTimeout(renewDeadline+eventuallyTimeout()).ShouldNot(BeEmpty(),
			"the operator did not exit, though it could not renew its Lease")
		r.LeaseLost = time.Since(stopped)
		Expect(e.Operator.LogSince(offset)).To(ContainSubstring("leader election lost"), "the operator exited, but not for its Lease")
	}
	By("starting the API server again")
	Expect(e.Cluster.StartAPIServer(ctx, GinkgoWriter)).To(Succeed())
	answered := time.Now()
	r.Down = answered.Sub(stopped)

	// One change, then the other, as soon as the API server answers: each
	// needs one of the operator's watches back, the pods' for the delete
	// and the Redis objects' for the scale.
	steps = Scenario()[1:3]
	steps[0].Wait = wait + kubeletBackOff
	rebuilt := e.RunScenario(ctx, ns, steps[:1])[0]
	r.Rebuilt = time.Since(answered)
	for _, name := range []string{"cache-0", "cache-2"} {
		Expect(rebuilt.UIDs[name]).To(Equal(before.UIDs[name]), "pod %s was deleted and made again", name)
	}
	Expect(rebuilt.UIDs["cache-1"]).NotTo(Equal(before.UIDs["cache-1"]), "pod cache-1 was not made again")
	scaling := time.Now()
	e.RunScenario(ctx, ns, steps[1:])
	r.Scaled = time.Since(scaling)
	exits := e.Operator.Exits()
	r.Exits = len(exits)
	if !leaderElect {
		Expect(exits).To(BeEmpty(), "the operator exited: without leader election, an API server restart should not end it")
	}
	Expect(e.Operator.Running()).To(BeTrue(), "the operator is not running")
	AddReportEntry("API server restart", r.String(), ReportEntryVisibilityAlways)
	GinkgoWriter.Println(r)
	Expect(e.Operator.Stop()).To(Succeed())
}
