package chapter06

import (
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	myappv1 "example.com/redis-operator/api/v1"
	"example.com/redis-operator/tests/framework"
)

// expectAvailable waits until the Redis' Available condition is True for
// its current generation.
func expectAvailable(ctx SpecContext, ns, name string) {
	GinkgoHelper()
	Eventually(func(g Gomega) {
		redis, err := env.Redis(ctx, ns, name)
		g.Expect(err).NotTo(HaveOccurred())
		available := meta.FindStatusCondition(redis.Status.Conditions, "Available")
		g.Expect(available).NotTo(BeNil(), "no Available condition")
		g.Expect(available.ObservedGeneration).To(Equal(redis.Generation))
		g.Expect(available.Status).To(Equal(metav1.ConditionTrue), "Available: %s", available.Message)
	}).WithContext(ctx).Should(Succeed(), "Redis %s did not become Available", name)
}

var _ = Describe("kubectl scale", func() {
	It("deletes the highest pods and forgets them going down, and creates new ones going up", framework.Lesson, func(ctx SpecContext) {
		ns := env.NewNamespace(ctx)
		env.CreateRedis(ctx, ns, "cache", 3)
		Eventually(env.Finalizers).WithContext(ctx).WithArguments(ns, "cache").Should(HaveLen(3))
		kept := env.PodUIDs(ctx, ns, "cache")["cache-0"]

		By("scaling down to 1")
		env.MustKubectl(ctx, "scale", "redis/cache", "--replicas=1", "-n", ns)
		Eventually(env.PodNamesFunc(ctx, ns, "cache")).WithContext(ctx).Should(Equal([]string{"cache-0"}))
		Eventually(env.Finalizers).WithContext(ctx).WithArguments(ns, "cache").Should(ConsistOf(myappv1.GroupName + "/cache-0"))
		Expect(env.PodUIDs(ctx, ns, "cache")).To(HaveKeyWithValue("cache-0", kept), "the pod that stays was replaced")

		By("scaling up to 4")
		env.MustKubectl(ctx, "scale", "redis/cache", "--replicas=4", "-n", ns)
		Eventually(env.PodNamesFunc(ctx, ns, "cache")).WithContext(ctx).Should(Equal(framework.PodNames("cache", 4)))
		Eventually(env.Finalizers).WithContext(ctx).WithArguments(ns, "cache").Should(HaveLen(4))
		Consistently(env.EventReasons).WithContext(ctx).WithArguments(ns, "Redis", "cache").
			ShouldNot(ContainElement("SuccessfulRebuild"), "a pod created by a scale-up was called a rebuild")
	})
})

var _ = Describe("A Redis' status", func() {
	var ns string

	BeforeEach(func(ctx SpecContext) {
		ns = env.NewNamespace(ctx)
		env.CreateRedis(ctx, ns, "cache", 3)
	})

	It("counts the ready pods, is Available once all are, and shows in kubectl get", framework.Lesson, func(ctx SpecContext) {
		expectAvailable(ctx, ns, "cache")

		redis, err := env.Redis(ctx, ns, "cache")
		Expect(err).NotTo(HaveOccurred())
		Expect(redis.Status.Replicas).To(BeEquivalentTo(3))
		Expect(redis.Status.ReadyReplicas).To(BeEquivalentTo(3))
		Expect(redis.Status.ObservedGeneration).To(Equal(redis.Generation))
		Expect(redis.Status.Selector).To(Equal("app.kubernetes.io/instance=cache,app.kubernetes.io/name=redis"))
		progressing := meta.FindStatusCondition(redis.Status.Conditions, "Progressing")
		Expect(progressing).NotTo(BeNil())
		Expect(progressing.Status).To(Equal(metav1.ConditionFalse))
		Expect(progressing.Reason).To(Equal("Complete"))

		out := env.MustKubectl(ctx, "get", "redis", "cache", "-n", ns)
		Expect(strings.Fields(out)).To(HaveExactElements("NAME", "DESIRED", "READY", "AGE", "cache", "3", "3", Not(BeEmpty())))
	})

	It("follows a scale-down, and becomes Available again", framework.Lesson, func(ctx SpecContext) {
		expectAvailable(ctx, ns, "cache")
		env.MustKubectl(ctx, "scale", "redis/cache", "--replicas=1", "-n", ns)

		Eventually(func(g Gomega) {
			redis, err := env.Redis(ctx, ns, "cache")
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(redis.Status.ObservedGeneration).To(Equal(redis.Generation))
			g.Expect(redis.Status.Replicas).To(BeEquivalentTo(1))
			g.Expect(redis.Status.ReadyReplicas).To(BeEquivalentTo(1))
			g.Expect(meta.IsStatusConditionTrue(redis.Status.Conditions, "Available")).To(BeTrue())
		}).WithContext(ctx).Should(Succeed())
	})

	It("is not written while nothing changes: reconciling a steady Redis sends no write", func(ctx SpecContext) {
		expectAvailable(ctx, ns, "cache")

		// A status update that changes nothing still costs a request (and
		// leaves the resourceVersion as it was): count the requests.
		var before float64
		env.ExpectReconcile(ctx, ns, func() {
			var err error
			before, err = env.Operator.WriteRequests(ctx)
			Expect(err).NotTo(HaveOccurred())
			env.TouchRedis(ctx, ns, "cache")
		})
		Expect(env.Operator.WriteRequests(ctx)).To(Equal(before), "the reconcile of a steady Redis wrote to the API server")
	})
})

var _ = Describe("A pod", func() {
	var ns string

	BeforeEach(func(ctx SpecContext) {
		ns = env.NewNamespace(ctx)
		env.CreateRedis(ctx, ns, "cache", 3)
		Eventually(env.Finalizers).WithContext(ctx).WithArguments(ns, "cache").Should(HaveLen(3))
	})

	It("that ended (phase Failed, as after an eviction) is replaced", framework.Lesson, func(ctx SpecContext) {
		uids := env.PodUIDs(ctx, ns, "cache")
		Eventually(func(g Gomega) corev1.PodPhase {
			p, err := env.Pod(ctx, ns, "cache-1")
			g.Expect(err).NotTo(HaveOccurred())
			return p.Status.Phase
		}).WithContext(ctx).Should(Equal(corev1.PodRunning))

		env.MustKubectl(ctx, "patch", "pod", "cache-1", "-n", ns, "--subresource=status", "--type=merge",
			"-p", `{"status":{"phase":"Failed","reason":"Evicted","message":"made to end by the suite"}}`)

		env.ExpectRebuilt(ctx, ns, "cache-1", uids["cache-1"])
	})

	It("deleted with kubectl comes back with the same name, a new UID, and runs", func(ctx SpecContext) {
		env.ExpectPodComesBack(ctx, ns)
	})
})

var _ = Describe("A Redis", func() {
	It("leaves alone, when deleted, a pod that took a recorded name and that it does not control", func(ctx SpecContext) {
		env.ExpectForeignPodSurvivesRedisDeletion(ctx, env.NewNamespace(ctx))
	})
})
