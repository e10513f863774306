package chapter07

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	myappv1 "example.com/redis-operator/api/v1"
	"example.com/redis-operator/tests/framework"
)

// The behaviour of chapters 5 and 6, unchanged.

var _ = Describe("A pod deleted with kubectl", func() {
	var ns string

	BeforeEach(func(ctx SpecContext) {
		ns = env.NewNamespace(ctx)
		env.CreateRedis(ctx, ns, "cache", 3)
	})

	It("comes back with the same name, a new UID, and runs", func(ctx SpecContext) {
		env.ExpectPodComesBack(ctx, ns)
	})

	DescribeTable("comes back also when deleted together with others, without a reconcile error",
		func(ctx SpecContext, deleteArgs ...string) {
			env.ExpectPodsComeBackTogether(ctx, ns, deleteArgs...)
		},
		Entry("by name", "delete", "pod", "cache-0", "cache-1", "cache-2"),
		Entry("by label", "delete", "pods", "-l", "app.kubernetes.io/instance=cache"),
		Entry("forced, without grace period", "delete", "pod", "cache-0", "cache-1", "cache-2", "--force", "--grace-period=0"),
	)

	It("comes back each time it is deleted", func(ctx SpecContext) {
		env.ExpectPodComesBackEachTime(ctx, ns)
	})

	It("does not stop the Redis from being deleted, leaving nothing behind", func(ctx SpecContext) {
		env.ExpectRedisDeletionLeavesNothing(ctx, ns)
	})
})

var _ = Describe("kubectl scale", func() {
	It("deletes the highest pods going down, and creates new ones going up", func(ctx SpecContext) {
		ns := env.NewNamespace(ctx)
		env.CreateRedis(ctx, ns, "cache", 3)
		env.ExpectScaleDownAndUp(ctx, ns)
	})
})

var _ = Describe("A Redis' status", func() {
	var ns string

	BeforeEach(func(ctx SpecContext) {
		ns = env.NewNamespace(ctx)
		env.CreateRedis(ctx, ns, "cache", 3)
	})

	It("counts the ready pods, is Available once all are, and shows in kubectl get", func(ctx SpecContext) {
		env.ExpectStatusShowsReadyPods(ctx, ns)
	})

	It("follows a scale-down, and becomes Available again", func(ctx SpecContext) {
		env.ExpectStatusFollowsScaleDown(ctx, ns)
	})

	It("is not written while nothing changes: reconciling a steady Redis sends no write", func(ctx SpecContext) {
		env.ExpectNoWriteWhenSteady(ctx, ns)
	})
})

var _ = Describe("A pod that ended (phase Failed, as after an eviction)", func() {
	It("is replaced", func(ctx SpecContext) {
		ns := env.NewNamespace(ctx)
		env.CreateRedis(ctx, ns, "cache", 3)
		env.ExpectEndedPodReplaced(ctx, ns)
	})
})

var _ = Describe("A Redis", func() {
	It("leaves alone, when deleted, a pod that took the name of one of its pods and that it does not control", func(ctx SpecContext) {
		env.ExpectForeignPodSurvivesRedisDeletion(ctx, env.NewNamespace(ctx))
	})
})

// What chapter 7 changes.

// legacyFinalizers are the finalizers chapter 6 puts on Redis cache with
// three pods.
var legacyFinalizers = []string{
	myappv1.GroupName + "/cache-0", myappv1.GroupName + "/cache-1", myappv1.GroupName + "/cache-2",
}

// addLegacyFinalizers gives Redis cache the finalizers chapter 6 would
// have put on it, as if chapter 6's operator had run it, and the extra
// ones (another controller's, which must stay). Whatever the spec's
// outcome, the finalizers are removed at the end, so that the namespace
// can go.
func addLegacyFinalizers(ctx SpecContext, ns string, extra ...string) {
	GinkgoHelper()
	finalizers, err := json.Marshal(append(slices.Clone(legacyFinalizers), extra...))
	Expect(err).NotTo(HaveOccurred())
	env.MustKubectl(ctx, "patch", "redis", "cache", "-n", ns, "--type=merge", "-p",
		fmt.Sprintf(`{"metadata":{"finalizers":%s}}`, finalizers))
	DeferCleanup(func(ctx SpecContext) {
		// NotFound, once the spec has deleted the Redis, is fine.
		_, _ = env.Kubectl.Run(ctx, "patch", "redis", "cache", "-n", ns, "--type=merge", "-p", `{"metadata":{"finalizers":null}}`)
	})
}

