//go:build e2e

package chapter12

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"example.com/redis-operator/operator/faults"
	"example.com/redis-operator/tests/framework"
)

var _ = Describe("The operator crashed right after each of its writes in turn", Serial, func() {
	It("ends every step of the scenario as the run without a crash does", framework.Lesson, framework.CrashSweep, func(ctx SpecContext) {
		expectCrashSweep(ctx)
	})
})

var _ = Describe("The operator stopped while a Redis changes three times", Serial, func() {
	It("acts, once started, on the last state only", framework.Lesson, func(ctx SpecContext) {
		expectLastStateOnly(ctx, env.NewNamespace(ctx))
	})
})

// The bodies of the specs above. Each runs the operator under
// StartSupervised, so that when it crashes it is back at once.

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
	// Missed are the points of a first write of its name that no run
	// reached, in two tries: each is a failure too, since a point never
	// crashed at proves nothing about it. Beyond are those of a later
	// write of a name that neither try made (crashPoint.first): counted,
	// not failed.
	Missed, Beyond []crashPoint
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
	beyond := ""
	if len(s.Beyond) > 0 {
		beyond = fmt.Sprintf("; numbered beyond what the runs made: %d %v", len(s.Beyond), s.Beyond)
	}
	return fmt.Sprintf("crash sweep: %d writes in the clean run, %d distinct; %d runs; crashed right after: %s; right before a write: %d; points not reached twice: %d%s%s; %d failures%s",
		s.Writes, len(s.Names), s.Runs, strings.Join(after, ", "), s.CrashedBefore, len(s.Missed), missed, beyond, len(s.Failures), stopped)
}

// expectCrashSweep runs Scenario once with the operator counting its
// writes, then once for each crash point of that clean run (crashPoints),
// with the operator crashed there and restarted at once. A run that did
// not reach its point is made again once, and fails the sweep if it does
// not reach it then either, unless it is a later write of its name than
// the first, numbered as events fell (crashPoint.first). Every
// run that crashed must reach the clean run's state after every step,
// with the same details (framework.State.Details), and make no write
// after the last step; every write of the clean run must have been
// crashed after at least once. Each run has a namespace and an operator
// of its own (Operator.Scoped), so that sweepRunsAtOnce runs go at once.
// The sweep runs every point and reports every failing run, unless Ginkgo
// runs with --fail-fast: then it starts no run after the first failure
// (prove's mutant runs do: one failing run is the verdict).
func expectCrashSweep(ctx context.Context) {
	steps := env.Scenario()
	By("the clean run: the scenario with the operator counting its writes")
	// An API server that an earlier spec restarted maps the kind Redis
	// again only once its discovery has caught up.
	env.WaitForOwnerMapping(ctx)
	cleanNS := env.NewNamespace(ctx)
	cleanOperator := env.Operator.Scoped(cleanNS)
	Expect(cleanOperator.StartSupervised(ctx, framework.CountWrites, framework.CountWrites)).To(Succeed())
	DeferCleanup(cleanOperator.Stop)
	clean := env.RunScenario(ctx, cleanNS, steps)
	expectNoStrayWrite(ctx, cleanOperator, cleanNS)
	Expect(cleanOperator.Stop()).To(Succeed())
	Expect(cleanOperator.Exits()).To(BeEmpty(), "the operator exited during the clean run")
	Expect(cleanOperator.LoggedDeath("in the clean run")).To(BeEmpty(), "the operator panicked during the clean run")

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
		case !res.reached && !res.point.first():
			summary.Beyond = append(summary.Beyond, res.point) // fewer of that name this time, as events fell
		case !res.reached:
			summary.Missed = append(summary.Missed, res.point)
			summary.Failures = append(summary.Failures, fmt.Sprintf("crash %s: reached by neither of two runs, which made no write of that name", res.point))
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
	framework.DecidingCheck("no run failed, and every distinct write of the clean run was crashed right after at least once", func() {
		Expect(summary.Failures).To(BeEmpty(), "%s", summary)
		for _, name := range summary.Names {
			Expect(summary.CrashedAfter[name]).To(BeNumerically(">", 0), "no run crashed right after a write %q of the clean run: %s", name, summary)
		}
	})
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
func crashRun(ctx context.Context, ns string, steps []framework.Step, clean []framework.State, point crashPoint) (reached bool, failure string) {
	op := env.Operator.Scoped(ns)
	say := func(step string) { GinkgoWriter.Printf("%s: %s\n", ns, step) }
	if err := op.StartSupervised(ctx, point.vars(), framework.CountWrites); err != nil {
		return false, fmt.Sprintf("starting its operator: %v", err)
	}
	var states []framework.State
	err := runFailure(func(g Gomega) { states = env.RunScenarioWith(ctx, g, say, ns, steps) })
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
				s, err := env.StateOf(ctx, ns, framework.ScenarioRedis)
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
		failure += stray.Error() + "; "
	}
	// A panic that controller-runtime recovered, or a race, while the
	// operator recovered from its crash: the state may converge all the
	// same.
	if d := op.LoggedDeath("in the run"); d != "" {
		failure += d
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
	g.Consistently(func() []faults.Write { return framework.WritesIn(ns, op.WritesSince(offset)) }).
		WithContext(ctx).WithTimeout(strayWriteWindow).Should(BeEmpty(), "a write after the scenario's last step")
}

// expectLastStateOnly stops the operator, changes a Redis three times, and
// starts it again: it acts on what the Redis asks for now, and on nothing
// it did not see. Its writes are one create, of the one pod missing, and
// status patches.
func expectLastStateOnly(ctx context.Context, ns string) {
	steps := env.Scenario()[:1]
	Expect(env.StartSupervised(ctx, framework.CountWrites, framework.CountWrites)).To(Succeed())
	before := env.RunScenario(ctx, ns, steps)[0]
	Expect(env.Operator.Stop()).To(Succeed())

	framework.LessonStep("scaling to 5, then 1, then 4, with the operator stopped")
	for _, n := range []string{"5", "1", "4"} {
		env.MustKubectl(ctx, "scale", "redis", framework.ScenarioRedis, "-n", ns, "--replicas="+n)
	}
	offset := env.Operator.LogOffset()
	Expect(env.StartSupervised(ctx, framework.CountWrites, framework.CountWrites)).To(Succeed())
	framework.DecidingCheck("started, the operator ends with the 4 pods the Redis asks for now, the first 3 the same objects, having made one create, of cache-3, and status patches, nothing else", func() {
		after := env.RunScenario(ctx, ns, []framework.Step{{Name: "start the operator", Want: framework.ConvergedState(4), Do: func(context.Context, string) error { return nil }}})[0]
		for name, uid := range before.UIDs {
			Expect(after.UIDs[name]).To(Equal(uid), "pod %s was deleted and made again: the operator acted on a state it never saw", name)
		}
		Eventually(func(g Gomega) {
			var creates []string
			for _, w := range framework.WritesIn(ns, env.Operator.WritesSince(offset)) {
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
	})
	Expect(env.Operator.Stop()).To(Succeed())
}
