//go:build e2e

package chapter10

import (
	"context"
	"fmt"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"example.com/redis-operator/internal/promtext"
	"example.com/redis-operator/tests/framework"
)

// The behaviour of the chapters before, with the operator deployed.

var _ = Describe("A pod deleted with kubectl, with the operator deployed", func() {
	It("comes back with the same name, a new UID, and runs", func(ctx SpecContext) {
		ns := env.NewNamespace(ctx)
		env.CreateRedis(ctx, ns, "cache", 3)
		framework.ExpectPodComesBack(ctx, env, ns)
	})
})

// What chapter 10 changes.

var _ = Describe("The operator's two replicas", Serial, func() {
	var ns string

	BeforeEach(func(ctx SpecContext) {
		ns = env.NewNamespace(ctx)
	})

	It("are one leader, which holds the Lease and reconciles, and one standby, which reconciles nothing", func(ctx SpecContext) {
		expectOneLeaderOthersIdle(ctx, ns)
	})

	It("hand over within seconds when the leader gets SIGTERM: it releases the Lease; a pod deleted meanwhile is rebuilt", framework.Lesson, func(ctx SpecContext) {
		env.CreateRedis(ctx, ns, "cache", 3)
		h := expectHandover(ctx, ns, false,
			"the leader gets SIGTERM and releases the Lease; another replica holds it at its next try")
		framework.DecidingCheck("the Lease was released, and another replica held it within a try and a second of the release", func() {
			Expect(h.Released).To(BeTrue(), "the leader did not release the Lease: the others waited for it to expire")
			Expect(h.Acquired.Sub(h.From)).To(BeNumerically("<", maxRetryPeriod+requestSlack),
				"another replica took the released Lease later than its next try")
		})
	})

	It("take over when the leader is killed (SIGKILL), once the Lease expires; a pod deleted meanwhile is rebuilt", func(ctx SpecContext) {
		env.CreateRedis(ctx, ns, "cache", 3)
		h := expectHandover(ctx, ns, true,
			"the leader gets SIGKILL; another replica holds the Lease once it has expired")
		// The bound is controller-runtime's default, the lesson's 15 s,
		// not whatever the Lease says: a Lease of 5 minutes fails here.
		duration := leaseDuration
		Expect(time.Duration(*h.lease.Spec.LeaseDurationSeconds)*time.Second).To(Equal(duration), "the Lease's leaseDurationSeconds, as the operator set it")
		framework.DecidingCheck("nobody released the Lease; another replica held it once it expired, within two tries and a second", func() {
			Expect(h.Released).To(BeFalse(), "a killed leader released the Lease")
			Expect(h.Acquired.Sub(h.From)).To(BeNumerically(">=", duration),
				"a replica took the Lease before it expired (its duration after the leader's last renewal)")
			Expect(h.Acquired.Sub(h.From)).To(BeNumerically("<", duration+KilledTakeoverLatest),
				"no replica took the Lease within its duration and two tries after the leader's last renewal")
		})
	})
})

var _ = Describe("The operator's metrics", Serial, func() {
	It("are served over HTTPS to metrics readers only: 401 without a token, 403 to others", framework.Containers, func(ctx SpecContext) {
		expectMetricsNeedToken(ctx, env.NewNamespace(ctx))
	})
})

var _ = Describe("The operator's credentials", Serial, func() {
	It("are a projected, expiring ServiceAccount token that the kubelet mounts, not a Secret", func(ctx SpecContext) {
		expectProjectedToken(ctx)
	})
})

var _ = Describe("make undeploy", Serial, func() {
	It("keeps the CRD, every Redis and its pods; make deploy brings back an operator that looks after them", func(ctx SpecContext) {
		expectUndeployKeepsRedis(ctx, env.NewNamespace(ctx))
	})
})

// The bodies of the specs above, and what they measure against.

// Leader election's timing: controller-runtime's defaults, which the
// operator keeps. A standby replica tries to take the Lease every
// retryPeriod, stretched by a random jitter of up to 1.2 times it. The
// bounds are taken from the Lease's own times, which the replicas write
// (on one machine, one clock): from the leader's release, or its last
// renewal, to the new holder's acquireTime. Neither kubectl, nor the
// kubelet, nor the delivery of the signal is in them.
const (
	leaseDuration  = 15 * time.Second
	retryPeriod    = 2 * time.Second
	maxRetryPeriod = retryPeriod + retryPeriod*12/10
	// requestSlack is for the requests of a try: a read and a write of
	// the Lease, on a busy machine.
	requestSlack    = time.Second
	leaderElectedAs = "leader_election_master_status"
	// After SIGKILL nobody releases the Lease: a standby sees the
	// leader's last renewal at its next try, and takes the Lease at its
	// first try once the Lease's duration has passed since then: between
	// the duration and the duration plus KilledTakeoverLatest after that
	// renewal.
	KilledTakeoverLatest = 2*maxRetryPeriod + requestSlack
)

