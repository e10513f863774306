package framework

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	myappv1 "example.com/redis-operator/api/v1"
)

// Spec bodies that several chapters' suites share, unchanged: the
// behaviour a chapter introduces stays proven in the chapters after it.

// ExpectPodComesBack: a pod of Redis cache (three pods, recorded) deleted
// with kubectl comes back with the same name and a new UID and runs, while
// the other pods stay the same objects, and the operator says so in a
// SuccessfulRebuild event.
func (e *Env) ExpectPodComesBack(ctx context.Context, ns string) {
	GinkgoHelper()
	uids := e.PodUIDs(ctx, ns, "cache")

	e.MustKubectl(ctx, "delete", "pod", "cache-1", "-n", ns)

	e.ExpectRebuilt(ctx, ns, "cache-1", uids["cache-1"])
	after := e.PodUIDs(ctx, ns, "cache")
	Expect(after).To(HaveKeyWithValue("cache-0", uids["cache-0"]), "an untouched pod was replaced")
	Expect(after).To(HaveKeyWithValue("cache-2", uids["cache-2"]), "an untouched pod was replaced")
	Eventually(e.EventReasons).WithContext(ctx).WithArguments(ns, "Redis", "cache").
		Should(ContainElement("SuccessfulRebuild"))
}

// ExpectForeignPodSurvivesRedisDeletion: a pod that someone else created
// under a name the Redis recorded (after the Redis' own pod of that name
// was deleted) is left alone when the Redis is deleted. The operator is
// stopped while the pod is swapped, so that no chapter rebuilds its own pod
// first.
func (e *Env) ExpectForeignPodSurvivesRedisDeletion(ctx context.Context, ns string) {
	GinkgoHelper()
	e.CreateRedis(ctx, ns, "cache", 2)
	Eventually(e.Finalizers).WithContext(ctx).WithArguments(ns, "cache").Should(HaveLen(2), "the Redis does not record its pods")

	By("stopping the operator, deleting pod cache-0 and creating a pod of that name that no Redis controls")
	Expect(e.Operator.Stop()).To(Succeed())
	e.MustKubectl(ctx, "delete", "pod", "cache-0", "-n", ns)
	_, err := e.Apply(ctx, ForeignPodManifest(ns, "cache-0"))
	Expect(err).NotTo(HaveOccurred())
	foreign, err := e.Pod(ctx, ns, "cache-0")
	Expect(err).NotTo(HaveOccurred())
	Expect(e.Operator.Start(ctx)).To(Succeed())

	By("deleting the Redis, which still records cache-0")
	Expect(e.Finalizers(ctx, ns, "cache")).To(ContainElement(myappv1.GroupName + "/cache-0"))
	e.MustKubectl(ctx, "delete", "redis", "cache", "-n", ns, "--wait=false")
	e.ExpectGone(ctx, &myappv1.Redis{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cache"}})
	e.ExpectGone(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cache-1"}})

	By("the foreign pod is still there, the same object, and the operator said why")
	pod, err := e.Pod(ctx, ns, "cache-0")
	Expect(err).NotTo(HaveOccurred(), "the operator deleted a pod it does not control")
	Expect(pod.UID).To(Equal(foreign.UID))
	Expect(pod.DeletionTimestamp).To(BeNil(), "the operator deleted a pod it does not control")
	Eventually(e.EventReasons).WithContext(ctx).WithArguments(ns, "Redis", "cache").
		Should(ContainElement("ErrResourceExists"), "no Warning about the pod the Redis does not control")
}
