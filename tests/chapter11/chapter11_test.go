//go:build e2e

package chapter11

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"math/big"
	"os"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	myappv1 "example.com/redis-operator/api/v1"
	"example.com/redis-operator/tests/framework"
)

// The behaviour of the chapters before, with the webhook in the way of
// every create and update.

var _ = Describe("A pod deleted with kubectl, with the operator and its webhook deployed", func() {
	It("comes back with the same name, a new UID, and runs", func(ctx SpecContext) {
		ns := env.NewNamespace(ctx)
		env.CreateRedis(ctx, ns, "cache", 3)
		framework.ExpectPodComesBack(ctx, env, ns)
	})
})

// What chapter 11 changes.

var _ = Describe("The CRD's CEL rules", func() {
	It("refuse a bad image and a change of image, each with a message that says what to fix", framework.Lesson, func(ctx SpecContext) {
		expectCELRulesRefuse(ctx, env.NewNamespace(ctx))
	})
})

var _ = Describe("The validating webhook", func() {
	It("refuses a Redis whose pod names other pods hold, naming them, and warns when a Redis grows into one", framework.Lesson, func(ctx SpecContext) {
		expectWebhookRefusesCollision(ctx, env.NewNamespace(ctx))
	})

	It("keeps answering while its certificate is rotated, and serves the new one with no restart", Serial, framework.Containers, func(ctx SpecContext) {
		expectCertRotation(ctx, env.NewNamespace(ctx))
	})

	It("when no replica answers, lets creates through (failurePolicy Ignore); with Fail, blocks creates and updates but never a delete", Serial, framework.Lesson, func(ctx SpecContext) {
		expectDownWebhook(ctx, env.NewNamespace(ctx))
	})
})

var _ = Describe("A webhook that hangs", Serial, func() {
	It("holds a create for its timeoutSeconds, no more, and then lets it through (failurePolicy Ignore)", func(ctx SpecContext) {
		expectHungWebhook(ctx, env.NewNamespace(ctx))
	})
})

// The bodies of the specs above. They need the operator deployed with
// its webhook (the row's chapters.OperatorDeployed).

// webhookDenied is how the API server begins a refusal of the webhook.
var webhookDenied = fmt.Sprintf("admission webhook %q denied the request", framework.WebhookName)

// redisImageManifest is a Redis with spec.image set.
func redisImageManifest(ns, name string, replicas int, image string) string {
	return framework.RedisManifest(ns, name, replicas) + fmt.Sprintf("  image: %q\n", image)
}

// expectCELRulesRefuse: the CRD's CEL rules refuse a Redis whose image has
// whitespace, no tag or a malformed digest, each with its message, and a
// change of the image of a Redis; nothing a refused object asks for is
// created.
func expectCELRulesRefuse(ctx context.Context, ns string) {
	GinkgoHelper()
	framework.LessonStep("the CRD's CEL rules refuse a Redis whose image has whitespace, no tag or a malformed digest, saying why; nothing is created")
	for _, tc := range []struct{ image, message string }{
		{"redis 7.0", `spec.image: Invalid value: "redis 7.0": must not contain spaces or other whitespace`},
		{"redis", `spec.image: Invalid value: "redis": must end with a tag or a digest`},
		{"redis@sha256:0123abc", `spec.image: Invalid value: "redis@sha256:0123abc": must end with a tag or a digest`},
	} {
		_, err := env.Apply(ctx, redisImageManifest(ns, "bad", 1, tc.image))
		framework.DecidingCheck(fmt.Sprintf("kubectl apply of image %q fails with the CEL rule's message", tc.image), func() {
			Expect(err).To(MatchError(ContainSubstring(tc.message)), "a Redis with image %q was not refused with its message", tc.image)
		})
	}
	_, err := env.Redis(ctx, ns, "bad")
	pods := &corev1.PodList{}
	Expect(env.Client.List(ctx, pods, client.InNamespace(ns))).To(Succeed())
	framework.DecidingCheck("no Redis and no pod is stored", func() {
		Expect(err).To(Satisfy(apierrors.IsNotFound), "a refused Redis was stored")
		Expect(pods.Items).To(BeEmpty(), "pods were created for a refused Redis")
	})

	By("a Redis with a tag is admitted; a change of its image is refused, and the image stays")
	_, err = env.Apply(ctx, redisImageManifest(ns, "cache", 1, myappv1.DefaultImage))
	Expect(err).NotTo(HaveOccurred())
	env.ExpectPodsRun(ctx, ns, "cache", 1)
	_, err = env.Kubectl.Run(ctx, "patch", "redis", "cache", "-n", ns, "--type=merge", "-p", `{"spec":{"image":"redis:7.2"}}`)
	framework.DecidingCheck("kubectl patch of the image fails with the CEL rule's message", func() {
		Expect(err).To(MatchError(ContainSubstring(`spec.image: Invalid value: "redis:7.2": cannot be changed`)), "the image of a Redis was changed")
	})
	redis, err := env.Redis(ctx, ns, "cache")
	Expect(err).NotTo(HaveOccurred())
	framework.DecidingCheck("the image stays", func() {
		Expect(redis.Spec.Image).To(Equal(myappv1.DefaultImage), "the Redis' image")
	})
}

