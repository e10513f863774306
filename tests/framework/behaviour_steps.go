package framework

import (
	"context"
	"fmt"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	myappv1 "example.com/redis-operator/api/v1"
)

// The bodies of the specs that several chapters prove (behaviour.go
// declares them): the behaviour a chapter introduces stays proven in the
// chapters after it. They check behaviour that a user sees (pods, UIDs,
// status, events that every later chapter keeps), never how a chapter
// keeps track, so that a refactor (chapter 7 drops the per-pod
// finalizers) runs them as they are.

// ExpectPodComesBack: a pod of Redis cache (three running pods) deleted
// with kubectl comes back with the same name and a new UID and runs,
// while the other pods stay the same objects.
func ExpectPodComesBack(ctx context.Context, e *Env, ns string) {
	GinkgoHelper()
	uids := e.PodUIDs(ctx, ns, "cache")

	e.MustKubectl(ctx, "delete", "pod", "cache-1", "-n", ns)

	LessonStep("cache-1 comes back with a new UID; cache-0 and cache-2 stay the same pods")
	DecidingCheck("cache-1 is a new pod that runs; cache-0 and cache-2 have the UIDs they had", func() {
		e.ExpectRebuilt(ctx, ns, "cache-1", uids["cache-1"])
		after := e.PodUIDs(ctx, ns, "cache")
		Expect(after).To(HaveKeyWithValue("cache-0", uids["cache-0"]), "an untouched pod was replaced")
		Expect(after).To(HaveKeyWithValue("cache-2", uids["cache-2"]), "an untouched pod was replaced")
	})
}

// expectPodsComeBackTogether: the three pods of Redis cache, deleted with
// one kubectl command (deleteArgs, without the namespace), all come back,
// and no reconcile of the Redis returns an error: many delete events in a
// row are where a reconcile meets a cache that has not yet seen the pod
// it created a moment ago. (The specs that run beside it in parallel
// have reconcile errors of their own, on purpose: only this Redis'
// count.)
func expectPodsComeBackTogether(ctx context.Context, e *Env, ns string, deleteArgs ...string) {
	GinkgoHelper()
	uids := e.PodUIDs(ctx, ns, "cache")
	log := e.Operator.LogOffset()

	e.MustKubectl(ctx, append(deleteArgs, "-n", ns)...)

	LessonStep("all three pods come back with new UIDs, and the operator logs no reconcile error")
	DecidingCheck("each of the three pods is a new pod that runs, and no reconcile of the Redis returned an error", func() {
		for _, name := range PodNames("cache", 3) {
			e.ExpectRebuilt(ctx, ns, name, uids[name])
		}
		Expect(e.Operator.ReconcilesSince(log)).NotTo(ContainElement(And(
			HaveField("Namespace", ns), HaveField("Name", "cache"), HaveField("Failed", true))),
			"a reconcile of Redis %s/cache returned an error (the operator's log says which)", ns)
	})
}

// expectPodComesBackEachTime: pod cache-0, deleted three times, comes back
// each time.
func expectPodComesBackEachTime(ctx context.Context, e *Env, ns string) {
	GinkgoHelper()
	LessonStep("cache-0, deleted three times, comes back each time")
	for i := range 3 {
		uid := e.PodUIDs(ctx, ns, "cache")["cache-0"]
		e.MustKubectl(ctx, "delete", "pod", "cache-0", "-n", ns)
		DecidingCheck(fmt.Sprintf("after delete %d of 3, cache-0 is a new pod that runs", i+1), func() {
			e.ExpectRebuilt(ctx, ns, "cache-0", uid)
		})
	}
}

