//go:build e2e

package chapter13

import (
	"context"
	"fmt"
	"strings"
	"syscall"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/types"

	"example.com/redis-operator/operator/faults"
	"example.com/redis-operator/tests/framework"
)

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

// expectStaleCacheSparesForeignPod holds the operator's pod watch, so that
// its cache still shows pod cache-2 after it is deleted and someone else
// makes a pod of that name. A scale-down that asks the operator to delete
// cache-2 then meets the UID precondition of its delete, which the API
// server refuses for the other pod; once the watch goes on, the operator
// sees that cache-2 is not its own and leaves it alone.
func expectStaleCacheSparesForeignPod(ctx context.Context, ns string) {
	Expect(env.StartSupervised(ctx, append([]string{faults.EnvStalePods + "=true"}, framework.CountWrites...), framework.CountWrites)).To(Succeed())
	env.RunScenario(ctx, ns, env.Scenario()[:1])

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
	env.MustKubectl(ctx, "scale", "redis", framework.ScenarioRedis, "-n", ns, "--replicas=2")
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
	framework.DecidingCheck("pod cache-2 stays the pod no Redis controls; the API server refused the operator's delete for its UID", func() {
		expectSameObject(ctx, ns, "cache-2", foreign.UID)
		Expect(deletes[0].Error).To(ContainSubstring("UID in the precondition"), "the API server did not refuse the delete for its UID")
	})

	By("releasing the pod watch: the operator sees the pod it did not make")
	Expect(env.Operator.Signal(syscall.SIGUSR2)).To(Succeed())
	framework.DecidingCheck("released, the operator leaves the pod it did not make alone", func() {
		Eventually(func(g Gomega) framework.State {
			s, err := env.StateOf(ctx, ns, framework.ScenarioRedis)
			g.Expect(err).NotTo(HaveOccurred())
			return s.WithoutUIDs()
		}).WithContext(ctx).Should(Equal(framework.State{
			Pods:   append(framework.ConvergedState(2).Pods, "cache-2: Running, controlled by no controller"),
			Status: framework.ConvergedState(2).Status,
		}), "the namespace is not as it should be")
		expectSameObject(ctx, ns, "cache-2", foreign.UID)
	})
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
	vars := append([]string{faults.EnvConflictOnce + "=true"}, framework.CountWrites...)
	offset := env.Operator.LogOffset()
	Expect(env.StartSupervised(ctx, vars, vars)).To(Succeed())
	framework.LessonStep("each write the operator makes is answered with 409 Conflict the first time")
	steps := env.Scenario()
	last := len(steps) - 1
	env.RunScenario(ctx, ns, steps[:last])
	deleting := env.Operator.LogOffset()
	env.RunScenario(ctx, ns, steps[last:])
	Expect(env.Operator.Stop()).To(Succeed())
	Expect(env.Operator.Exits()).To(BeEmpty())

	By("each create and delete refused before the Redis was deleted was made again")

	// Only this spec's namespace: an earlier spec's Redis may still be
	// reconciled while its namespace goes, and its refused writes, never
	// needed again, are not made again.
	log := env.Operator.LogSince(offset)
	writes := framework.WritesIn(ns, faults.WritesIn(log))
	// Each write refused before the Redis was deleted must be made again.
	// Once it is deleted, a reconcile that still found it in the cache may
	// have a write refused that the next reconcile, which finds it gone,
	// rightly does not make.
	needed := len(framework.WritesIn(ns, faults.WritesIn(log[:deleting-offset])))
	// A status patch is not held to that. What it sends is the difference
	// between the Redis the cache showed and the status computed, and
	// "the same write" is the same patch; but the next reconcile computes
	// from what the cache shows then. A patch computed while the cache was
	// behind the operator's own last patch differs from that one, and is
	// refused as a write of its own; the next reconcile, from a cache that
	// caught up, finds the status right and rightly writes nothing
	// (updateStatus says so). What each refused patch was for, the
	// status, is checked at the end of each step (RunScenario).
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
		framework.DecidingCheck(fmt.Sprintf("write %s, refused, was made again", w), func() {
			Expect(retried).To(BeTrue(), "write %s was refused and never made again", w)
		})
		remade++
	}
	Expect(remade).To(BeNumerically(">", 0), "no create or delete was refused: does the operator read %s?", faults.EnvConflictOnce)
	AddReportEntry("conflicts", fmt.Sprintf("%d writes, %d refused with 409 Conflict; the %d creates and deletes among them each made again", len(writes), refused, remade), ReportEntryVisibilityAlways)
}
