//go:build e2e

package chapter12

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"example.com/redis-operator/operator/faults"
	"example.com/redis-operator/tests/framework"
)

var _ = Describe("The operator crashed right after each of its writes in turn", Serial, func() {
	It("ends every step of the scenario as the run without a crash does", framework.Lesson, framework.CrashSweep, func(ctx SpecContext) {
		expectCrashSweep(ctx)
	})
})

var _ = Describe("The operator stopped while a Redis changes three times", Serial, func() {
	It("acts, once started, on the last state only", func(ctx SpecContext) {
		expectLastStateOnly(ctx, env.NewNamespace(ctx))
	})
})

var _ = Describe("A cache that is behind", Serial, func() {
	It("cannot make the operator delete a pod that took the name of one of its own: the UID precondition refuses it", framework.Lesson, func(ctx SpecContext) {
		expectStaleCacheSparesForeignPod(ctx, env.NewNamespace(ctx))
	})
})

var _ = Describe("Writes answered with 409 Conflict", Serial, func() {
	It("are made again until the scenario ends as the run without faults does", framework.Lesson, func(ctx SpecContext) {
		expectConvergesThroughConflicts(ctx, env.NewNamespace(ctx))
	})
})

var _ = Describe("The API server stopped and started again", Serial, framework.RestartsAPIServer, func() {
	It("does not end an operator without leader election: its watches reconnect, and it acts on what changed", func(ctx SpecContext) {
		expectRecoversFromAPIServerRestart(ctx, env.NewNamespace(ctx), false)
	})
	It("makes an operator with leader election give up its Lease and exit; restarted, it takes the Lease over and acts", func(ctx SpecContext) {
		expectRecoversFromAPIServerRestart(ctx, env.NewNamespace(ctx), true)
	})
})

// The bodies of the specs above. Each runs the operator under
// StartSupervised, so that when it crashes it is back at once.

// countWrites is the environment of an operator that logs its writes and
// injects no fault.
var countWrites = []string{faults.EnvCrashAfterWrite + "=0"}

// A crashPoint is where a run of the sweep crashes the operator: right
// after a write, or right before one, named as the operator names its
// writes ("delete Pod cache-4#1": the first delete of pod cache-4).
type crashPoint struct {
	Before bool
	Write  string
}

func (p crashPoint) String() string {
	if p.Before {
		return "before " + p.Write
	}
	return "after " + p.Write
}

// vars is the operator's environment that asks for the crash.
func (p crashPoint) vars() []string {
	if p.Before {
		return []string{faults.EnvCrashBeforeWrite + "=" + p.Write}
	}
	return []string{faults.EnvCrashAfterWrite + "=" + p.Write}
}

// nameOf is a write's name without its number among those of that name:
// "delete Pod cache-4".
func nameOf(write string) string {
	name, _, _ := strings.Cut(write, "#")
	return name
}

// crashPoints are the sweep's points for the writes of the clean run:
// right after each, and right before each that follows a write of another
// name, one the clean run makes several times. Which status patch is the
// 12th depends on how events fell together in that run; the first delete
// of cache-4 does not, and right before it is right after whichever patch
// came last.
func crashPoints(writes []faults.Write) []crashPoint {
	made := map[string]int{}
	for _, w := range writes {
		made[nameOf(w.Name)]++
	}
	var points []crashPoint
	for i, w := range writes {
		if prev := i - 1; prev >= 0 && made[nameOf(writes[prev].Name)] > 1 && nameOf(writes[prev].Name) != nameOf(w.Name) {
			points = append(points, crashPoint{Before: true, Write: w.Name})
		}
		points = append(points, crashPoint{Write: w.Name})
	}
	return points
}

// SweepSummary is what a crash sweep found, printed in the report.
type SweepSummary struct {
	// Writes is how many writes the clean run made, and Names their names
	// without numbers, in the order of their first write.
	Writes int
	Names  []string
	// Runs counts the scenario's runs, retries included.
	Runs int
	// CrashedAfter counts, for each name, the runs that crashed right
	// after one of its writes; CrashedBefore the runs that crashed right
	// before a write.
	CrashedAfter  map[string]int
	CrashedBefore int
	// Missed are the points that no run reached, in two tries: a run made
	// fewer status patches than the clean run, say.
	Missed []crashPoint
	// Failures says, for each run that did not end as the clean run did,
	// or did not crash as asked, why.
	Failures []string
	// Left counts the points not run: the sweep stopped at its first
	// failure (Ginkgo's --fail-fast).
	Left int
}