// expectOneLeaderOthersIdle: of the two replicas, one holds the Lease and
// reconciles; the other only waits for the Lease. Its log shows no
// controller started, and its metrics say it is not the leader and count
// no reconcile.
func expectOneLeaderOthersIdle(ctx context.Context, ns string) {
	GinkgoHelper()
	c := env.InCluster()
	c.ExpectReplicasRun(ctx)
	leader, _ := c.Leader(ctx)
	replicas, err := c.Replicas(ctx)
	Expect(err).NotTo(HaveOccurred())
	Expect(replicas).To(HaveLen(framework.DeployedReplicas))
	env.CreateRedis(ctx, ns, "cache", 2)
	token := env.MetricsToken(ctx, ns, "scraper", true)

	By("the leader started its controller and reconciles; the standby waits for the Lease and reconciles nothing")
	for _, r := range replicas {
		log := c.Log(ctx, r)
		m := replicaMetrics(ctx, r, token)
		reconciles, err := m.Sum("controller_runtime_reconcile_total", promtext.Label("controller", "redis"))
		elected, electedErr := m.Sum(leaderElectedAs, promtext.Label("name", framework.LeaseName))
		Expect(electedErr).NotTo(HaveOccurred())
		if r.Name == leader.Name {
			framework.DecidingCheck("the leader started its controller, reports itself leader, and counts reconciles", func() {
				Expect(log).To(ContainSubstring("Starting workers"), "the leader %s started no controller", r.Name)
				Expect(elected).To(Equal(1.0), "the leader %s does not report itself leader", r.Name)
				Expect(err).NotTo(HaveOccurred(), "the leader %s exports no count of reconciles", r.Name)
				Expect(reconciles).To(BeNumerically(">", 0), "the leader %s counts no reconcile", r.Name)
			})
			continue
		}
		framework.DecidingCheck("the standby waits for the Lease, started no controller, does not report itself leader, and counts no reconcile", func() {
			Expect(log).To(ContainSubstring(framework.StandbyMessage), "the standby %s does not wait for the Lease", r.Name)
			Expect(log).NotTo(ContainSubstring("Starting workers"), "the standby %s started a controller", r.Name)
			Expect(elected).To(Equal(0.0), "the standby %s reports itself leader", r.Name)
			if err == nil { // its controller never started, so it may not export the family at all
				Expect(reconciles).To(BeZero(), "the standby %s reconciled", r.Name)
			}
		})
	}
}

// replicaMetrics reads replica r's metrics with token.
func replicaMetrics(ctx context.Context, r *framework.Replica, token string) promtext.Metrics {
	GinkgoHelper()
	var m promtext.Metrics
	Eventually(func(g Gomega) {
		status, body, err := env.InCluster().Metrics(ctx, r, token)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(status).To(Equal(200), "GET /metrics: %s", body)
		m, err = promtext.Parse(strings.NewReader(body))
		g.Expect(err).NotTo(HaveOccurred())
	}).WithContext(ctx).WithTimeout(30 * time.Second).Should(Succeed())
	return m
}

// handover is what expectHandover saw: the Lease's change of hands, and
// the Lease after it.
type handover struct {
	framework.Handover
	lease *coordinationv1.Lease
}

