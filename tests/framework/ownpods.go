package framework

import (
	"context"
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"

	myappv1 "example.com/redis-operator/api/v1"
)

// OwnPodsSpec proves chapter 8's change, which the chapters after it
// keep: the operator's cache holds only the pods labelled as managed by
// it, and a pod of its own that lost the label gets it back.
func OwnPodsSpec(in SpecInput) bool {
	checkEnv("OwnPodsSpec", in.Env)
	return Describe("The operator", func() {
		// Serial: it counts the operator's reconciles, of every namespace.
		It("caches only the pods labelled as its own: one without the label that names a Redis as its controller brings no reconcile", Serial, lessonIf(in.Lesson), func(ctx SpecContext) {
			expectUnlabelledPodUnseen(ctx, in.Env)
		})

		It("puts back the label of a pod of its own that lost it, on the same pod", lessonIf(in.Lesson), func(ctx SpecContext) {
			expectLabelRestored(ctx, in.Env)
		})
	})
}

// expectUnlabelledPodUnseen: a pod that names Redis cache as its
// controller but lacks the operator's managed-by label is not in the
// operator's cache, so its create event reaches no one. Were it in the
// cache, the event would reach the controller through the pod watch (Owns
// maps a pod to its controller), and the Redis would be reconciled.
func expectUnlabelledPodUnseen(ctx context.Context, e *Env) {
	GinkgoHelper()
	ns := e.NewNamespace(ctx)
	e.CreateRedis(ctx, ns, "cache", 1)
	e.ExpectAvailable(ctx, ns, "cache")
	redis, err := e.Redis(ctx, ns, "cache")
	Expect(err).NotTo(HaveOccurred())
	before := e.SettledReconcileTotal(ctx, ns)

	LessonStep("a pod without the operator's managed-by label that names the Redis as its controller makes it reconcile nothing")
	_, err = e.Apply(ctx, fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  namespace: %s
  name: stranger
  ownerReferences:
  - apiVersion: myapp.example.com/v1
    kind: Redis
    name: cache
    uid: %s
    controller: true
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - name: main
    image: %s
`, ns, redis.UID, myappv1.DefaultImage))
	Expect(err).NotTo(HaveOccurred())
	Eventually(func(g Gomega) corev1.PodPhase {
		p, err := e.Pod(ctx, ns, "stranger")
		g.Expect(err).NotTo(HaveOccurred())
		return p.Status.Phase
	}).WithContext(ctx).Should(Equal(corev1.PodRunning))
	DecidingCheck("while the pod runs, the operator's count of reconciles stays as it was", func() {
		Consistently(e.Operator.ReconcileTotal).WithContext(ctx).WithTimeout(5*time.Second).
			Should(Equal(before), "a pod without the managed-by label reached the controller")
	})
}

// expectLabelRestored: out of the operator's cache once it lost the
// label, the pod is still the one the operator made: it gets its label
// back, not a replacement.
func expectLabelRestored(ctx context.Context, e *Env) {
	GinkgoHelper()
	ns := e.NewNamespace(ctx)
	e.CreateRedis(ctx, ns, "cache", 3)
	e.ExpectAvailable(ctx, ns, "cache")
	uid := e.PodUIDs(ctx, ns, "cache")["cache-2"]

	LessonStep("removing the managed-by label of cache-2: the operator puts it back on the same pod")
	e.MustKubectl(ctx, "label", "pod", "cache-2", "-n", ns, "app.kubernetes.io/managed-by-")
	DecidingCheck("cache-2, the same pod, carries the managed-by label again", func() {
		Eventually(func(g Gomega) map[string]string {
			p, err := e.Pod(ctx, ns, "cache-2")
			g.Expect(err).NotTo(HaveOccurred(), "cache-2 is gone: the pod was deleted, to be replaced")
			g.Expect(p.UID).To(Equal(uid), "the pod was replaced")
			return p.Labels
		}).WithContext(ctx).Should(HaveKeyWithValue("app.kubernetes.io/managed-by", "redis-operator"), "the pod did not get its label back")
	})
	e.ExpectAvailable(ctx, ns, "cache")
}