func (s SweepSummary) String() string {
	var after []string
	for _, name := range s.Names {
		after = append(after, fmt.Sprintf("%s ×%d", name, s.CrashedAfter[name]))
	}
	missed := ""
	if len(s.Missed) > 0 {
		missed = fmt.Sprintf(" (%v)", s.Missed)
	}
	stopped := ""
	if s.Left > 0 {
		stopped = fmt.Sprintf(" (--fail-fast: stopped there, %d points not run)", s.Left)
	}
	return fmt.Sprintf("crash sweep: %d writes in the clean run, %d distinct; %d runs; crashed right after: %s; right before a write: %d; points not reached twice: %d%s; %d failures%s",
		s.Writes, len(s.Names), s.Runs, strings.Join(after, ", "), s.CrashedBefore, len(s.Missed), missed, len(s.Failures), stopped)
}

// expectCrashSweep runs Scenario once with the operator counting its
// writes, then once for each crash point of that clean run (crashPoints),
// with the operator crashed there and restarted at once. A run that did
// not reach its point is made again once. Every run that crashed must
// reach the clean run's state after every step, with the same details
// (State.Details), and make no write after the last step; every write of
// the clean run must have been crashed after at least once. Each run has
// a namespace and an operator of its own (Operator.Scoped), so that
// sweepRunsAtOnce runs go at once. The sweep runs every point and reports
// every failing run, unless Ginkgo runs with --fail-fast: then it starts
// no run after the first failure (prove's mutant runs do: one failing run
// is the verdict).
func expectCrashSweep(ctx context.Context) {
	steps := scenario()
	By("the clean run: the scenario with the operator counting its writes")
	// An API server that an earlier spec restarted maps the kind Redis
	// again only once its discovery has caught up.
	env.WaitForOwnerMapping(ctx)
	cleanNS := env.NewNamespace(ctx)
	cleanOperator := env.Operator.Scoped(cleanNS)
	Expect(cleanOperator.StartSupervised(ctx, countWrites, countWrites)).To(Succeed())
	DeferCleanup(cleanOperator.Stop)
	clean := runScenario(ctx, cleanNS, steps)
	expectNoStrayWrite(ctx, cleanOperator, cleanNS)
	Expect(cleanOperator.Stop()).To(Succeed())
	Expect(cleanOperator.Exits()).To(BeEmpty(), "the operator exited during the clean run")

	framework.LessonStep("the clean run's writes are named, and the operator is crashed right after each one in turn")
	writes := cleanOperator.WritesSince(0)
	Expect(writes).NotTo(BeEmpty(), "the operator logged no write: it does not read %s", faults.EnvCrashAfterWrite)
	summary := SweepSummary{Writes: len(writes), CrashedAfter: map[string]int{}}
	var lines []string
	for _, w := range writes {
		lines = append(lines, w.String()+" = "+w.Name)
		if _, ok := summary.CrashedAfter[nameOf(w.Name)]; !ok {
			summary.Names = append(summary.Names, nameOf(w.Name))
			summary.CrashedAfter[nameOf(w.Name)] = 0
		}
	}
	AddReportEntry("the clean run's writes", strings.Join(lines, "\n"))

	points := crashPoints(writes)
	suiteConfig, _ := GinkgoConfiguration()
	type run struct {
		index, try int
		point      crashPoint
	}
	type result struct {
		run
		reached bool
		failure string
	}
	done := make(chan result)
	var again []run // points not reached at the first try
	next, running := 0, 0
	for {
		for running < sweepRunsAtOnce && (!suiteConfig.FailFast || len(summary.Failures) == 0) {
			var r run
			switch {
			case len(again) > 0:
				r, again = again[0], again[1:]
			case next < len(points):
				r = run{index: next + 1, try: 1, point: points[next]}
				next++
			default:
			}
			if r.try == 0 {
				break
			}
			ns := env.NewNamespace(ctx)
			By(fmt.Sprintf("run %d of %d, try %d: crash %s (namespace %s)", r.index, len(points), r.try, r.point, ns))
			running++
			go func() {
				res := result{run: r, failure: "the run ended in a panic"}
				defer func() { done <- res }()
				defer GinkgoRecover()
				res.reached, res.failure = crashRun(ctx, ns, steps, clean, r.point)
			}()
		}
		if running == 0 {
			break
		}
		res := <-done
		running--
		summary.Runs++
		switch {
		case res.failure != "":
			summary.Failures = append(summary.Failures, fmt.Sprintf("crash %s: %s", res.point, res.failure))
		case !res.reached && res.try == 1:
			again = append(again, run{index: res.index, try: 2, point: res.point}) // fewer writes of that name this time: once more
		case !res.reached:
			summary.Missed = append(summary.Missed, res.point)
		case res.point.Before:
			summary.CrashedBefore++
		default:
			summary.CrashedAfter[nameOf(res.point.Write)]++
		}
	}
	summary.Left = len(points) - next
	AddReportEntry("crash sweep", summary.String(), ReportEntryVisibilityAlways)
	GinkgoWriter.Println(summary)
	// The runs' failures were collected, so that one run that fails does
	// not hide the others: they fail the spec here, in this step.
	By("every run ended each step of the scenario as the clean run did")
	framework.DecidingCheck("no run failed, and every distinct write of the clean run was crashed right after at least once")
	Expect(summary.Failures).To(BeEmpty(), "%s", summary)
	for _, name := range summary.Names {
		Expect(summary.CrashedAfter[name]).To(BeNumerically(">", 0), "no run crashed right after a write %q of the clean run: %s", name, summary)
	}
}