// expectWebhookRefusesCollision: a Redis whose pod names are held by a pod
// that no Redis of its name controls is refused at create, with the pod
// named; nothing is created and the pod stays. A Redis that grows into
// such a name is admitted with a warning.
func expectWebhookRefusesCollision(ctx context.Context, ns string) {
	GinkgoHelper()
	foreign := createForeignPod(ctx, ns, "cache-1")

	framework.LessonStep("the webhook refuses a Redis named cache of 3 replicas, naming pod cache-1; nothing is created and the pod stays")
	_, err := env.Apply(ctx, framework.RedisManifest(ns, "cache", 3))
	framework.DecidingCheck("kubectl apply fails with the webhook's denial naming pod cache-1", func() {
		Expect(err).To(MatchError(And(ContainSubstring(webhookDenied), ContainSubstring("pod cache-1 already exists"))),
			"a Redis whose pod name another pod holds was admitted")
	})
	_, err = env.Redis(ctx, ns, "cache")
	pods := &corev1.PodList{}
	Expect(env.Client.List(ctx, pods, client.InNamespace(ns))).To(Succeed())
	framework.DecidingCheck("no Redis is stored, and the one pod is the foreign one", func() {
		Expect(err).To(Satisfy(apierrors.IsNotFound), "the refused Redis was stored")
		Expect(pods.Items).To(ConsistOf(HaveField("UID", foreign.UID)), "the namespace holds other pods than the foreign one")
	})

	By("a Redis that grows into a name another pod holds is admitted, with a warning naming it")
	env.CreateRedis(ctx, ns, "db", 1)
	createForeignPod(ctx, ns, "db-1")
	_, warnings, err := env.Kubectl.Output(ctx, "", "patch", "redis", "db", "-n", ns, "--type=merge", "-p", `{"spec":{"replicas":2}}`)
	framework.DecidingCheck("the scale-up is admitted with a warning naming pod db-1", func() {
		Expect(err).NotTo(HaveOccurred(), "a Redis growing into a name another pod holds was refused")
		Expect(warnings).To(ContainSubstring(`Warning: pod db-1 exists and no Redis named "db" controls it`), "kubectl's warnings")
	})
}

// createForeignPod creates a pod that no Redis controls and returns it.
func createForeignPod(ctx context.Context, ns, name string) *corev1.Pod {
	GinkgoHelper()
	By(fmt.Sprintf("creating pod %s, which no Redis controls", name))
	_, err := env.Apply(ctx, framework.ForeignPodManifest(ns, name))
	Expect(err).NotTo(HaveOccurred())
	pod, err := env.Pod(ctx, ns, name)
	Expect(err).NotTo(HaveOccurred())
	return pod
}

