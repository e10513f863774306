package framework

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
)

// The specs of chapter 10, admission, which need the operator deployed
// with its webhook (NewInClusterSuite).

// webhookDenied is how the API server begins a refusal of the webhook.
var webhookDenied = fmt.Sprintf("admission webhook %q denied the request", WebhookName)

// RedisImageManifest is a Redis with spec.image set.
func RedisImageManifest(ns, name string, replicas int, image string) string {
	return RedisManifest(ns, name, replicas) + fmt.Sprintf("  image: %q\n", image)
}

// ExpectCELRulesRefuse: the CRD's CEL rules refuse a Redis whose image has
// whitespace, no tag or a malformed digest, each with its message, and a
// change of the image of a Redis; nothing a refused object asks for is
// created.
func (e *Env) ExpectCELRulesRefuse(ctx context.Context, ns string) {
	GinkgoHelper()
	LessonStep("the CRD's CEL rules refuse a Redis whose image has whitespace, no tag or a malformed digest, saying why; nothing is created")
	for _, tc := range []struct{ image, message string }{
		{"redis 7.0", `spec.image: Invalid value: "redis 7.0": must not contain spaces or other whitespace`},
		{"redis", `spec.image: Invalid value: "redis": must end with a tag or a digest`},
		{"redis@sha256:0123abc", `spec.image: Invalid value: "redis@sha256:0123abc": must end with a tag or a digest`},
	} {
		_, err := e.Apply(ctx, RedisImageManifest(ns, "bad", 1, tc.image))
		Expect(err).To(MatchError(ContainSubstring(tc.message)), "a Redis with image %q was not refused with its message", tc.image)
	}
	_, err := e.Redis(ctx, ns, "bad")
	Expect(err).To(Satisfy(apierrors.IsNotFound), "a refused Redis was stored")
	pods := &corev1.PodList{}
	Expect(e.Client.List(ctx, pods, client.InNamespace(ns))).To(Succeed())
	Expect(pods.Items).To(BeEmpty(), "pods were created for a refused Redis")

	By("a Redis with a tag is admitted; a change of its image is refused, and the image stays")
	_, err = e.Apply(ctx, RedisImageManifest(ns, "cache", 1, myappv1.DefaultImage))
	Expect(err).NotTo(HaveOccurred())
	e.ExpectPodsRun(ctx, ns, "cache", 1)
	_, err = e.Kubectl.Run(ctx, "patch", "redis", "cache", "-n", ns, "--type=merge", "-p", `{"spec":{"image":"redis:7.2"}}`)
	Expect(err).To(MatchError(ContainSubstring(`spec.image: Invalid value: "redis:7.2": cannot be changed`)), "the image of a Redis was changed")
	redis, err := e.Redis(ctx, ns, "cache")
	Expect(err).NotTo(HaveOccurred())
	Expect(redis.Spec.Image).To(Equal(myappv1.DefaultImage))
}

// ExpectWebhookRefusesCollision: a Redis whose pod names are held by a pod
// that no Redis of its name controls is refused at create, with the pod
// named; nothing is created and the pod stays. A Redis that grows into
// such a name is admitted with a warning.
func (e *Env) ExpectWebhookRefusesCollision(ctx context.Context, ns string) {
	GinkgoHelper()
	foreign := e.CreateForeignPod(ctx, ns, "cache-1")

	LessonStep("the webhook refuses a Redis named cache of 3 replicas, naming pod cache-1; nothing is created and the pod stays")
	_, err := e.Apply(ctx, RedisManifest(ns, "cache", 3))
	Expect(err).To(MatchError(And(ContainSubstring(webhookDenied), ContainSubstring("pod cache-1 already exists"))),
		"a Redis whose pod name another pod holds was admitted")
	_, err = e.Redis(ctx, ns, "cache")
	Expect(err).To(Satisfy(apierrors.IsNotFound), "the refused Redis was stored")
	pods := &corev1.PodList{}
	Expect(e.Client.List(ctx, pods, client.InNamespace(ns))).To(Succeed())
	Expect(pods.Items).To(ConsistOf(HaveField("UID", foreign.UID)), "the namespace holds other pods than the foreign one")

	By("a Redis that grows into a name another pod holds is admitted, with a warning naming it")
	e.CreateRedis(ctx, ns, "db", 1)
	e.CreateForeignPod(ctx, ns, "db-1")
	_, warnings, err := e.Kubectl.Output(ctx, "", "patch", "redis", "db", "-n", ns, "--type=merge", "-p", `{"spec":{"replicas":2}}`)
	Expect(err).NotTo(HaveOccurred())
	Expect(warnings).To(ContainSubstring(`Warning: pod db-1 exists and no Redis named "db" controls it`))
}

