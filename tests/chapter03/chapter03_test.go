package chapter03

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	. "github.com/onsi/gomega/gstruct"
	"k8s.io/utils/ptr"
)

var _ = Describe("A Redis", func() {
	var ns string

	BeforeEach(func(ctx SpecContext) {
		ns = env.NewNamespace(ctx)
	})

	It("is the controller owner of each of its pods", func(ctx SpecContext) {
		env.CreateRedis(ctx, ns, "cache", 3)
		uid, err := env.JSONPath(ctx, ns, "redis/cache", "{.metadata.uid}")
		Expect(err).NotTo(HaveOccurred())

		pods, err := env.Pods(ctx, ns, "cache")
		Expect(err).NotTo(HaveOccurred())
		Expect(pods).To(HaveLen(3))
		for _, pod := range pods {
			Expect(pod.OwnerReferences).To(ConsistOf(MatchFields(IgnoreExtras, Fields{
				"APIVersion":         Equal("myapp.example.com/v1"),
				"Kind":               Equal("Redis"),
				"Name":               Equal("cache"),
				"UID":                BeEquivalentTo(uid),
				"Controller":         Equal(ptr.To(true)),
				"BlockOwnerDeletion": Equal(ptr.To(true)),
			})), "pod %s", pod.Name)
		}
	})

	It("has its pods removed by the garbage collector when it goes without the operator", func(ctx SpecContext) {
		env.CreateRedis(ctx, ns, "cache", 2)
		Eventually(env.Finalizers).WithContext(ctx).WithArguments(ns, "redis/cache").Should(HaveLen(2))

		By("stopping the operator, so nothing but Kubernetes acts")
		Expect(env.Operator.Stop()).To(Succeed())

		By("deleting the Redis and removing its finalizers by hand")
		env.MustKubectl(ctx, "delete", "redis", "cache", "-n", ns, "--wait=false")
		env.MustKubectl(ctx, "patch", "redis", "cache", "-n", ns, "--type=json",
			"-p", `[{"op": "remove", "path": "/metadata/finalizers"}]`)
		env.ExpectGone(ctx, ns, "redis/cache")

		By("the garbage collector deletes the pods it owned")
		Eventually(env.PodNamesFunc(ctx, ns, "cache")).WithContext(ctx).Should(BeEmpty())
	})

	It("does not take over a pod of the same name that it does not control", func(ctx SpecContext) {
		_, err := env.Apply(ctx, `apiVersion: v1
kind: Pod
metadata:
  name: cache-0
  namespace: `+ns+`
spec:
  containers:
  - name: main
    image: busybox
`)
		Expect(err).NotTo(HaveOccurred())

		_, err = env.Apply(ctx, `apiVersion: myapp.example.com/v1
kind: Redis
metadata:
  name: cache
  namespace: `+ns+`
spec:
  replicas: 2
`)
		Expect(err).NotTo(HaveOccurred())

		By("creating the pod it can, and warning about the one it cannot")
		Eventually(env.Pod).WithContext(ctx).WithArguments(ns, "cache-1").Should(Not(BeNil()))
		Eventually(env.EventReasons).WithContext(ctx).WithArguments(ns, "Redis", "cache").
			Should(ContainElement("ErrResourceExists"))
		Consistently(env.JSONPath).WithContext(ctx).WithArguments(ns, "pod/cache-0", "{.metadata.ownerReferences}").
			Should(BeEmpty(), "the operator adopted a pod it does not control")
		Expect(env.Finalizers(ctx, ns, "redis/cache")).To(ConsistOf("myapp.example.com/cache-1"))
	})

	It("still does not get back a pod deleted with kubectl", func(ctx SpecContext) {
		env.CreateRedis(ctx, ns, "cache", 2)
		Eventually(env.Finalizers).WithContext(ctx).WithArguments(ns, "redis/cache").Should(HaveLen(2))

		env.DeletePodAndExpectNoRebuild(ctx, ns, "cache-1")
	})
})