// expectCertRotation: the webhook serves the certificate make deploy made;
// after `make rotate-webhook-cert`, every replica serves the new one with
// no restart, and the webhook refuses a colliding Redis all along: a
// probe asks it every 100 ms, from before the rotation until every
// replica serves the new certificate.
func expectCertRotation(ctx context.Context, ns string) {
	GinkgoHelper()
	c := env.InCluster()
	createForeignPod(ctx, ns, "cache-0")
	// A replica may have exited before (a leader that could not renew its
	// Lease in time, on a busy machine, exits as it should): all run again
	// first.
	c.ExpectReplicasRun(ctx)
	replicas, err := c.Replicas(ctx)
	Expect(err).NotTo(HaveOccurred())
	Expect(replicas).To(HaveLen(framework.DeployedReplicas), "a rotation with fewer replicas than deployed proves less")
	restarts := c.Processes(ctx)
	certDir := framework.WebhookCertDir()
	before, err := fileCertSerial(certDir + "/tls.crt")
	Expect(err).NotTo(HaveOccurred())
	serving := func(want *big.Int) func(Gomega) {
		return func(g Gomega) {
			for _, r := range replicas {
				got, err := c.ServedCertSerial(ctx, r)
				g.Expect(err).NotTo(HaveOccurred(), "%s serves no certificate on the webhook's port", r.Name)
				g.Expect(got).To(Equal(want), "%s serves another certificate", r.Name)
			}
		}
	}

	By("every replica serves make deploy's certificate, then, after make rotate-webhook-cert, the new one, with no restart; the webhook refuses a colliding Redis all along")
	Eventually(serving(before)).WithContext(ctx).WithPolling(time.Second).Should(Succeed())
	probe := startCollisionProbe(ctx, ns)
	Expect(env.Make(ctx, "rotate-webhook-cert")).To(Succeed())
	after, err := fileCertSerial(certDir + "/tls.crt")
	Expect(err).NotTo(HaveOccurred())
	Expect(after).NotTo(Equal(before), "make rotate-webhook-cert kept the serving certificate")
	By("every replica serves the new certificate, with no restart, and the probe was refused all along")
	start := time.Now()
	// The kubelet updates a mounted Secret at its next sync of the pod:
	// on the course's kind cluster within 10 s, by default within a
	// minute. Replicas that are not pods (the local backend's) read the
	// files that make rotate-webhook-cert writes.
	wait := framework.EventuallyTimeout()
	if c.Pods() {
		wait = max(wait, 3*time.Minute)
	}
	framework.DecidingCheck("every replica serves the new certificate", func() {
		Eventually(serving(after)).WithContext(ctx).WithTimeout(wait).WithPolling(2*time.Second).Should(Succeed(), "not every replica serves the new certificate")
	})
	refused, admitted := probe.stop()
	GinkgoWriter.Printf("every replica served the new certificate %s after the rotation; the webhook refused the probe %d times, and let it through %d times\n",
		time.Since(start).Round(time.Second), refused, len(admitted))
	processes := c.Processes(ctx)
	framework.DecidingCheck("the webhook refused the probe all along, and no replica restarted", func() {
		Expect(refused).To(BeNumerically(">", 0), "the probe never reached the webhook")
		Expect(admitted).To(BeEmpty(), "the webhook did not answer during the rotation")
		Expect(processes).To(Equal(restarts), "a replica restarted to serve the new certificate")
	})
}

// collisionProbe asks the webhook about a colliding Redis, again and
// again, until stopped.
type collisionProbe struct {
	cancel   context.CancelFunc
	done     chan struct{}
	refused  int
	admitted []string
}