// CreateForeignPod creates a pod that no Redis controls and returns it.
func (e *Env) CreateForeignPod(ctx context.Context, ns, name string) *corev1.Pod {
	GinkgoHelper()
	By(fmt.Sprintf("creating pod %s, which no Redis controls", name))
	_, err := e.Apply(ctx, ForeignPodManifest(ns, name))
	Expect(err).NotTo(HaveOccurred())
	pod, err := e.Pod(ctx, ns, name)
	Expect(err).NotTo(HaveOccurred())
	return pod
}

// ExpectCertRotation: the webhook serves the certificate make deploy made;
// after `make rotate-webhook-cert`, every replica serves the new one with
// no restart, and the webhook refuses a colliding Redis all along.
func (e *Env) ExpectCertRotation(ctx context.Context, ns string) {
	GinkgoHelper()
	c := e.InCluster
	e.CreateForeignPod(ctx, ns, "cache-0")
	replicas, err := c.Replicas(ctx)
	Expect(err).NotTo(HaveOccurred())
	restarts := c.restarts(ctx)
	certDir := RepoRoot() + "/" + WebhookCertDir
	before, err := fileCertSerial(certDir + "/tls.crt")
	Expect(err).NotTo(HaveOccurred())
	// refused counts the webhook's answers to a colliding Redis (a
	// server-side dry run, which stores nothing); admitted counts the
	// times it was admitted, which failurePolicy Ignore does when no
	// replica answers.
	var refused, admitted int
	check := func() {
		_, err := e.Apply(ctx, RedisManifest(ns, "cache", 1), "--dry-run=server")
		if err != nil && containsAll(err.Error(), webhookDenied, "pod cache-0 already exists") {
			refused++
		} else {
			admitted++
			GinkgoWriter.Printf("the webhook did not refuse the colliding Redis: %v\n", err)
		}
	}
	serving := func(want *big.Int) func(Gomega) {
		return func(g Gomega) {
			check()
			for _, r := range replicas {
				got, err := c.ServedCertSerial(ctx, r)
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(got).To(Equal(want), "%s serves another certificate", r.Name)
			}
		}
	}

	LessonStep("every replica serves make deploy's certificate, then, after make rotate-webhook-cert, the new one, with no restart; the webhook refuses a colliding Redis all along")
	Eventually(serving(before)).WithContext(ctx).WithPolling(time.Second).Should(Succeed())
	Expect(e.make(ctx, "rotate-webhook-cert")).To(Succeed())
	after, err := fileCertSerial(certDir + "/tls.crt")
	Expect(err).NotTo(HaveOccurred())
	Expect(after).NotTo(Equal(before), "make rotate-webhook-cert kept the serving certificate")
	start := time.Now()
	// On kind, the kubelet updates a mounted Secret at its next sync of
	// the pod, within about a minute.
	Eventually(serving(after)).WithContext(ctx).WithTimeout(3 * time.Minute).WithPolling(2 * time.Second).Should(Succeed())
	GinkgoWriter.Printf("every replica served the new certificate %s after the rotation; the webhook answered %d times, and %d times not\n",
		time.Since(start).Round(time.Second), refused, admitted)
	Expect(admitted).To(BeZero(), "the webhook did not answer during the rotation")
	Expect(c.restarts(ctx)).To(Equal(restarts), "a replica restarted to serve the new certificate")
}

// restarts identifies the replicas' processes: each pod's UID and its
// container's restart count, or each host process' pid.
func (c *InCluster) restarts(ctx context.Context) []string {
	GinkgoHelper()
	var ids []string
	if !c.pods {
		for _, r := range c.hosts {
			ids = append(ids, fmt.Sprintf("%s pid %d", r.Name, r.proc.Pid()))
		}
		return ids
	}
	list := &corev1.PodList{}
	Expect(c.env.Client.List(ctx, list, client.InNamespace(OperatorNamespace), operatorPods)).To(Succeed())
	for _, p := range list.Items {
		n := int32(0)
		for _, s := range p.Status.ContainerStatuses {
			n += s.RestartCount
		}
		ids = append(ids, fmt.Sprintf("%s %s restarts %d", p.Name, p.UID, n))
	}
	return ids
}

