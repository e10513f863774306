package framework

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	myappv1 "example.com/redis-operator/api/v1"
)

// NoFinalizerSpec proves chapter 7's change, which the chapters after it
// keep: a Redis carries no finalizer, its pods go with it through the
// garbage collector, and a Redis that chapters 2 to 6 left with a
// finalizer per pod loses them. Serial: it counts reconciles and stops
// the operator.
func NoFinalizerSpec(in SpecInput) bool {
	checkEnv("NoFinalizerSpec", in.Env)
	return Describe("A Redis without finalizers", Serial, func() {
		e := in.Env
		var ns string

		BeforeEach(func(ctx SpecContext) { ns = newCache(ctx, e, false) })

		It("carries no finalizer, and its pods go with it through the garbage collector", lessonIf(in.Lesson), func(ctx SpecContext) {
			expectNoFinalizerPodsGoWithRedis(ctx, e, ns)
		})

		It("left by an older chapter with a finalizer per pod loses them, keeps its pods, and still deletes cleanly", lessonIf(in.Lesson), func(ctx SpecContext) {
			expectLegacyFinalizersRemoved(ctx, e, ns)
		})

		It("deleted while it still carries an older chapter's finalizers does not stay in Terminating", func(ctx SpecContext) {
			expectDeletedWithLegacyFinalizersGoes(ctx, e, ns)
		})
	})
}

// Spec bodies of chapter 7 (no finalizer, and the migration of the
// per-pod finalizers of chapters 2 to 6), which the chapters after it run
// unchanged. Each starts from Redis cache with three running pods.

// legacyFinalizers are the finalizers chapters 2 to 6 put on Redis cache
// with three pods.
var legacyFinalizers = []string{
	myappv1.GroupName + "/cache-0", myappv1.GroupName + "/cache-1", myappv1.GroupName + "/cache-2",
}

// addLegacyFinalizers gives Redis cache the finalizers chapter 6 would
// have put on it, as if chapter 6's operator had run it, and the extra
// ones (another controller's, which must stay). Whatever the spec's
// outcome, the finalizers are removed at the end, so that the namespace
// can go.
func addLegacyFinalizers(ctx context.Context, e *Env, ns string, extra ...string) {
	GinkgoHelper()
	finalizers, err := json.Marshal(append(slices.Clone(legacyFinalizers), extra...))
	Expect(err).NotTo(HaveOccurred())
	e.MustKubectl(ctx, "patch", "redis", "cache", "-n", ns, "--type=merge", "-p",
		fmt.Sprintf(`{"metadata":{"finalizers":%s}}`, finalizers))
	DeferCleanup(func(ctx SpecContext) {
		// NotFound, once the spec has deleted the Redis, is fine.
		_, _ = e.Kubectl.Run(ctx, "patch", "redis", "cache", "-n", ns, "--type=merge", "-p", `{"metadata":{"finalizers":null}}`)
	})
}

// expectNoFinalizerPodsGoWithRedis: Redis cache carries no finalizer, and
// deleting it deletes its pods (through the garbage collector).
func expectNoFinalizerPodsGoWithRedis(ctx context.Context, e *Env, ns string) {
	GinkgoHelper()
	e.SettledReconcileTotal(ctx, ns)
	LessonStep("the Redis carries no finalizer, and deleting it takes its pods")
	finalizers, err := e.Finalizers(ctx, ns, "cache")
	Expect(err).NotTo(HaveOccurred())
	DecidingCheck("the Redis has no finalizer", func() {
		Expect(finalizers).To(BeEmpty(), "the Redis carries finalizers")
	})

	e.MustKubectl(ctx, "delete", "redis", "cache", "-n", ns, "--wait=false")
	DecidingCheck("once it is deleted, the Redis goes, and none of its pods is left", func() {
		e.ExpectGone(ctx, &myappv1.Redis{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cache"}})
		Eventually(e.PodNamesFunc(ctx, ns, "cache")).WithContext(ctx).Should(BeEmpty(), "the pods of the deleted Redis are still there")
	})
}

// expectLegacyFinalizersRemoved: Redis cache, given chapter 6's per-pod
// finalizers and another controller's while the operator was stopped,
// loses the per-pod ones and keeps its pods, the same objects; deleted,
// it goes once the other controller lets it.
func expectLegacyFinalizersRemoved(ctx context.Context, e *Env, ns string) {
	GinkgoHelper()
	uids := e.PodUIDs(ctx, ns, "cache")
	By("stopping the operator and putting an older chapter's per-pod finalizers on the Redis")
	Expect(e.Operator.Stop()).To(Succeed())
	addLegacyFinalizers(ctx, e, ns, "example.org/keep")
	Expect(e.Operator.Start(ctx)).To(Succeed())

	LessonStep("the operator removes the per-pod finalizers and no other")
	DecidingCheck("the Redis' one finalizer is example.org/keep", func() {
		Eventually(e.Finalizers).WithContext(ctx).WithArguments(ns, "cache").Should(Equal([]string{"example.org/keep"}),
			"the per-pod finalizers were not removed, or another controller's was")
	})
	e.SettledReconcileTotal(ctx, ns)
	after := e.PodUIDs(ctx, ns, "cache")
	DecidingCheck("the Redis' pods are the same objects", func() {
		Expect(after).To(Equal(uids), "a pod was replaced during the take-over")
	})

	By("deleting the Redis, and the other controller removing its finalizer")
	e.MustKubectl(ctx, "delete", "redis", "cache", "-n", ns, "--wait=false")
	e.MustKubectl(ctx, "patch", "redis", "cache", "-n", ns, "--type=json", "-p",
		`[{"op":"test","path":"/metadata/finalizers","value":["example.org/keep"]},{"op":"remove","path":"/metadata/finalizers"}]`)
	e.ExpectGone(ctx, &myappv1.Redis{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cache"}})
	Eventually(e.PodNamesFunc(ctx, ns, "cache")).WithContext(ctx).Should(BeEmpty())
}

// expectDeletedWithLegacyFinalizersGoes: Redis cache, deleted while the
// operator was stopped and while it carried chapter 6's finalizers, goes
// with its pods once the operator runs.
func expectDeletedWithLegacyFinalizersGoes(ctx context.Context, e *Env, ns string) {
	GinkgoHelper()
	By("stopping the operator, putting an older chapter's per-pod finalizers on the Redis and deleting it")
	Expect(e.Operator.Stop()).To(Succeed())
	addLegacyFinalizers(ctx, e, ns)
	e.MustKubectl(ctx, "delete", "redis", "cache", "-n", ns, "--wait=false")
	redis, err := e.Redis(ctx, ns, "cache")
	Expect(err).NotTo(HaveOccurred())
	Expect(redis.DeletionTimestamp).NotTo(BeNil())

	By("starting the operator: the Redis goes, and its pods with it")
	Expect(e.Operator.Start(ctx)).To(Succeed())
	DecidingCheck("the Redis goes, and none of its pods is left", func() {
		e.ExpectGone(ctx, &myappv1.Redis{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cache"}})
		Eventually(e.PodNamesFunc(ctx, ns, "cache")).WithContext(ctx).Should(BeEmpty(), "the pods of the deleted Redis are still there")
	})
}
