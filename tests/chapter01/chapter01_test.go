//go:build e2e

package chapter01

import (
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	myappv1 "example.com/redis-operator/api/v1"
	"example.com/redis-operator/tests/framework"
)

var _ = Describe("A Redis", func() {
	var ns string

	BeforeEach(func(ctx SpecContext) {
		ns = env.NewNamespace(ctx)
	})

	It("gets pods <name>-0 to <name>-(N-1) with the operator's labels", framework.Lesson, func(ctx SpecContext) {
		_, err := env.Apply(ctx, framework.RedisManifest(ns, "cache", 3))
		Expect(err).NotTo(HaveOccurred())

		framework.LessonStep("the operator creates cache-0, cache-1 and cache-2, with its labels, and they run")
		framework.DecidingCheck("the Redis' pods are cache-0, cache-1 and cache-2, and they run", func() {
			env.ExpectPodsRun(ctx, ns, "cache", 3)
		})

		pods, err := env.Pods(ctx, ns, "cache")
		Expect(err).NotTo(HaveOccurred())
		framework.DecidingCheck("each pod carries the operator's labels and runs the CRD's default image", func() {
			for _, pod := range pods {
				Expect(pod.Labels).To(HaveKeyWithValue("app.kubernetes.io/name", "redis"))
				Expect(pod.Labels).To(HaveKeyWithValue("app.kubernetes.io/instance", "cache"))
				Expect(pod.Labels).To(HaveKeyWithValue("app.kubernetes.io/managed-by", "redis-operator"))
				Expect(pod.Spec.Containers).To(HaveLen(1))
				Expect(pod.Spec.Containers[0].Image).To(Equal("redis:7.0"), "the CRD defaults spec.image")
			}
		})
	})

	// Not a lesson spec: with no operator (the chapter before chapter 1),
	// nothing reconciles at all, so no failure there could show
	// idempotence. Its mutant (chapters/01-create-pods/mutants/
	// replaces-every-pod.patch) shows that it can fail.
	It("keeps exactly its pods when reconciled again", func(ctx SpecContext) {
		env.CreateRedis(ctx, ns, "cache", 2)
		uids := env.PodUIDs(ctx, ns, "cache")

		By("changing the Redis and waiting until the operator has reconciled it again")
		env.ExpectReconcile(ctx, ns, "cache", func() { env.TouchRedis(ctx, ns, "cache") })
		framework.DecidingCheck("the Redis' pods stay the same objects, and no other is made", func() {
			Consistently(func() any { return env.PodUIDs(ctx, ns, "cache") }).
				WithContext(ctx).Should(Equal(uids), "pods were recreated or duplicated")
		})
	})

	// Mutants of the CRD (a crd/ of their own) show that each can fail:
	// replicas-may-be-negative, replicas-unbounded, replicas-int-or-string.
	DescribeTable("with invalid replicas is refused by kubectl apply",
		func(ctx SpecContext, replicas string, message string) {
			By("applying a Redis with replicas " + replicas)
			out, applyErr := env.Apply(ctx, framework.RedisManifest(ns, "bad", replicas))
			_, getErr := env.Redis(ctx, ns, "bad")
			framework.DecidingCheck("kubectl apply fails with the CRD's message, and no Redis is stored", func() {
				Expect(applyErr).To(MatchError(ContainSubstring(message)), "kubectl apply accepted replicas %s: %s", replicas, out)
				Expect(getErr).To(MatchError(ContainSubstring("not found")), "a Redis with replicas %s was stored", replicas)
			})
		},
		Entry("negative", "-1", "should be greater than or equal to 0"),
		Entry("over the maximum", "11", "should be less than or equal to 10"),
		Entry("not a number", `"three"`, `must be of type integer`),
	)

	// Its mutant names-unbounded (a CRD without the rule) shows that it
	// can fail.
	It("with a name too long for its pod names is refused", func(ctx SpecContext) {
		By("applying a Redis whose name has 61 characters")
		_, err := env.Apply(ctx, framework.RedisManifest(ns, strings.Repeat("r", 61), 1))
		framework.DecidingCheck("kubectl apply fails with the CRD rule's message", func() {
			Expect(err).To(MatchError(ContainSubstring("metadata.name must be at most 60 characters")), "a Redis with a name of 61 characters was admitted")
		})
	})

	It("leaves its pods behind when deleted (the limitation chapter 2 fixes)", func(ctx SpecContext) {
		env.CreateRedis(ctx, ns, "cache", 2)

		By("deleting the Redis; the operator reconciles the delete and finds it gone")
		env.ExpectReconcile(ctx, ns, "cache", func() {
			env.MustKubectl(ctx, "delete", "redis", "cache", "-n", ns)
			env.ExpectGone(ctx, &myappv1.Redis{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cache"}})
		})
		framework.DecidingCheck("the pods stay", func() {
			Consistently(env.PodNamesFunc(ctx, ns, "cache")).WithContext(ctx).
				Should(Equal(framework.PodNames("cache", 2)), "nothing deletes the pods in chapter 1")
		})
	})
})