// expectHandover stops the leader (SIGTERM, or SIGKILL when kill is
// true), deletes a pod of Redis cache while no leader runs, and watches
// the Lease until another replica holds it, with leaseTransitions one up.
// The deleted pod is rebuilt once the new leader runs. It returns the
// handover, which the caller judges; the takeover's time from the signal
// is printed in any case.
func expectHandover(ctx context.Context, ns string, kill bool, lesson string) handover {
	GinkgoHelper()
	c := env.InCluster()
	c.ExpectReplicasRun(ctx)
	leader, before := c.Leader(ctx)
	uids := env.PodUIDs(ctx, ns, "cache")
	signal := "SIGTERM"
	if kill {
		signal = "SIGKILL"
	}
	leases, err := framework.WatchLease(ctx, env.Client)
	Expect(err).NotTo(HaveOccurred())

	framework.LessonStep(lesson)
	start := time.Now()
	Expect(c.Stop(ctx, leader, kill)).To(Succeed())
	GinkgoWriter.Printf("%s sent to the leader %s at %s\n", signal, leader.Name, start.Format(time.RFC3339Nano))
	env.MustKubectl(ctx, "delete", "pod", "cache-1", "-n", ns, "--wait=false")

	// After SIGKILL the takeover may come as late as the Lease's duration
	// and KilledTakeoverLatest after the kill: a shorter Eventually
	// timeout (make prove-chapter's is 20 s) would cut it short.
	wait := max(framework.EventuallyTimeout(), time.Duration(*before.Spec.LeaseDurationSeconds)*time.Second+KilledTakeoverLatest)
	var after *coordinationv1.Lease
	Eventually(func(g Gomega) {
		var err error
		after, err = c.Lease(ctx)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(after.Spec.HolderIdentity).NotTo(BeNil())
		g.Expect(*after.Spec.HolderIdentity).NotTo(BeEmpty(), "nobody holds the Lease")
		g.Expect(*after.Spec.HolderIdentity).NotTo(Equal(*before.Spec.HolderIdentity), "the stopped leader still holds the Lease")
	}).WithContext(ctx).WithTimeout(wait).Should(Succeed(), "no replica took the Lease over")
	states, err := leases.Stop()
	Expect(err).NotTo(HaveOccurred())
	h, err := framework.LeaseHandover(states, *before.Spec.HolderIdentity)
	Expect(err).NotTo(HaveOccurred())
	from := "its last renewal"
	if h.Released {
		from = "its release"
	}
	report := fmt.Sprintf("%s: another replica held the Lease %.1f s after the leader got %s, %.1f s after %s (Lease duration %d s)",
		CurrentSpecReport().LeafNodeText, h.Acquired.Sub(start).Seconds(), signal, h.Acquired.Sub(h.From).Seconds(), from, *before.Spec.LeaseDurationSeconds)
	AddReportEntry("takeover", report)
	Expect(*after.Spec.LeaseTransitions).To(Equal(*before.Spec.LeaseTransitions+1), "leaseTransitions did not count one handover")

	// The old leader may have rebuilt cache-1 itself, on its way out; only
	// the new one can rebuild a pod deleted now. (No step of its own: the
	// specs' checks of the takeover, after this, belong to the lesson's
	// step.)
	env.MustKubectl(ctx, "delete", "pod", "cache-2", "-n", ns, "--wait=false")
	env.ExpectRebuilt(ctx, ns, "cache-1", uids["cache-1"])
	env.ExpectRebuilt(ctx, ns, "cache-2", uids["cache-2"])
	c.ExpectReplicasRun(ctx)
	return handover{Handover: h, lease: after}
}

// expectMetricsNeedToken: the metrics endpoint answers over HTTPS, and
// only to a caller whose token the API server accepts and whose account
// may get /metrics (the metrics-reader ClusterRole).
func expectMetricsNeedToken(ctx context.Context, ns string) {
	GinkgoHelper()
	c := env.InCluster()
	c.ExpectReplicasRun(ctx)
	leader, _ := c.Leader(ctx)
	reader := env.MetricsToken(ctx, ns, "reader", true)
	stranger := env.MetricsToken(ctx, ns, "stranger", false)

	By("the metrics endpoint answers over HTTPS: 401 without a token, 403 to an account not allowed, the metrics to a metrics reader")
	framework.DecidingCheck("the metrics endpoint answers over HTTPS: 401 without a token, 403 to an account not allowed", func() {
		status, body, err := c.Metrics(ctx, leader, "")
		Expect(err).NotTo(HaveOccurred(), "the metrics endpoint does not answer over HTTPS")
		Expect(status).To(Equal(401), "without a token: %s", body)
		status, body, err = c.Metrics(ctx, leader, stranger)
		Expect(err).NotTo(HaveOccurred(), "the metrics endpoint does not answer over HTTPS")
		Expect(status).To(Equal(403), "with the token of an account not allowed to get /metrics: %s", body)
	})
	m := replicaMetrics(ctx, leader, reader)
	_, err := m.Sum("controller_runtime_reconcile_total", promtext.Label("controller", "redis"))
	Expect(err).NotTo(HaveOccurred())
}