// sweepRunsAtOnce is how many runs of the crash sweep go at once. A run
// mostly waits, for the operator to start and for the cluster to act on
// each step; three at once take a third of the time, on two cores, on
// either back-end.
const sweepRunsAtOnce = 3

// crashRun runs the scenario in namespace ns with an operator of its own,
// crashed at point and restarted at once. It reports whether the run
// reached the point and, if it did not end each step as the clean run did
// or did not crash as asked, why. It runs beside other runs, in a
// goroutine of the sweep: it asserts with a Gomega of its own, which turns
// a failure into what it returns, and says its steps in GinkgoWriter.
func crashRun(ctx context.Context, ns string, steps []Step, clean []State, point crashPoint) (reached bool, failure string) {
	op := env.Operator.Scoped(ns)
	say := func(step string) { GinkgoWriter.Printf("%s: %s\n", ns, step) }
	if err := op.StartSupervised(ctx, point.vars(), countWrites); err != nil {
		return false, fmt.Sprintf("starting its operator: %v", err)
	}
	var states []State
	err := runFailure(func(g Gomega) { states = runScenarioWith(ctx, g, say, ns, steps) })
	var stray error
	if err == nil {
		stray = runFailure(func(g Gomega) { expectNoStrayWriteWith(ctx, g, op, ns) })
	} else {
		// What the run left would be reconciled by the operators of the
		// specs after this one, which watch every namespace: it goes now,
		// with its own operator, while that still runs.
		say("deleting what the failed run left")
		if left := runFailure(func(g Gomega) {
			_, err := env.Kubectl.Run(ctx, "delete", "redis", "--all", "-n", ns, "--wait=false")
			g.Expect(err).NotTo(HaveOccurred())
			g.Eventually(func(g Gomega) []string {
				s, err := stateOf(ctx, ns, scenarioRedis)
				g.Expect(err).NotTo(HaveOccurred())
				return s.Pods
			}).WithContext(ctx).WithTimeout(framework.EventuallyTimeout()).Should(BeEmpty())
		}); left != nil {
			err = fmt.Errorf("%w; its namespace did not empty: %w", err, left)
		}
	}
	stopErr := op.Stop()
	exits := op.Exits()
	var crash *faults.Write
	for _, w := range op.WritesSince(0) {
		if w.Crash {
			crash = &w
		}
	}
	switch {
	case err != nil:
		return crash != nil, fmt.Sprintf("%v (its operator's log: %s)", err, op.LogPath)
	case stopErr != nil:
		return crash != nil, fmt.Sprintf("stopping its operator: %v", stopErr)
	case crash == nil && len(exits) == 0:
		return false, ""
	case crash == nil || crash.Name != point.Write || crash.Before != point.Before || len(exits) != 1 || !framework.Crashed(exits[0]):
		return true, fmt.Sprintf("the operator exited %v, its crash line %+v; want one crash %s", exits, crash, point)
	}
	for i := range states {
		if states[i].Status != clean[i].Status || !slices.Equal(states[i].Pods, clean[i].Pods) {
			failure += fmt.Sprintf("after step %q: %v, the clean run %v; ", steps[i].Name, states[i], clean[i])
		}
		if d := detailsDiff(states[i].Details, clean[i].Details); d != "" {
			failure += fmt.Sprintf("after step %q, not as in the clean run: %s; ", steps[i].Name, d)
		}
	}
	if stray != nil {
		failure += stray.Error()
	}
	return true, strings.TrimSuffix(failure, "; ")
}

