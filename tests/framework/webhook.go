package framework

import (
	"context"
	"crypto/tls"
	"fmt"
	"math/big"
	"net"
	"strconv"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"example.com/redis-operator/chapters"
)

// What config/webhook deploys, by name.
const (
	WebhookConfiguration = "redis-operator-validating-webhook"
	// WebhookName is the webhook's name in it; the API server quotes it
	// when the webhook refuses ("admission webhook "..." denied the request").
	WebhookName = "vredis-v1.myapp.example.com"
)

// ServedCertSerial returns the serial number of the certificate that
// replica r's webhook server presents now: a pod's through `kubectl
// port-forward`, a host process' on its loopback port.
func (c *InCluster) ServedCertSerial(ctx context.Context, r *Replica) (*big.Int, error) {
	addr := r.webhookAddr
	if c.pods {
		local, stop, err := portForward(ctx, &c.env.ClusterProxy, r.Name, webhookPort)
		if err != nil {
			return nil, err
		}
		defer stop()
		addr = local
	}
	dialer := &tls.Dialer{NetDialer: &net.Dialer{Timeout: 5 * time.Second},
		// Only the certificate's serial number matters here; the API
		// server is what verifies it, against the caBundle.
		Config: &tls.Config{InsecureSkipVerify: true}} //nolint:gosec // see above
	conn, err := dialer.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	certs := conn.(*tls.Conn).ConnectionState().PeerCertificates
	if len(certs) == 0 {
		return nil, fmt.Errorf("%s presented no certificate", r.Name)
	}
	return certs[0].SerialNumber, nil
}

// StopAll stops every replica: the Deployment scaled to 0 and its pods
// gone, or the host processes stopped.
func (c *InCluster) StopAll(ctx context.Context) {
	GinkgoHelper()
	mustBeSerial("stopping every replica")
	if !c.pods {
		for _, r := range c.hosts {
			Expect(r.host.Stop()).To(Succeed(), "stopping replica %s", r.Name)
		}
		return
	}
	c.env.MustKubectl(ctx, "scale", "deployment", Deployment, "-n", OperatorNamespace, "--replicas=0")
	Eventually(func(g Gomega) {
		list := &corev1.PodList{}
		g.Expect(c.env.Client.List(ctx, list, client.InNamespace(OperatorNamespace), operatorPods)).To(Succeed())
		g.Expect(list.Items).To(BeEmpty())
	}).WithContext(ctx).Should(Succeed(), "the operator's pods did not go")
}

// StartAll brings every replica back after StopAll and waits until each
// one's webhook server answers.
func (c *InCluster) StartAll(ctx context.Context) {
	GinkgoHelper()
	mustBeSerial("starting every replica")
	if c.pods {
		dep := &appsv1.Deployment{}
		Expect(c.env.Client.Get(ctx, client.ObjectKey{Namespace: OperatorNamespace, Name: Deployment}, dep)).To(Succeed())
		if dep.Spec.Replicas == nil || *dep.Spec.Replicas != DeployedReplicas {
			c.env.MustKubectl(ctx, "scale", "deployment", Deployment, "-n", OperatorNamespace, fmt.Sprintf("--replicas=%d", DeployedReplicas))
		}
	}
	c.ExpectReplicasRun(ctx)
	Expect(c.WaitForWebhook(ctx)).To(Succeed())
}

// WaitForWebhook runs `make wait-webhook` for the chapter deployed, which
// waits, when that chapter serves the webhook (the table of chapters
// says), until the API server gets answers from it. Until then,
// failurePolicy Ignore admits what the webhook would refuse: a pod's
// endpoint reaches the Service a moment after the pod is Ready, and a
// host process listens a moment after it starts.
func (c *InCluster) WaitForWebhook(ctx context.Context) error {
	return c.env.Make(ctx, "wait-webhook", chapters.EnvChapter+"="+strconv.Itoa(c.Chapter))
}

// Freeze stops every replica's process without ending it (SIGSTOP), or,
// with freeze false, lets them run again (SIGCONT). A frozen replica's
// kernel still accepts connections on its ports, but nothing answers:
// a webhook that hangs.
func (c *InCluster) Freeze(ctx context.Context, freeze bool) error {
	GinkgoHelper()
	mustBeSerial("freezing the replicas")
	replicas, err := c.Replicas(ctx)
	if err != nil {
		return err
	}
	sig, name := syscall.SIGSTOP, "STOP"
	if !freeze {
		sig, name = syscall.SIGCONT, "CONT"
	}
	for _, r := range replicas {
		// Frozen past its renew deadline, a leader loses its Lease and
		// exits once it runs again, to be restarted: asked for.
		if freeze && !c.pods {
			r.host.allowExit()
		} else if freeze {
			c.restartsAsked[r.Name]++
		}
		if !c.pods {
			GinkgoWriter.Printf("$ kill -%s %d   # %s\n", name, r.host.pid(), r.Name)
			if err := r.host.Signal(sig); err != nil {
				return err
			}
			continue
		}
		if err := signalContainer(ctx, &c.env.ClusterProxy, r, name); err != nil {
			return err
		}
	}
	return nil
}

// WebhookTimeout reads the webhook's timeoutSeconds from the deployed
// configuration, with c: how long the API server waits for an answer
// before its failurePolicy decides.
func WebhookTimeout(ctx context.Context, c client.Reader) (time.Duration, error) {
	conf := &admissionregistrationv1.ValidatingWebhookConfiguration{}
	if err := c.Get(ctx, client.ObjectKey{Name: WebhookConfiguration}, conf); err != nil {
		return 0, err
	}
	for _, w := range conf.Webhooks {
		if w.Name != WebhookName {
			continue
		}
		if w.TimeoutSeconds == nil { // the API server defaults it
			return 0, fmt.Errorf("webhook %s of %s has no timeoutSeconds", WebhookName, WebhookConfiguration)
		}
		return time.Duration(*w.TimeoutSeconds) * time.Second, nil
	}
	return 0, fmt.Errorf("%s has no webhook %s", WebhookConfiguration, WebhookName)
}

// SetFailurePolicy sets the webhook's failurePolicy (Ignore or Fail), for
// every spec: a Serial spec's.
func (e *Env) SetFailurePolicy(ctx context.Context, policy string) {
	GinkgoHelper()
	mustBeSerial("SetFailurePolicy")
	e.MustKubectl(ctx, "patch", "validatingwebhookconfiguration", WebhookConfiguration, "--type=json",
		"-p", fmt.Sprintf(`[{"op":"replace","path":"/webhooks/0/failurePolicy","value":%q}]`, policy))
}

// Processes identifies the replicas' processes: each pod's UID and its
// container's restart count, or each host process' pid.
func (c *InCluster) Processes(ctx context.Context) []string {
	GinkgoHelper()
	var ids []string
	if !c.pods {
		for _, r := range c.hosts {
			ids = append(ids, fmt.Sprintf("%s pid %d", r.Name, r.host.pid()))
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