// expectRedisDeletionLeavesNothing: after one of its pods was rebuilt,
// Redis cache is deleted, goes, and leaves no pod behind. No pod is
// created for it once it is being deleted: every pod with its label seen
// from the delete on is one it had before, so a pod rebuilt during the
// deletion fails the spec even if the garbage collector removes it a
// moment later (a terminating pod is still a pod here).
func expectRedisDeletionLeavesNothing(ctx context.Context, e *Env, ns string) {
	GinkgoHelper()
	uid := e.PodUIDs(ctx, ns, "cache")["cache-2"]
	e.MustKubectl(ctx, "delete", "pod", "cache-2", "-n", ns)
	e.ExpectRebuilt(ctx, ns, "cache-2", uid)
	had := e.PodUIDs(ctx, ns, "cache")

	By("deleting the Redis: it goes, and its pods go, and no pod is created for it")
	log := e.Operator.LogOffset()
	e.MustKubectl(ctx, "delete", "redis", "cache", "-n", ns, "--wait=false")
	oldPods := func(g Gomega) []string {
		pods, err := e.Pods(ctx, ns, "cache")
		g.Expect(err).NotTo(HaveOccurred())
		names := []string{}
		for _, p := range pods {
			if had[p.Name] != p.UID {
				StopTrying(fmt.Sprintf("pod %s (UID %s) was created after its Redis was deleted", p.Name, p.UID)).Now()
			}
			names = append(names, p.Name)
		}
		return names
	}
	redisGone := e.notFound(ctx, &myappv1.Redis{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cache"}})
	DecidingCheck("the Redis goes, its pods go, and no pod is made for it", func() {
		Eventually(func(g Gomega) {
			g.Expect(oldPods(g)).To(BeEmpty(), "the pods of the deleted Redis are still there")
			redisGone(g)
		}).WithContext(ctx).Should(Succeed())
		Consistently(oldPods).WithContext(ctx).Should(BeEmpty())
	})

	// A reconcile that fails is retried, with a longer wait each time,
	// until one succeeds: the last one tells whether the operator is done.
	By("the operator is done with the deleted Redis: its last reconcile of it returned no error")
	e.WaitForIdle(ctx, ns, "cache")
	var last *ReconcileCall
	for _, c := range e.Operator.ReconcilesSince(log) {
		if c.Namespace == ns && c.Name == "cache" {
			last = &c
		}
	}
	DecidingCheck("the last reconcile of the deleted Redis returned no error", func() {
		if last != nil {
			Expect(last.Failed).To(BeFalse(), "the last reconcile of the deleted Redis %s/cache returned an error: a Redis that is gone is retried forever (the operator's log says which error)", ns)
		}
	})
}

// expectForeignPodSurvivesRedisDeletion: a pod that someone else created
// under the name of one of a Redis' pods (after the Redis' own pod of that
// name was deleted) is left alone when the Redis is deleted. The operator
// is stopped while the pod is swapped, so that no chapter rebuilds its own
// pod first; before that, the operator has finished with the new Redis
// (recorded its pods, in the chapters that record them).
func expectForeignPodSurvivesRedisDeletion(ctx context.Context, e *Env, ns string) {
	GinkgoHelper()
	e.CreateRedis(ctx, ns, "cache", 2)
	e.SettledReconcileTotal(ctx, ns)

	By("stopping the operator, deleting pod cache-0 and creating a pod of that name that no Redis controls")
	Expect(e.Operator.Stop()).To(Succeed())
	e.MustKubectl(ctx, "delete", "pod", "cache-0", "-n", ns)
	_, err := e.Apply(ctx, ForeignPodManifest(ns, "cache-0"))
	Expect(err).NotTo(HaveOccurred())
	foreign, err := e.Pod(ctx, ns, "cache-0")
	Expect(err).NotTo(HaveOccurred())
	offset := e.Operator.LogOffset()
	Expect(e.Operator.Start(ctx)).To(Succeed())
	// The restarted operator reconciles the Redis once before it is
	// deleted, as it would have had it never stopped: the chapters that
	// rebuild meet the foreign pod then. Without a finalizer (chapter 7 on)
	// a Redis deleted first is gone before any reconcile can see it.
	Eventually(func() []ReconcileCall { return e.Operator.ReconcilesSince(offset) }).WithContext(ctx).
		Should(ContainElement(And(HaveField("Namespace", ns), HaveField("Name", "cache"), HaveField("Done", true))),
			"the restarted operator did not reconcile Redis %s/cache", ns)

	LessonStep("deleting the Redis leaves the pod it does not control alone")
	e.MustKubectl(ctx, "delete", "redis", "cache", "-n", ns, "--wait=false")
	e.ExpectGone(ctx, &myappv1.Redis{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cache"}})
	e.ExpectGone(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cache-1"}})

	By("the foreign pod is still there, the same object, and the operator said why")
	DecidingCheck("cache-0 is the pod no Redis controls, the same object, not being deleted, and an ErrResourceExists event says why", func() {
		pod, err := e.Pod(ctx, ns, "cache-0")
		Expect(err).NotTo(HaveOccurred(), "the operator deleted a pod it does not control")
		Expect(pod.UID).To(Equal(foreign.UID), "cache-0 is not the pod no Redis controls any more")
		Expect(pod.DeletionTimestamp).To(BeNil(), "the operator deleted a pod it does not control")
		Eventually(e.EventReasons).WithContext(ctx).WithArguments(ns, "Redis", "cache").
			Should(ContainElement("ErrResourceExists"), "no Warning about the pod the Redis does not control")
	})
}

// expectScaleDownAndUp: Redis cache (three pods) scaled down to 1 with
// kubectl keeps cache-0, the same object, and deletes the others; scaled
// up to 4, it gets four pods.
func expectScaleDownAndUp(ctx context.Context, e *Env, ns string) {
	GinkgoHelper()
	kept := e.PodUIDs(ctx, ns, "cache")["cache-0"]

	LessonStep("scaling down to 1 deletes cache-1 and cache-2 and keeps cache-0")
	e.MustKubectl(ctx, "scale", "redis/cache", "--replicas=1", "-n", ns)
	DecidingCheck("the Redis' one pod is cache-0, the same object as before", func() {
		Eventually(e.PodNamesFunc(ctx, ns, "cache")).WithContext(ctx).Should(Equal([]string{"cache-0"}),
			"the scale-down did not delete cache-1 and cache-2")
		Expect(e.PodUIDs(ctx, ns, "cache")).To(HaveKeyWithValue("cache-0", kept), "the pod that stays was replaced")
	})

	By("scaling up to 4")
	e.MustKubectl(ctx, "scale", "redis/cache", "--replicas=4", "-n", ns)
	DecidingCheck("the Redis' pods are cache-0 to cache-3, cache-0 the same object as before", func() {
		Eventually(e.PodNamesFunc(ctx, ns, "cache")).WithContext(ctx).Should(Equal(PodNames("cache", 4)),
			"the scale-up did not create cache-1 to cache-3")
		e.ExpectSamePods(ctx, ns, "cache", map[string]types.UID{"cache-0": kept}, "the scale-up")
	})
}

// expectScaleUpPastTakenName: a pod that no Redis controls takes the name
// cache-3; Redis cache, scaled up to 5, still creates cache-4, and leaves
// that pod alone. One pod that cannot be created does not hold up the
// others.
func expectScaleUpPastTakenName(ctx context.Context, e *Env, ns string) {
	GinkgoHelper()
	By("creating a pod named cache-3 that no Redis controls, and scaling up to 5")
	_, err := e.Apply(ctx, ForeignPodManifest(ns, "cache-3"))
	Expect(err).NotTo(HaveOccurred())
	foreign, err := e.Pod(ctx, ns, "cache-3")
	Expect(err).NotTo(HaveOccurred())
	kept := e.PodUIDs(ctx, ns, "cache")
	delete(kept, "cache-3")
	e.MustKubectl(ctx, "scale", "redis/cache", "--replicas=5", "-n", ns)

	By("the operator creates cache-4, and leaves the pod named cache-3 alone")
	DecidingCheck("the Redis' pods are cache-0 to cache-2 and cache-4; cache-3 is the pod no Redis controls, the same object, with no owner", func() {
		Eventually(e.PodNamesFunc(ctx, ns, "cache")).WithContext(ctx).Should(Equal([]string{"cache-0", "cache-1", "cache-2", "cache-4"}),
			"the pod whose name was taken held up the pods after it")
		p, err := e.Pod(ctx, ns, "cache-3")
		Expect(err).NotTo(HaveOccurred(), "the pod that no Redis controls is gone")
		Expect(p.UID).To(Equal(foreign.UID), "the pod that no Redis controls was replaced")
		Expect(p.OwnerReferences).To(BeEmpty(), "the pod that no Redis controls was adopted")
		e.ExpectSamePods(ctx, ns, "cache", kept, "the scale-up")
	})
}

// expectStatusShowsReadyPods: Redis cache (three pods) becomes Available,
// its status counts three ready pods of its generation with its selector,
// Progressing is False (Complete), and kubectl get shows the columns.
func expectStatusShowsReadyPods(ctx context.Context, e *Env, ns string) {
	GinkgoHelper()
	LessonStep("the status says Available with three ready pods, and kubectl get shows them")
	DecidingCheck("the Redis becomes Available; its status counts 3 ready pods of its generation, with its selector, Progressing False (Complete)", func() {
		e.ExpectAvailable(ctx, ns, "cache")
		redis, err := e.Redis(ctx, ns, "cache")
		Expect(err).NotTo(HaveOccurred())
		Expect(redis.Status.Replicas).To(BeEquivalentTo(3), "status.replicas")
		Expect(redis.Status.ReadyReplicas).To(BeEquivalentTo(3), "status.readyReplicas")
		Expect(redis.Status.ObservedGeneration).To(Equal(redis.Generation), "status.observedGeneration")
		Expect(redis.Status.Selector).To(Equal("app.kubernetes.io/instance=cache,app.kubernetes.io/name=redis"), "status.selector")
		progressing := meta.FindStatusCondition(redis.Status.Conditions, "Progressing")
		Expect(progressing).NotTo(BeNil(), "no Progressing condition")
		Expect(progressing.Status).To(Equal(metav1.ConditionFalse), "Progressing")
		Expect(progressing.Reason).To(Equal("Complete"), "Progressing's reason")
	})

	out := e.MustKubectl(ctx, "get", "redis", "cache", "-n", ns)
	DecidingCheck("kubectl get prints DESIRED 3, READY 3", func() {
		Expect(strings.Fields(out)).To(HaveExactElements("NAME", "DESIRED", "READY", "AGE", "cache", "3", "3", Not(BeEmpty())), "kubectl get redis")
	})
}

// expectStatusFollowsScaleDown: Redis cache (three pods), Available, then
// scaled down to 1: its status counts one ready pod of the new generation
// and it is Available again.
func expectStatusFollowsScaleDown(ctx context.Context, e *Env, ns string) {
	GinkgoHelper()
	e.ExpectAvailable(ctx, ns, "cache")
	kept := map[string]types.UID{"cache-0": e.PodUIDs(ctx, ns, "cache")["cache-0"]}
	By("scaling down to 1: the status observes the new generation, counts one pod and is Available")
	e.MustKubectl(ctx, "scale", "redis/cache", "--replicas=1", "-n", ns)

	DecidingCheck("the status observes the new generation, counts one ready pod, and is Available", func() {
		Eventually(func(g Gomega) {
			redis, err := e.Redis(ctx, ns, "cache")
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(redis.Status.ObservedGeneration).To(Equal(redis.Generation), "the status has not observed the Redis' generation")
			g.Expect(redis.Status.Replicas).To(BeEquivalentTo(1), "status.replicas")
			g.Expect(redis.Status.ReadyReplicas).To(BeEquivalentTo(1), "status.readyReplicas")
			g.Expect(meta.IsStatusConditionTrue(redis.Status.Conditions, "Available")).To(BeTrue(), "Available")
		}).WithContext(ctx).Should(Succeed())
		e.ExpectSamePods(ctx, ns, "cache", kept, "the scale-down")
	})
}

// expectNotReadyPodCountedOut: Redis cache (three pods), Available, then
// cache-1's Ready condition set False through the pod's status, as a
// kubelet whose readiness probe fails sets it: the status counts two
// ready pods of three and the Redis is not Available. A pod that runs is
// not a pod that is ready: on the local back-end, where every pod is
// Ready as soon as it runs, only this tells them apart. The kubelet owns
// the condition and sets it True again at its next sync of the pod's
// status: the Redis is Available again.
func expectNotReadyPodCountedOut(ctx context.Context, e *Env, ns string) {
	GinkgoHelper()
	e.ExpectAvailable(ctx, ns, "cache")

	By("setting cache-1's Ready condition False, as a failing readiness probe would: the status counts it out")
	e.MustKubectl(ctx, "patch", "pod", "cache-1", "-n", ns, "--subresource=status", "-p",
		`{"status":{"conditions":[{"type":"Ready","status":"False","reason":"MadeNotReady","message":"set by the suite"}]}}`)
	DecidingCheck("the status counts 2 ready pods of 3, and the Redis is not Available", func() {
		Eventually(func(g Gomega) {
			redis, err := e.Redis(ctx, ns, "cache")
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(redis.Status.ReadyReplicas).To(BeEquivalentTo(2), "status.readyReplicas, with cache-1 not ready")
			g.Expect(meta.IsStatusConditionFalse(redis.Status.Conditions, "Available")).To(BeTrue(), "Available, with cache-1 not ready")
		}).WithContext(ctx).WithPolling(10 * time.Millisecond).Should(Succeed())
	})

	By("the kubelet sets cache-1's Ready condition True again: the Redis is Available again")
	e.ExpectAvailable(ctx, ns, "cache")
}

// expectNoWriteWhenSteady: a reconcile of Redis cache, Available and
// unchanged, sends no write request. (A status update that changes
// nothing still costs a request, and leaves the resourceVersion as it
// was: the requests are counted.)
func expectNoWriteWhenSteady(ctx context.Context, e *Env, ns string) {
	GinkgoHelper()
	e.ExpectAvailable(ctx, ns, "cache")
	// The writes counted are every write of the operator: nothing else
	// may be going on (no other spec's namespace being deleted).
	e.SettledReconcileTotal(ctx, ns)

	By("touching the Redis: the operator reconciles it and writes nothing")
	var before float64
	e.ExpectReconcile(ctx, ns, "cache", func() {
		var err error
		before, err = e.Operator.WriteRequests(ctx)
		Expect(err).NotTo(HaveOccurred())
		e.TouchRedis(ctx, ns, "cache")
	})
	after, err := e.Operator.WriteRequests(ctx)
	Expect(err).NotTo(HaveOccurred())
	DecidingCheck("the operator's count of write requests stays as it was", func() {
		Expect(after).To(Equal(before), "the reconcile of a steady Redis wrote to the API server")
	})
}

// expectNoRequeueWhenSteady: Redis cache, Available, is touched: the
// operator reconciles it, and no reconcile of it since asks to be
// requeued (Requeue or RequeueAfter).
func expectNoRequeueWhenSteady(ctx context.Context, e *Env, ns string) {
	GinkgoHelper()
	e.ExpectAvailable(ctx, ns, "cache")

	By("touching the Redis: the operator reconciles it, and asks for no other reconcile")
	e.WaitForIdle(ctx, ns, "cache")
	kept := e.PodUIDs(ctx, ns, "cache")
	log := e.Operator.LogOffset()
	e.TouchRedis(ctx, ns, "cache")
	this := And(HaveField("Namespace", ns), HaveField("Name", "cache"))
	Eventually(func() []ReconcileCall { return e.Operator.ReconcilesSince(log) }).WithContext(ctx).
		Should(ContainElement(And(this, HaveField("Done", true))), "the operator did not reconcile the touched Redis %s/cache", ns)
	DecidingCheck("no reconcile of the touched Redis asked to be requeued", func() {
		Expect(e.Operator.ReconcilesSince(log)).NotTo(ContainElement(And(this, HaveField("Requeued", true))),
			"a reconcile of the steady Redis %s/cache asked to be requeued (\"Reconcile done, requeueing\" in the operator's log)", ns)
		e.ExpectSamePods(ctx, ns, "cache", kept, "reconciling the steady Redis")
	})
}

// expectEndedPodReplaced: pod cache-1, made to end (phase Failed, as after
// an eviction), is replaced by a new pod of that name that runs.
func expectEndedPodReplaced(ctx context.Context, e *Env, ns string) {
	GinkgoHelper()
	uids := e.PodUIDs(ctx, ns, "cache")
	Eventually(func(g Gomega) corev1.PodPhase {
		p, err := e.Pod(ctx, ns, "cache-1")
		g.Expect(err).NotTo(HaveOccurred())
		return p.Status.Phase
	}).WithContext(ctx).Should(Equal(corev1.PodRunning))

	e.MustKubectl(ctx, "patch", "pod", "cache-1", "-n", ns, "--subresource=status", "--type=merge",
		"-p", `{"status":{"phase":"Failed","reason":"Evicted","message":"made to end by the suite"}}`)

	LessonStep("the ended cache-1 is replaced by a new pod of that name that runs")
	DecidingCheck("cache-1 is a new pod that runs", func() {
		e.ExpectRebuilt(ctx, ns, "cache-1", uids["cache-1"])
	})
}