// runFailure runs f with a Gomega of its own and returns the first
// assertion of f that failed, or nil: what InterceptGomegaFailure does for
// the spec's goroutine, for any goroutine.
func runFailure(f func(g Gomega)) (err error) {
	type failed struct{ message string }
	defer func() {
		if r := recover(); r != nil {
			m, ok := r.(failed)
			if !ok {
				panic(r)
			}
			err = errors.New(m.message)
		}
	}()
	f(NewGomega(func(message string, _ ...int) { panic(failed{message}) }))
	return nil
}

// detailsDiff says how a run's details differ from the clean run's, or "".
func detailsDiff(got, clean []string) string {
	var d []string
	for _, g := range got {
		if !slices.Contains(clean, g) {
			d = append(d, "this run: "+g)
		}
	}
	for _, c := range clean {
		if !slices.Contains(got, c) {
			d = append(d, "the clean run: "+c)
		}
	}
	return strings.Join(d, "; ")
}

// strayWriteWindow is how long, after the scenario's last step, the
// operator must make no write in the scenario's namespace: the state was
// reached, and anything it writes then is a write it should not make.
const strayWriteWindow = 2 * time.Second

// expectNoStrayWrite checks that operator op makes no write in namespace
// ns for strayWriteWindow from now.
func expectNoStrayWrite(ctx context.Context, op *framework.Operator, ns string) {
	GinkgoHelper()
	expectNoStrayWriteWith(ctx, Default, op, ns)
}

// expectNoStrayWriteWith is expectNoStrayWrite asserting with g.
func expectNoStrayWriteWith(ctx context.Context, g Gomega, op *framework.Operator, ns string) {
	offset := op.LogOffset()
	g.Consistently(func() []faults.Write { return writesIn(ns, op.WritesSince(offset)) }).
		WithContext(ctx).WithTimeout(strayWriteWindow).Should(BeEmpty(), "a write after the scenario's last step")
}

// writesIn keeps the writes to the objects of namespace ns: an earlier
// spec's namespace may still be going, its Redis reconciled by the same
// operator, and its writes are not this spec's.
func writesIn(ns string, writes []faults.Write) []faults.Write {
	return slices.DeleteFunc(writes, func(w faults.Write) bool { return !strings.HasPrefix(w.Object, ns+"/") })
}

// startSupervised starts the operator under StartSupervised, and stops it
// when the spec ends, whatever happened.
func startSupervised(ctx context.Context, vars, restartVars []string) error {
	if err := env.Operator.StartSupervised(ctx, vars, restartVars); err != nil {
		return err
	}
	DeferCleanup(env.Operator.Stop)
	return nil
}