// startCollisionProbe creates Redis cache of one replica in ns, where a
// pod that no Redis controls holds cache-0, every 100 ms as a server-side
// dry run (which stores nothing) with the suite's client: the webhook must
// refuse it each time. Where it did not, admitted records the error or
// the lack of one.
func startCollisionProbe(ctx context.Context, ns string) *collisionProbe {
	ctx, cancel := context.WithCancel(ctx)
	p := &collisionProbe{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer GinkgoRecover()
		defer close(p.done)
		for ctx.Err() == nil {
			redis := &myappv1.Redis{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cache"}, Spec: myappv1.RedisSpec{Replicas: 1}}
			err := env.Client.Create(ctx, redis, client.DryRunAll)
			switch {
			case ctx.Err() != nil:
				return
			case err != nil && containsAll(err.Error(), webhookDenied, "pod cache-0 already exists"):
				p.refused++
			default:
				p.admitted = append(p.admitted, fmt.Sprint(err))
			}
			select {
			case <-ctx.Done():
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()
	return p
}

// stop ends the probe and returns its counts.
func (p *collisionProbe) stop() (refused int, admitted []string) {
	p.cancel()
	<-p.done
	return p.refused, p.admitted
}

// expectDownWebhook: while a replica answers, the webhook refuses a
// colliding Redis; with none, failurePolicy Ignore (the chapter's) admits
// it. With failurePolicy Fail, the API server refuses every create and
// update it cannot send to the webhook, but not a delete, which the
// webhook does not intercept, nor the removal of a finalizer of a Redis
// being deleted, which its matchConditions leave out.
func expectDownWebhook(ctx context.Context, ns string) {
	GinkgoHelper()
	c := env.InCluster()
	foreign := createForeignPod(ctx, ns, "cache-1")
	_, err := env.Apply(ctx, framework.RedisManifest(ns, "held", 0))
	Expect(err).NotTo(HaveOccurred())
	env.MustKubectl(ctx, "patch", "redis", "held", "-n", ns, "--type=merge", "-p", `{"metadata":{"finalizers":["example.com/hold"]}}`)
	DeferCleanup(func(ctx SpecContext) { // if the spec fails before it removes it
		_, _ = env.Kubectl.Run(ctx, "patch", "redis", "held", "-n", ns, "--type=merge", "-p", `{"metadata":{"finalizers":null}}`)
	})

	framework.LessonStep("the webhook refuses a colliding Redis while a replica runs; with no replica, failurePolicy Ignore admits it")
	_, err = env.Apply(ctx, framework.RedisManifest(ns, "cache", 2))
	framework.DecidingCheck("kubectl apply of a colliding Redis fails with the webhook's denial", func() {
		Expect(err).To(MatchError(ContainSubstring(webhookDenied)), "the webhook did not refuse a colliding Redis")
	})
	By("stopping every replica of the operator")
	c.StopAll(ctx)
	DeferCleanup(func(ctx SpecContext) {
		env.SetFailurePolicy(ctx, "Ignore")
		c.StartAll(ctx)
	})
	_, err = env.Apply(ctx, framework.RedisManifest(ns, "cache", 2))
	framework.DecidingCheck("with every replica stopped, kubectl apply of it succeeds", func() {
		Expect(err).NotTo(HaveOccurred(), "with failurePolicy Ignore, the API server refused a Redis that no webhook answered for")
	})

	By("with failurePolicy Fail, creates and updates are refused; a delete and a finalizer's removal are not")
	env.SetFailurePolicy(ctx, "Fail")
	// The API server applies a changed webhook configuration a moment
	// later: server-side dry runs (which store nothing) until it refuses.
	failed := fmt.Sprintf("failed calling webhook %q", framework.WebhookName)
	start := time.Now()
	Eventually(func() error {
		_, err := env.Apply(ctx, framework.RedisManifest(ns, "db", 1), "--dry-run=server")
		return err
	}).WithContext(ctx).Should(MatchError(ContainSubstring(failed)), "with failurePolicy Fail, the API server let a create through")
	GinkgoWriter.Printf("the API server refused creates %s after failurePolicy became Fail\n", time.Since(start).Round(time.Millisecond))
	_, createErr := env.Apply(ctx, framework.RedisManifest(ns, "db", 1))
	_, getErr := env.Redis(ctx, ns, "db")
	_, updateErr := env.Kubectl.Run(ctx, "patch", "redis", "cache", "-n", ns, "--type=merge", "-p", `{"spec":{"replicas":1}}`)
	framework.DecidingCheck("a create and an update are refused for the failed webhook; nothing is stored", func() {
		Expect(createErr).To(MatchError(ContainSubstring(failed)), "a create went through a webhook that failed")
		Expect(getErr).To(Satisfy(apierrors.IsNotFound), "the refused Redis was stored")
		Expect(updateErr).To(MatchError(ContainSubstring("failed calling webhook")), "an update went through a webhook that failed")
	})
	_, deleteErr := env.Kubectl.Run(ctx, "delete", "redis", "cache", "-n", ns)
	env.MustKubectl(ctx, "delete", "redis", "held", "-n", ns, "--wait=false")
	_, removeErr := env.Kubectl.Run(ctx, "patch", "redis", "held", "-n", ns, "--type=json", "-p", `[{"op":"remove","path":"/metadata/finalizers"}]`)
	framework.DecidingCheck("a delete and the removal of a finalizer of a Redis being deleted are not refused", func() {
		Expect(deleteErr).NotTo(HaveOccurred(), "a delete went to the webhook, which failed")
		Expect(removeErr).NotTo(HaveOccurred(), "the removal of the last finalizer of a Redis being deleted went to the webhook, which failed")
	})
	env.ExpectGone(ctx, &myappv1.Redis{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "held"}})

	pod, err := env.Pod(ctx, ns, "cache-1")
	Expect(err).NotTo(HaveOccurred())
	Expect(pod.UID).To(Equal(foreign.UID), "the foreign pod was replaced")
}

// webhookTimeout is the lesson's timeoutSeconds (the marker on the
// webhook, in the chapter's manifests.yaml): how long a write of a Redis
// may wait on a webhook that does not answer.
const webhookTimeout = 5 * time.Second

// expectHungWebhook: while every replica hangs (SIGSTOP: connections are
// accepted, never answered), a create waits for the webhook's
// timeoutSeconds, the lesson's 5 s, which the deployed configuration must
// say, and failurePolicy Ignore then admits it. "No more" is measured
// against a create through the answering webhook just before: the same
// kubectl, API server and storage, without the wait.
func expectHungWebhook(ctx context.Context, ns string) {
	GinkgoHelper()
	c := env.InCluster()
	createForeignPod(ctx, ns, "cache-1")
	// The bound is the lesson's 5 s, not whatever the cluster holds: a
	// webhook deployed with a longer timeout fails here, where the value
	// is set, rather than pass a check measured against itself.
	timeout := webhookTimeout
	deployed, err := framework.WebhookTimeout(ctx, env.Client)
	Expect(err).NotTo(HaveOccurred())
	Expect(deployed).To(Equal(timeout), "the webhook's timeoutSeconds, as make deploy configured it")

	By("a create while the webhook answers, the baseline")
	start := time.Now()
	_, err = env.Apply(ctx, framework.RedisManifest(ns, "baseline", 0))
	baseline := time.Since(start)
	Expect(err).NotTo(HaveOccurred())

	By("freezing every replica of the operator (SIGSTOP)")
	Expect(c.Freeze(ctx, true)).To(Succeed())
	DeferCleanup(func(ctx SpecContext) {
		Expect(c.Freeze(ctx, false)).To(Succeed())
		Expect(c.WaitForWebhook(ctx)).To(Succeed())
	})
	// Twice the baseline for a busy machine, and a second for the API
	// server's own timer.
	bound := timeout + 2*baseline + time.Second
	framework.LessonStep(fmt.Sprintf("a create waits the webhook's timeoutSeconds (%s) for the hung webhook, then is admitted", timeout))
	start = time.Now()
	_, err = env.Apply(ctx, framework.RedisManifest(ns, "cache", 2))
	took := time.Since(start)
	GinkgoWriter.Printf("the create returned after %s (the baseline create %s, the bound %s)\n",
		took.Round(time.Millisecond), baseline.Round(time.Millisecond), bound.Round(time.Millisecond))
	framework.DecidingCheck("the create is admitted after the webhook's timeoutSeconds, and not much later", func() {
		Expect(err).NotTo(HaveOccurred(), "with failurePolicy Ignore, the API server refused a Redis that the webhook did not answer for")
		Expect(took).To(BeNumerically(">=", timeout), "the create did not wait for the webhook")
		Expect(took).To(BeNumerically("<", bound), "the create waited longer than the webhook's timeoutSeconds and a baseline create's time")
	})
}

func containsAll(s string, subs ...string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}

// fileCertSerial returns the serial number of the PEM certificate in file.
func fileCertSerial(file string) (*big.Int, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	block, _ := pem.Decode(data)
	if block == nil {
		return nil, fmt.Errorf("%s: no PEM block", file)
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return cert.SerialNumber, nil
}