// ExpectDownWebhook: while a replica answers, the webhook refuses a
// colliding Redis; with none, failurePolicy Ignore (the chapter's) admits
// it. With failurePolicy Fail, the API server refuses every create and
// update it cannot send to the webhook, but not a delete, which the
// webhook does not intercept, nor the removal of a finalizer of a Redis
// being deleted, which its matchConditions leave out.
func (e *Env) ExpectDownWebhook(ctx context.Context, ns string) {
	GinkgoHelper()
	c := e.InCluster
	foreign := e.CreateForeignPod(ctx, ns, "cache-1")
	_, err := e.Apply(ctx, RedisManifest(ns, "held", 0))
	Expect(err).NotTo(HaveOccurred())
	e.MustKubectl(ctx, "patch", "redis", "held", "-n", ns, "--type=merge", "-p", `{"metadata":{"finalizers":["example.com/hold"]}}`)
	DeferCleanup(func(ctx SpecContext) { // if the spec fails before it removes it
		_, _ = e.Kubectl.Run(ctx, "patch", "redis", "held", "-n", ns, "--type=merge", "-p", `{"metadata":{"finalizers":null}}`)
	})

	LessonStep("the webhook refuses a colliding Redis while a replica runs; with no replica, failurePolicy Ignore admits it")
	_, err = e.Apply(ctx, RedisManifest(ns, "cache", 2))
	Expect(err).To(MatchError(ContainSubstring(webhookDenied)), "the webhook did not refuse a colliding Redis")
	By("stopping every replica of the operator")
	c.StopAll(ctx)
	DeferCleanup(func(ctx SpecContext) {
		e.SetFailurePolicy(ctx, "Ignore")
		c.StartAll(ctx)
	})
	_, err = e.Apply(ctx, RedisManifest(ns, "cache", 2))
	Expect(err).NotTo(HaveOccurred(), "with failurePolicy Ignore, the API server refused a Redis that no webhook answered for")

	By("with failurePolicy Fail, creates and updates are refused; a delete and a finalizer's removal are not")
	e.SetFailurePolicy(ctx, "Fail")
	start := time.Now()
	_, err = e.Apply(ctx, RedisManifest(ns, "db", 1))
	Expect(err).To(MatchError(ContainSubstring(fmt.Sprintf("failed calling webhook %q", WebhookName))))
	GinkgoWriter.Printf("the API server refused the create after %s\n", time.Since(start).Round(time.Millisecond))
	_, err = e.Redis(ctx, ns, "db")
	Expect(err).To(Satisfy(apierrors.IsNotFound))
	_, err = e.Kubectl.Run(ctx, "patch", "redis", "cache", "-n", ns, "--type=merge", "-p", `{"spec":{"replicas":1}}`)
	Expect(err).To(MatchError(ContainSubstring("failed calling webhook")), "an update went through a webhook that failed")
	e.MustKubectl(ctx, "delete", "redis", "cache", "-n", ns)
	e.MustKubectl(ctx, "delete", "redis", "held", "-n", ns, "--wait=false")
	e.MustKubectl(ctx, "patch", "redis", "held", "-n", ns, "--type=json", "-p", `[{"op":"remove","path":"/metadata/finalizers"}]`)
	e.ExpectGone(ctx, &myappv1.Redis{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "held"}})

	pod, err := e.Pod(ctx, ns, "cache-1")
	Expect(err).NotTo(HaveOccurred())
	Expect(pod.UID).To(Equal(foreign.UID), "the foreign pod was replaced")
}

// WebhookTimeout is the webhook's timeoutSeconds (the marker in the
// chapter's redis_webhook.go).
const WebhookTimeout = 5 * time.Second

// ExpectHungWebhook: while every replica hangs (SIGSTOP: connections are
// accepted, never answered), a create waits for the webhook's
// timeoutSeconds, no more, and failurePolicy Ignore then admits it.
func (e *Env) ExpectHungWebhook(ctx context.Context, ns string) {
	GinkgoHelper()
	c := e.InCluster
	e.CreateForeignPod(ctx, ns, "cache-1")

	By("freezing every replica of the operator (SIGSTOP)")
	Expect(c.Freeze(ctx, true)).To(Succeed())
	DeferCleanup(func(ctx SpecContext) {
		Expect(c.Freeze(ctx, false)).To(Succeed())
		Expect(c.waitForWebhook(ctx)).To(Succeed())
	})
	LessonStep(fmt.Sprintf("a create waits %s for the hung webhook, then is admitted", WebhookTimeout))
	start := time.Now()
	_, err := e.Apply(ctx, RedisManifest(ns, "cache", 2))
	took := time.Since(start)
	GinkgoWriter.Printf("the create returned after %s\n", took.Round(time.Millisecond))
	Expect(err).NotTo(HaveOccurred(), "with failurePolicy Ignore, the API server refused a Redis that the webhook did not answer for")
	Expect(took).To(BeNumerically(">=", WebhookTimeout), "the create did not wait for the webhook")
	Expect(took).To(BeNumerically("<", WebhookTimeout+3*time.Second), "the create waited longer than the webhook's timeoutSeconds")
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