// expectLastStateOnly stops the operator, changes a Redis three times, and
// starts it again: it acts on what the Redis asks for now, and on nothing
// it did not see. Its writes are one create, of the one pod missing, and
// status patches.
func expectLastStateOnly(ctx context.Context, ns string) {
	steps := scenario()[:1]
	Expect(startSupervised(ctx, countWrites, countWrites)).To(Succeed())
	before := runScenario(ctx, ns, steps)[0]
	Expect(env.Operator.Stop()).To(Succeed())

	By("scaling to 5, then 1, then 4, with the operator stopped")
	for _, n := range []string{"5", "1", "4"} {
		env.MustKubectl(ctx, "scale", "redis", scenarioRedis, "-n", ns, "--replicas="+n)
	}
	offset := env.Operator.LogOffset()
	Expect(startSupervised(ctx, countWrites, countWrites)).To(Succeed())
	after := runScenario(ctx, ns, []Step{{Name: "start the operator", Want: convergedState(4), Do: func(context.Context, string) error { return nil }}})[0]
	for name, uid := range before.UIDs {
		Expect(after.UIDs[name]).To(Equal(uid), "pod %s was deleted and made again: the operator acted on a state it never saw", name)
	}
	Eventually(func(g Gomega) {
		var creates []string
		for _, w := range writesIn(ns, env.Operator.WritesSince(offset)) {
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
	Expect(env.Operator.Stop()).To(Succeed())
}

// expectStaleCacheSparesForeignPod holds the operator's pod watch, so that
// its cache still shows pod cache-2 after it is deleted and someone else
// makes a pod of that name. A scale-down that asks the operator to delete
// cache-2 then meets the UID precondition of its delete, which the API
// server refuses for the other pod; once the watch goes on, the operator
// sees that cache-2 is not its own and leaves it alone.
func expectStaleCacheSparesForeignPod(ctx context.Context, ns string) {
	Expect(startSupervised(ctx, append([]string{faults.EnvStalePods + "=true"}, countWrites...), countWrites)).To(Succeed())
	runScenario(ctx, ns, scenario()[:1])

	framework.LessonStep("the pod watch held: the operator's cache keeps the pods as they are")
	offset := env.Operator.LogOffset()
	Expect(env.Operator.Signal(syscall.SIGUSR1)).To(Succeed())
	Eventually(func() string { return env.Operator.LogSince(offset) }).WithContext(ctx).Should(ContainSubstring(faults.WatchHeld))
	Expect(env.Operator.Running()).To(BeTrue(), "the operator did not survive SIGUSR1")

	By("deleting pod cache-2 and making a pod of that name that no Redis controls")
	env.MustKubectl(ctx, "delete", "pod", "cache-2", "-n", ns)
	_, err := env.Apply(ctx, framework.ForeignPodManifest(ns, "cache-2"))
	Expect(err).NotTo(HaveOccurred())
	foreign, err := env.Pod(ctx, ns, "cache-2")
	Expect(err).NotTo(HaveOccurred())

	By("scaling to 2: the operator deletes cache-2 as its cache shows it, with that pod's UID as a precondition")
	env.MustKubectl(ctx, "scale", "redis", scenarioRedis, "-n", ns, "--replicas=2")
	var deletes []faults.Write
	Eventually(func() []faults.Write {
		deletes = nil
		for _, w := range env.Operator.WritesSince(offset) {
			if w.Verb == "delete" && w.Object == ns+"/cache-2" {
				deletes = append(deletes, w)
			}
		}
		return deletes
	}).WithContext(ctx).ShouldNot(BeEmpty(), "the operator did not try to delete cache-2")
	framework.DecidingCheck("pod cache-2 stays the pod no Redis controls; the API server refused the operator's delete for its UID; released, the operator leaves it alone")
	expectSameObject(ctx, ns, "cache-2", foreign.UID)
	Expect(deletes[0].Error).To(ContainSubstring("UID in the precondition"), "the API server did not refuse the delete for its UID")

	By("releasing the pod watch: the operator sees the pod it did not make")
	Expect(env.Operator.Signal(syscall.SIGUSR2)).To(Succeed())
	Eventually(func(g Gomega) State {
		s, err := stateOf(ctx, ns, scenarioRedis)
		g.Expect(err).NotTo(HaveOccurred())
		return s.withoutUIDs()
	}).WithContext(ctx).Should(Equal(State{
		Pods:   append(convergedState(2).Pods, "cache-2: Running, controlled by no controller"),
		Status: convergedState(2).Status,
	}))
	expectSameObject(ctx, ns, "cache-2", foreign.UID)
	Expect(env.Operator.Exits()).To(BeEmpty())
	Expect(env.Operator.Stop()).To(Succeed())
}

// expectSameObject checks, for a while, that pod name is still the object
// with uid.
func expectSameObject(ctx context.Context, ns, name string, uid types.UID) {
	GinkgoHelper()
	Consistently(func(g Gomega) types.UID {
		p, err := env.Pod(ctx, ns, name)
		g.Expect(err).NotTo(HaveOccurred())
		return p.UID
	}).WithContext(ctx).Should(Equal(uid), "pod %s was deleted", name)
}

// expectConvergesThroughConflicts runs Scenario with each write of the
// operator refused with 409 Conflict the first time it is made: each
// create and delete refused before the Redis is deleted must be made
// again, and each step end as the clean run does.
func expectConvergesThroughConflicts(ctx context.Context, ns string) {
	vars := append([]string{faults.EnvConflictOnce + "=true"}, countWrites...)
	offset := env.Operator.LogOffset()
	Expect(startSupervised(ctx, vars, vars)).To(Succeed())
	framework.LessonStep("each write the operator makes is answered with 409 Conflict the first time")
	framework.DecidingCheck("each step of the scenario ends as it should, and each create and delete refused before the Redis was deleted was made again")
	steps := scenario()
	last := len(steps) - 1
	runScenario(ctx, ns, steps[:last])
	deleting := env.Operator.LogOffset()
	runScenario(ctx, ns, steps[last:])
	Expect(env.Operator.Stop()).To(Succeed())
	Expect(env.Operator.Exits()).To(BeEmpty())

	By("each create and delete refused before the Redis was deleted was made again")

	// Only this spec's namespace: an earlier spec's Redis may still be
	// reconciled while its namespace goes, and its refused writes, never
	// needed again, are not made again.
	log := env.Operator.LogSince(offset)
	writes := writesIn(ns, faults.WritesIn(log))
	// Each write refused before the Redis was deleted must be made again.
	// Once it is deleted, a reconcile that still found it in the cache may
	// have a write refused that the next reconcile, which finds it gone,
	// rightly does not make.
	needed := len(writesIn(ns, faults.WritesIn(log[:deleting-offset])))
	// A status patch is not held to that. What it sends is the difference
	// between the Redis the cache showed and the status computed, and
	// "the same write" is the same patch; but the next reconcile computes
	// from what the cache shows then. A patch computed while the cache was
	// behind the operator's own last patch differs from that one, and is
	// refused as a write of its own; the next reconcile, from a cache that
	// caught up, finds the status right and rightly writes nothing
	// (updateStatus says so). What each refused patch was for, the
	// status, is checked at the end of each step (runScenario).
	refused, remade := 0, 0
	for i, w := range writes[:needed] {
		if !strings.Contains(w.Error, faults.ConflictInjected) {
			continue
		}
		refused++
		if strings.HasPrefix(w.Verb, "patch") {
			continue
		}
		retried := false
		for _, later := range writes[i+1:] {
			if later.Verb == w.Verb && later.Object == w.Object && !strings.Contains(later.Error, faults.ConflictInjected) {
				retried = true
				break
			}
		}
		Expect(retried).To(BeTrue(), "write %s was refused and never made again", w)
		remade++
	}
	Expect(remade).To(BeNumerically(">", 0), "no create or delete was refused: does the operator read %s?", faults.EnvConflictOnce)
	AddReportEntry("conflicts", fmt.Sprintf("%d writes, %d refused with 409 Conflict; the %d creates and deletes among them each made again", len(writes), refused, remade), ReportEntryVisibilityAlways)
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
	// The operator that ships, with no fault: what an API server restart
	// meets in production.
	env.Operator.Binary = framework.OperatorBinary()
	DeferCleanup(func() { env.Operator.Binary = framework.FaultsBinary() })
	Expect(startSupervised(ctx, nil, nil)).To(Succeed())
	steps := scenario()[:1]
	steps[0].Wait = wait
	before := runScenario(ctx, ns, steps)[0]
	offset := env.Operator.LogOffset()
	var liveness *framework.LivenessWatch
	if !leaderElect {
		// As a kubelet probes it, but four times a second.
		liveness = env.Operator.WatchLiveness(250 * time.Millisecond)
		DeferCleanup(liveness.Stop)
	}

	By("stopping the API server")
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
	steps = scenario()[1:3]
	steps[0].Wait = wait + kubeletBackOff
	rebuilt := runScenario(ctx, ns, steps[:1])[0]
	r.Rebuilt = time.Since(answered)
	for _, name := range []string{"cache-0", "cache-2"} {
		Expect(rebuilt.UIDs[name]).To(Equal(before.UIDs[name]), "pod %s was deleted and made again", name)
	}
	Expect(rebuilt.UIDs["cache-1"]).NotTo(Equal(before.UIDs["cache-1"]), "pod cache-1 was not made again")
	scaling := time.Now()
	runScenario(ctx, ns, steps[1:])
	r.Scaled = time.Since(scaling)
	exits := env.Operator.Exits()
	r.Exits = len(exits)
	if !leaderElect {
		By("the operator never exited, and its liveness probe never failed: without leader election, nothing in a restart of the API server should end it, nor make a kubelet end it")
		Expect(exits).To(BeEmpty(), "the operator exited: without leader election, an API server restart should not end it")
		polls, failures := liveness.Stop()
		Expect(failures).To(BeEmpty(), "the operator's liveness probe failed %d times of %d while the API server restarted: a kubelet would count each towards restarting it", len(failures), polls)
	}
	Expect(env.Operator.Running()).To(BeTrue(), "the operator is not running")
	AddReportEntry("API server restart", r.String(), ReportEntryVisibilityAlways)
	GinkgoWriter.Println(r)
	Expect(env.Operator.Stop()).To(Succeed())
}

// State is what a namespace holds when a step of a scenario is over: every
// pod in it (whoever made it), and the Redis' status, in words that two
// runs of the same scenario can compare.
type State struct {
	Pods   []string
	Status string
	// Details is the rest of what the operator wrote there, which a step's
	// Want does not say but a user sees: each pod's labels, images, owner
	// references and finalizers; the Redis' labels, finalizers, selector
	// and conditions with their reasons and messages. The crash sweep
	// compares it with the clean run's, step by step.
	Details []string `json:"-"`
	// UIDs are the pods' UIDs, which a second run does not share: not
	// compared, but checked between the steps of one run.
	UIDs map[string]types.UID `json:"-"`
}

// withoutUIDs is s as a step's Want says it.
func (s State) withoutUIDs() State { return State{Pods: s.Pods, Status: s.Status} }

// stateOf reads the State of namespace ns, whose Redis is named redis.
func stateOf(ctx context.Context, ns, redis string) (State, error) {
	s := State{UIDs: map[string]types.UID{}, Status: "Redis gone"}
	r, err := env.Redis(ctx, ns, redis)
	switch {
	case apierrors.IsNotFound(err):
		r = nil
	case err != nil:
		return s, err
	default:
		available := meta.FindStatusCondition(r.Status.Conditions, "Available")
		progressing := meta.FindStatusCondition(r.Status.Conditions, "Progressing")
		cond := func(c *metav1.Condition) string {
			if c == nil || c.ObservedGeneration != r.Generation {
				return "unknown"
			}
			return string(c.Status)
		}
		s.Status = fmt.Sprintf("spec %d, status %d pods, %d ready, generation observed %t, Available %s, Progressing %s",
			r.Spec.Replicas, r.Status.Replicas, r.Status.ReadyReplicas, r.Status.ObservedGeneration == r.Generation,
			cond(available), cond(progressing))
		var conditions []string
		for _, c := range r.Status.Conditions {
			conditions = append(conditions, fmt.Sprintf("%s %s %s %q", c.Type, c.Status, c.Reason, c.Message))
		}
		slices.Sort(conditions)
		s.Details = append(s.Details, fmt.Sprintf("Redis %s: labels %v, finalizers %v, selector %q, conditions %v",
			r.Name, r.Labels, r.Finalizers, r.Status.Selector, conditions))
	}
	list := &corev1.PodList{}
	if err := env.Client.List(ctx, list, client.InNamespace(ns)); err != nil {
		return s, err
	}
	for _, p := range list.Items {
		owner := "no controller"
		if ref := metav1.GetControllerOf(&p); ref != nil {
			owner = ref.Kind + " " + ref.Name
			if r == nil || ref.UID != r.UID {
				owner += " (an earlier one)"
			}
		}
		desc := fmt.Sprintf("%s: %s, controlled by %s", p.Name, p.Status.Phase, owner)
		if !p.DeletionTimestamp.IsZero() {
			desc += ", terminating"
		}
		s.Pods = append(s.Pods, desc)
		s.UIDs[p.Name] = p.UID
		var images, owners []string
		for _, c := range p.Spec.Containers {
			images = append(images, c.Name+"="+c.Image)
		}
		for _, o := range p.OwnerReferences {
			owners = append(owners, fmt.Sprintf("%s %s %s controller=%t blockOwnerDeletion=%t", o.APIVersion, o.Kind, o.Name,
				ptr.Deref(o.Controller, false), ptr.Deref(o.BlockOwnerDeletion, false)))
		}
		s.Details = append(s.Details, fmt.Sprintf("pod %s: labels %v, images %v, owners %v, finalizers %v",
			p.Name, p.Labels, images, owners, p.Finalizers))
	}
	slices.Sort(s.Pods)
	slices.Sort(s.Details)
	return s, nil
}

// convergedState is the State of the scenario's Redis with n pods that
// all run, as the operator should leave it; n < 0 is the Redis deleted and
// its pods gone.
func convergedState(n int) State {
	const redis = scenarioRedis
	if n < 0 {
		return State{Status: "Redis gone"}
	}
	s := State{Status: fmt.Sprintf("spec %d, status %d pods, %d ready, generation observed true, Available True, Progressing False", n, n, n)}
	for _, name := range framework.PodNames(redis, n) {
		s.Pods = append(s.Pods, name+": Running, controlled by Redis "+redis)
	}
	return s
}

// Step is one thing a user does in a scenario, and the state the operator
// must then reach.
type Step struct {
	Name string
	Do   func(ctx context.Context, ns string) error
	// Want is the state after the step, once the operator is done.
	Want State
	// Replaced is the pod the step deletes, which comes back with a new
	// UID; every other pod that the step does not remove keeps its UID.
	Replaced string
	// Wait is how much longer than the suite's Eventually timeout the step
	// may take, e.g. for a Lease to expire first.
	Wait time.Duration
}

// scenarioRedis is the Redis that Scenario makes.
const scenarioRedis = "cache"

// scenario is what the fault specs run, a user's day with a Redis: create
// it with 3 pods, delete one, scale to 5, scale to 2, delete the Redis.
func scenario() []Step {
	kubectl := func(args ...string) func(context.Context, string) error {
		return func(ctx context.Context, ns string) error {
			_, err := env.Kubectl.Run(ctx, append(args, "-n", ns)...)
			return err
		}
	}
	return []Step{
		{Name: "create a Redis of 3", Want: convergedState(3), Do: func(ctx context.Context, ns string) error {
			_, err := env.Apply(ctx, framework.RedisManifest(ns, scenarioRedis, 3))
			return err
		}},
		{Name: "delete pod cache-1", Want: convergedState(3), Replaced: "cache-1", Do: kubectl("delete", "pod", "cache-1")},
		{Name: "scale to 5", Want: convergedState(5), Do: kubectl("scale", "redis", scenarioRedis, "--replicas=5")},
		{Name: "scale to 2", Want: convergedState(2), Do: kubectl("scale", "redis", scenarioRedis, "--replicas=2")},
		{Name: "delete the Redis", Want: convergedState(-1), Do: kubectl("delete", "redis", scenarioRedis)},
	}
}

// runScenario runs the steps in namespace ns and, after each, waits until
// the namespace is in the step's state: the same pods, controlled by the
// Redis, none terminating, none left over, the status true; and every pod
// that the step did not delete still the same object. It returns the
// states it saw.
func runScenario(ctx context.Context, ns string, steps []Step) []State {
	GinkgoHelper()
	return runScenarioWith(ctx, Default, func(step string) { By(step) }, ns, steps)
}

// runScenarioWith is runScenario asserting with g, each step said with say.
func runScenarioWith(ctx context.Context, g Gomega, say func(step string), ns string, steps []Step) []State {
	var states []State
	before := State{UIDs: map[string]types.UID{}}
	for _, step := range steps {
		say(step.Name)
		g.Expect(step.Do(ctx, ns)).To(Succeed(), "%s", step.Name)
		var now State
		g.Eventually(func(g Gomega) State {
			var err error
			now, err = stateOf(ctx, ns, scenarioRedis)
			g.Expect(err).NotTo(HaveOccurred())
			return now.withoutUIDs()
		}).WithContext(ctx).WithTimeout(framework.EventuallyTimeout()+step.Wait).Should(Equal(State{Pods: step.Want.Pods, Status: step.Want.Status}),
			"after %q, the namespace is not as it should be", step.Name)
		for name, uid := range before.UIDs {
			if got, ok := now.UIDs[name]; ok && name != step.Replaced {
				g.Expect(got).To(Equal(uid), "after %q, pod %s is another object: it was deleted and made again", step.Name, name)
			}
		}
		if step.Replaced != "" {
			g.Expect(now.UIDs[step.Replaced]).NotTo(Equal(before.UIDs[step.Replaced]), "after %q, pod %s was not replaced", step.Name, step.Replaced)
		}
		states = append(states, now)
		before = now
	}
	return states
}