// expectProjectedToken: the operator's pod authenticates with a token the
// kubelet mounts from a projected volume (expiring, bound to the pod,
// rotated), not from a Secret, and its namespace holds no token Secret;
// the only Secret it mounts is a TLS certificate (the webhook's, chapter
// 11 on).
// On the local backend, whose nodes run no pods, the pod is the one the
// API server would make from the Deployment's template (a server-side dry
// run, through the same admission that adds the volume).
func expectProjectedToken(ctx context.Context) {
	GinkgoHelper()
	c := env.InCluster()
	c.ExpectReplicasRun(ctx)
	pod := &corev1.Pod{}
	if c.Pods() {
		By("reading a replica's pod, as the kubelet runs it")
		replicas, err := c.Replicas(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(replicas).NotTo(BeEmpty())
		Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: framework.OperatorNamespace, Name: replicas[0].Name}, pod)).To(Succeed())
	} else {
		By("this backend's nodes run no pods: reading the pod the API server makes from the Deployment's template, in a server-side dry run")
		dep := &appsv1.Deployment{}
		Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: framework.OperatorNamespace, Name: framework.Deployment}, dep)).To(Succeed())
		pod.ObjectMeta = metav1.ObjectMeta{Namespace: framework.OperatorNamespace, GenerateName: framework.Deployment + "-", Labels: dep.Spec.Template.Labels}
		pod.Spec = dep.Spec.Template.Spec
		Expect(env.Client.Create(ctx, pod, client.DryRunAll)).To(Succeed())
	}
	Expect(pod.Spec.ServiceAccountName).To(Equal(framework.DeploymentServiceAccount))

	var tokenVolume string
	for _, v := range pod.Spec.Volumes {
		if v.Secret != nil {
			// From chapter 11 on, the webhook's serving certificate.
			secret := &corev1.Secret{}
			Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: framework.OperatorNamespace, Name: v.Secret.SecretName}, secret)).To(Succeed())
			Expect(secret.Type).To(Equal(corev1.SecretTypeTLS), "pod %s mounts the Secret %s, which is no TLS certificate", pod.Name, v.Secret.SecretName)
			continue
		}
		if v.Projected == nil {
			continue
		}
		for _, src := range v.Projected.Sources {
			if t := src.ServiceAccountToken; t != nil {
				tokenVolume = v.Name
				Expect(t.ExpirationSeconds).NotTo(BeNil())
				GinkgoWriter.Printf("projected volume %s: token %s, expires after %d s, renewed by the kubelet\n", v.Name, t.Path, *t.ExpirationSeconds)
			}
		}
	}
	Expect(tokenVolume).NotTo(BeEmpty(), "pod %s has no projected ServiceAccount token", pod.Name)
	Expect(pod.Spec.Containers[0].VolumeMounts).To(ContainElement(And(
		HaveField("Name", tokenVolume),
		HaveField("MountPath", "/var/run/secrets/kubernetes.io/serviceaccount"),
		HaveField("ReadOnly", true))))

	secrets := &corev1.SecretList{}
	Expect(env.Client.List(ctx, secrets, client.InNamespace(framework.OperatorNamespace))).To(Succeed())
	for _, s := range secrets.Items {
		Expect(s.Type).NotTo(Equal(corev1.SecretTypeServiceAccountToken), "Secret %s holds a ServiceAccount token", s.Name)
	}
}

// expectUndeployKeepsRedis: `make undeploy` removes the operator and
// leaves the CRD, every Redis and its pods; `make deploy` brings the
// operator back, and it looks after the same objects: a pod deleted
// afterwards is rebuilt.
func expectUndeployKeepsRedis(ctx context.Context, ns string) {
	GinkgoHelper()
	c := env.InCluster()
	c.ExpectReplicasRun(ctx)
	env.CreateRedis(ctx, ns, "cache", 3)
	redis, err := env.Redis(ctx, ns, "cache")
	Expect(err).NotTo(HaveOccurred())
	uids := env.PodUIDs(ctx, ns, "cache")

	Expect(c.Undeploy(ctx)).To(Succeed())
	ns0 := &corev1.Namespace{}
	err = env.Client.Get(ctx, client.ObjectKey{Name: framework.OperatorNamespace}, ns0)
	Expect(apierrors.IsNotFound(err)).To(BeTrue(), "make undeploy left namespace %s: %v", framework.OperatorNamespace, err)
	env.MustKubectl(ctx, "get", "crd", framework.CRDName) // make undeploy did not delete it
	after, err := env.Redis(ctx, ns, "cache")
	Expect(err).NotTo(HaveOccurred(), "the Redis is gone after make undeploy")
	Expect(after.UID).To(Equal(redis.UID))
	Expect(env.PodUIDs(ctx, ns, "cache")).To(Equal(uids), "the pods changed with make undeploy")

	Expect(c.Deploy(ctx)).To(Succeed())
	c.ExpectReplicasRun(ctx)
	after, err = env.Redis(ctx, ns, "cache")
	Expect(err).NotTo(HaveOccurred())
	Expect(after.UID).To(Equal(redis.UID), "the Redis is another object after make deploy")
	Expect(env.PodUIDs(ctx, ns, "cache")).To(Equal(uids), "the pods changed with make deploy")
	framework.ExpectPodComesBack(ctx, env, ns)
}