var _ = Describe("A Redis, with chapter 7", func() {
	var ns string

	BeforeEach(func(ctx SpecContext) {
		ns = env.NewNamespace(ctx)
		env.CreateRedis(ctx, ns, "cache", 3)
	})

	It("carries no finalizer, and its pods go with it through the garbage collector", framework.Lesson, func(ctx SpecContext) {
		env.SettledReconcileTotal(ctx, ns)
		framework.LessonStep("the Redis carries no finalizer, and deleting it takes its pods")
		Expect(env.Finalizers(ctx, ns, "cache")).To(BeEmpty(), "the Redis carries finalizers")

		env.MustKubectl(ctx, "delete", "redis", "cache", "-n", ns, "--wait=false")
		env.ExpectGone(ctx, &myappv1.Redis{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cache"}})
		Eventually(env.PodNamesFunc(ctx, ns, "cache")).WithContext(ctx).Should(BeEmpty())
	})

	It("left by chapter 6 with a finalizer per pod loses them, keeps its pods, and still deletes cleanly", framework.Lesson, func(ctx SpecContext) {
		uids := env.PodUIDs(ctx, ns, "cache")
		By("stopping the operator and putting chapter 6's finalizers on the Redis")
		Expect(env.Operator.Stop()).To(Succeed())
		addLegacyFinalizers(ctx, ns, "example.org/keep")
		Expect(env.Operator.Start(ctx)).To(Succeed())

		framework.LessonStep("the operator removes the per-pod finalizers and no other")
		Eventually(env.Finalizers).WithContext(ctx).WithArguments(ns, "cache").Should(Equal([]string{"example.org/keep"}),
			"the per-pod finalizers were not removed, or another controller's was")
		env.SettledReconcileTotal(ctx, ns)
		Expect(env.PodUIDs(ctx, ns, "cache")).To(Equal(uids), "a pod was replaced during the take-over")

		By("deleting the Redis, and the other controller removing its finalizer")
		env.MustKubectl(ctx, "delete", "redis", "cache", "-n", ns, "--wait=false")
		env.MustKubectl(ctx, "patch", "redis", "cache", "-n", ns, "--type=json", "-p",
			`[{"op":"test","path":"/metadata/finalizers","value":["example.org/keep"]},{"op":"remove","path":"/metadata/finalizers"}]`)
		env.ExpectGone(ctx, &myappv1.Redis{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cache"}})
		Eventually(env.PodNamesFunc(ctx, ns, "cache")).WithContext(ctx).Should(BeEmpty())
	})

	It("deleted while it still carries chapter 6's finalizers does not stay in Terminating", func(ctx SpecContext) {
		By("stopping the operator, putting chapter 6's finalizers on the Redis and deleting it")
		Expect(env.Operator.Stop()).To(Succeed())
		addLegacyFinalizers(ctx, ns)
		env.MustKubectl(ctx, "delete", "redis", "cache", "-n", ns, "--wait=false")
		redis, err := env.Redis(ctx, ns, "cache")
		Expect(err).NotTo(HaveOccurred())
		Expect(redis.DeletionTimestamp).NotTo(BeNil())

		By("starting the operator: the Redis goes, and its pods with it")
		Expect(env.Operator.Start(ctx)).To(Succeed())
		env.ExpectGone(ctx, &myappv1.Redis{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cache"}})
		Eventually(env.PodNamesFunc(ctx, ns, "cache")).WithContext(ctx).Should(BeEmpty())
	})

	It("is not reconciled for a write of its status", framework.Lesson, func(ctx SpecContext) {
		env.ExpectAvailable(ctx, ns, "cache")
		before := env.SettledReconcileTotal(ctx, ns)

		// Any status write is an update event of the Redis, the operator's
		// own included; this one is easy to tell apart.
		framework.LessonStep("a write of the status alone makes the operator reconcile nothing")
		env.MustKubectl(ctx, "patch", "redis", "cache", "-n", ns, "--subresource=status", "--type=merge",
			"-p", `{"status":{"readyReplicas":0}}`)
		Consistently(env.Operator.ReconcileTotal).WithContext(ctx).WithTimeout(5*time.Second).
			Should(Equal(before), "a status write made the operator reconcile")
	})
})

var _ = Describe("A pod, with chapter 7", func() {
	It("that lost the operator's labels gets them back, the same pod", func(ctx SpecContext) {
		ns := env.NewNamespace(ctx)
		env.CreateRedis(ctx, ns, "cache", 3)
		env.ExpectAvailable(ctx, ns, "cache")
		uid := env.PodUIDs(ctx, ns, "cache")["cache-2"]

		// Without the label, the pod leaves the operator's cache.
		env.MustKubectl(ctx, "label", "pod", "cache-2", "-n", ns, "app.kubernetes.io/managed-by-")

		Eventually(func(g Gomega) map[string]string {
			p, err := env.Pod(ctx, ns, "cache-2")
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(p.UID).To(Equal(uid), "the pod was replaced")
			return p.Labels
		}).WithContext(ctx).Should(HaveKeyWithValue("app.kubernetes.io/managed-by", "redis-operator"))
		env.ExpectAvailable(ctx, ns, "cache")
	})
})

var _ = Describe("The operator, with chapter 7", func() {
	It("reconciles several Redis objects at once, up to 4 by default, and never one twice at once", framework.Lesson, func(ctx SpecContext) {
		ns := env.NewNamespace(ctx)
		env.SettledReconcileTotal(ctx, ns)
		offset := env.Operator.LogOffset()
		var manifests []string
		for i := range 8 {
			manifests = append(manifests, framework.RedisManifest(ns, fmt.Sprintf("cache%d", i), 1))
		}

		framework.LessonStep("creating 8 Redis objects with one kubectl apply: two or more are reconciled at the same time")
		_, err := env.Apply(ctx, strings.Join(manifests, "---\n"))
		Expect(err).NotTo(HaveOccurred())
		Eventually(env.Operator.ReconcileOverlapSince).WithContext(ctx).WithArguments(offset).
			Should(HaveField("MaxObjects", BeNumerically(">=", 2)), "the operator never reconciled two Redis objects at once")

		By("all 8 get their pod, with at most 4 reconciles at once, and no Redis reconciled twice at once")
		for i := range 8 {
			env.ExpectPodsRun(ctx, ns, fmt.Sprintf("cache%d", i), 1)
		}
		overlap := env.Operator.ReconcileOverlapSince(offset)
		Expect(overlap.MaxObjects).To(BeNumerically("<=", 4))
		Expect(overlap.SameObject).To(BeEmpty(), "a Redis was reconciled twice at once")
	})

	It("does not cache or watch pods that it did not create", framework.Lesson, func(ctx SpecContext) {
		ns := env.NewNamespace(ctx)
		env.CreateRedis(ctx, ns, "cache", 1)
		env.ExpectAvailable(ctx, ns, "cache")
		redis, err := env.Redis(ctx, ns, "cache")
		Expect(err).NotTo(HaveOccurred())
		before := env.SettledReconcileTotal(ctx, ns)

		framework.LessonStep("a pod without the operator's managed-by label that names the Redis as its controller makes it reconcile nothing")
		// Were it in the cache, its create event would reach the
		// controller (through Owns in chapter 7, the hand-written handler
		// in chapter 6), and the Redis would be reconciled.
		_, err = env.Apply(ctx, fmt.Sprintf(`apiVersion: v1
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
			p, err := env.Pod(ctx, ns, "stranger")
			g.Expect(err).NotTo(HaveOccurred())
			return p.Status.Phase
		}).WithContext(ctx).Should(Equal(corev1.PodRunning))
		Consistently(env.Operator.ReconcileTotal).WithContext(ctx).WithTimeout(5*time.Second).
			Should(Equal(before), "a pod without the managed-by label reached the controller")
	})
})
