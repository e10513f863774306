//go:build e2e

package chapter03

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	. "github.com/onsi/gomega/gstruct"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	myappv1 "example.com/redis-operator/api/v1"
	"example.com/redis-operator/tests/framework"
)

var _ = Describe("A Redis", func() {
	var ns string

	BeforeEach(func(ctx SpecContext) {
		ns = env.NewNamespace(ctx)
	})

	It("is the controller owner of each of its pods", framework.Lesson, func(ctx SpecContext) {
		env.CreateRedis(ctx, ns, "cache", 3)
		redis, err := env.Redis(ctx, ns, "cache")
		Expect(err).NotTo(HaveOccurred())

		framework.LessonStep("each pod names the Redis as its controller owner, by UID")
		pods, err := env.Pods(ctx, ns, "cache")
		Expect(err).NotTo(HaveOccurred())
		Expect(pods).To(HaveLen(3))
		framework.DecidingCheck("each pod's one owner reference is the Redis, by UID, as its controller, blocking its deletion", func() {
			for _, pod := range pods {
				Expect(pod.OwnerReferences).To(ConsistOf(MatchFields(IgnoreExtras, Fields{
					"APIVersion":         Equal("myapp.example.com/v1"),
					"Kind":               Equal("Redis"),
					"Name":               Equal("cache"),
					"UID":                Equal(redis.UID),
					"Controller":         Equal(ptr.To(true)),
					"BlockOwnerDeletion": Equal(ptr.To(true)),
				})), "pod %s is not controlled by its Redis", pod.Name)
			}
		})
	})

	It("has its pods removed by the garbage collector when it goes without the operator", Serial, framework.Lesson, func(ctx SpecContext) {
		env.CreateRedis(ctx, ns, "cache", 2)
		Eventually(env.Finalizers).WithContext(ctx).WithArguments(ns, "cache").Should(HaveLen(2))

		By("stopping the operator, so nothing but Kubernetes acts")
		Expect(env.Operator.Stop()).To(Succeed())

		By("deleting the Redis and removing its finalizers by hand")
		env.MustKubectl(ctx, "delete", "redis", "cache", "-n", ns, "--wait=false")
		env.MustKubectl(ctx, "patch", "redis", "cache", "-n", ns, "--type=json",
			"-p", `[{"op": "remove", "path": "/metadata/finalizers"}]`)
		env.ExpectGone(ctx, &myappv1.Redis{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cache"}})

		framework.LessonStep("the garbage collector deletes the pods the Redis owned")
		framework.DecidingCheck("none of the Redis' pods is left", func() {
			Eventually(env.PodNamesFunc(ctx, ns, "cache")).WithContext(ctx).Should(BeEmpty(), "the garbage collector did not delete the pods")
		})
	})

	It("does not take over a pod of the same name that it does not control", framework.Lesson, func(ctx SpecContext) {
		_, err := env.Apply(ctx, framework.ForeignPodManifest(ns, "cache-0"))
		Expect(err).NotTo(HaveOccurred())

		foreign, err := env.Pod(ctx, ns, "cache-0")
		Expect(err).NotTo(HaveOccurred())

		By("creating a Redis of 2: the operator creates cache-1 and records it")
		_, err = env.Apply(ctx, framework.RedisManifest(ns, "cache", 2))
		Expect(err).NotTo(HaveOccurred())
		Eventually(env.Finalizers).WithContext(ctx).WithArguments(ns, "cache").
			Should(ContainElement("myapp.example.com/cache-1"))
		Expect(env.Pod(ctx, ns, "cache-1")).To(HaveField("ObjectMeta.Labels", HaveKeyWithValue("app.kubernetes.io/instance", "cache")))

		framework.LessonStep("the Redis neither records nor adopts cache-0, and warns about it")
		framework.DecidingCheck("the Redis records cache-1 alone, cache-0 stays the same object with no owner, and an ErrResourceExists event says why", func() {
			Consistently(func(g Gomega) {
				g.Expect(env.Finalizers(ctx, ns, "cache")).To(ConsistOf("myapp.example.com/cache-1"),
					"the Redis recorded a pod it does not control, to delete it with the Redis")
				pod, err := env.Pod(ctx, ns, "cache-0")
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(pod.UID).To(Equal(foreign.UID), "cache-0 is not the foreign pod any more")
				g.Expect(pod.OwnerReferences).To(BeEmpty(), "the operator adopted a pod it does not control")
			}).WithContext(ctx).Should(Succeed())
			Eventually(env.EventReasons).WithContext(ctx).WithArguments(ns, "Redis", "cache").
				Should(ContainElement("ErrResourceExists"), "no Warning about the pod the Redis does not control")
		})
	})

	It("still does not get back a pod deleted with kubectl, even when reconciled", func(ctx SpecContext) {
		env.CreateRedis(ctx, ns, "cache", 2)
		Eventually(env.Finalizers).WithContext(ctx).WithArguments(ns, "cache").Should(HaveLen(2))

		By("deleting cache-1, then touching the Redis so that the operator reconciles it after the delete")
		env.DeletePodAndExpectNoRebuild(ctx, ns, "cache-1", func() { env.TouchRedis(ctx, ns, "cache") })
	})
})

// Also chapter 3's lesson, in the words every later chapter proves it in.
var _ = framework.ForeignPodSpec(framework.SpecInput{Env: env, Lesson: true})
