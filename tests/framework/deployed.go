package framework

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"example.com/redis-operator/chapters"
	"example.com/redis-operator/internal/cluster"
	"example.com/redis-operator/internal/cluster/kindcluster"
	"example.com/redis-operator/internal/proc"
)

// What config/ deploys (chapter 10 on), by name.
const (
	Deployment               = "redis-operator-controller-manager"
	DeploymentServiceAccount = "redis-operator-controller-manager"
	// LeaseName is the leader election Lease, in OperatorNamespace: the
	// operator's LeaderElectionID.
	LeaseName         = "redis-operator.myapp.example.com"
	MetricsReaderRole = "redis-operator-metrics-reader"
	webhookPort       = 9443
	// DeployedReplicas is the Deployment's replicas in config/manager.
	DeployedReplicas = 2
	metricsPort      = 8443
)

// InCluster is the operator as `make deploy` runs it. Where nodes run
// containers (kind, an existing cluster), it is the Deployment's two pods,
// from the image `make docker-build` made. The local backend's hollow nodes
// run none, so there `make deploy DEPLOY_REPLICAS=0` applies the same
// manifests with no pod, and two host processes of the operator under
// test (OPERATOR_BIN, built from the same source as the image, with the
// race detector in CI; else the image's binary, _output/image/manager-linux)
// run with the Deployment's flags, as its ServiceAccount, with the same
// leader election.
type InCluster struct {
	env *Env
	// Chapter is the chapter the operator runs (OPERATOR_CHAPTER).
	Chapter int
	// pods is true where the replicas are pods.
	pods  bool
	hosts []*Replica // on the local backend
	// webhookPorts are the host replicas' webhook ports; the API server
	// calls the first (make deploy WEBHOOK_URL=...).
	webhookPorts []int
	// remote is set on the parallel processes other than 1, which did not
	// deploy the operator: they can list its pods, not its host replicas.
	remote bool
	// restartsAsked counts, by pod, the container restarts that specs
	// asked for (Stop with kill); restartsSeen those a death check
	// reported, so that each is reported once.
	restartsAsked, restartsSeen map[string]int32
	// deployed marks where the operator stood once deployed, for the
	// suite's death check.
	deployed deathMark
}

// Replica is one replica of the deployed operator: a pod, or on the
// local backend a host process, an Operator of its own (its log, its
// ports, its Stop, Kill and death check), as each of Replicas is.
type Replica struct {
	Name string
	// On the local backend: the process, its webhook's address, and
	// where its log began when it last started.
	host        *Operator
	webhookAddr string
	logStart    int64
}

// A suite whose row says chapters.OperatorDeployed runs the operator as
// a user does: the CRD installed (make install), then `make deploy`; at
// the end, `make undeploy`. Its specs reach it through Env.InCluster.
func init() {
	operatorRuns[chapters.OperatorDeployed] = func(env *Env) (setUp, connect func(context.Context)) {
		deployed := func(remote bool) {
			env.deployed = &InCluster{env: env, Chapter: operatorChapter(env.Chapter), pods: env.Cluster.Name() != cluster.Local, remote: remote,
				restartsAsked: map[string]int32{}, restartsSeen: map[string]int32{}}
		}
		return func(ctx context.Context) {
				env.setupCluster(ctx)
				deployed(false)
				Expect(env.InCluster().Deploy(ctx)).To(Succeed())
			}, func(ctx context.Context) {
				env.connect(ctx)
				deployed(true)
			}
	}
}

// InCluster is the operator deployed in the cluster, in a suite whose
// row says chapters.OperatorDeployed (its Operator, on the host, is nil);
// nil in any other suite.
func (e *Env) InCluster() *InCluster {
	c, _ := e.deployed.(*InCluster)
	return c
}

// Pods reports whether the replicas are pods (else host processes).
func (c *InCluster) Pods() bool { return c.pods }

// Deploy runs `make deploy` for the suite's chapter and waits until the
// replicas run and, from chapter 11 on, the API server reaches their
// webhook.
func (c *InCluster) Deploy(ctx context.Context) error {
	GinkgoHelper()
	mustBeSerial("make deploy")
	args := []string{"deploy", chapters.EnvChapter + "=" + strconv.Itoa(c.Chapter)}
	if !c.pods {
		// The local API server runs on the host and reaches no Service's
		// pods: it calls the webhook of the first host replica by URL.
		if c.webhookPorts == nil {
			for range DeployedReplicas {
				port, err := proc.FreePort()
				if err != nil {
					return err
				}
				c.webhookPorts = append(c.webhookPorts, port)
			}
		}
		args = append(args, "DEPLOY_REPLICAS=0", fmt.Sprintf("WEBHOOK_URL=https://127.0.0.1:%d", c.webhookPorts[0]))
	}
	if err := c.env.Make(ctx, args...); err != nil {
		return err
	}
	if c.pods { // make deploy waited for the webhook
		c.deployed = c.env.markDeaths()
		return nil
	}
	if err := c.startHosts(ctx); err != nil {
		return err
	}
	c.deployed = c.env.markDeaths()
	return c.WaitForWebhook(ctx)
}

// hostProcesses are the host replicas this process started (the local
// backend's, on parallel process 1).
func (c *InCluster) hostProcesses() []*Operator {
	var hosts []*Operator
	for _, r := range c.hosts {
		hosts = append(hosts, r.host)
	}
	return hosts
}

// podDeaths says how the operator's pods show, since at, that a replica
// panicked, raced or died: a death mark in its container's log, or a
// restart of its container that no spec asked for (with the log of the
// container that ended). Each restart is reported once.
func (c *InCluster) podDeaths(ctx context.Context, at time.Time, when string) []string {
	if !c.pods || c.remote {
		return nil
	}
	list := &corev1.PodList{}
	if err := c.env.Client.List(ctx, list, client.InNamespace(OperatorNamespace), operatorPods); err != nil {
		return []string{fmt.Sprintf("listing the operator's pods %s: %v", when, err)}
	}
	var deaths []string
	for _, p := range list.Items {
		for _, st := range p.Status.ContainerStatuses {
			if st.Name != "manager" {
				continue
			}
			args := []string{"logs", "-n", OperatorNamespace, p.Name, "-c", "manager"}
			if !at.IsZero() {
				args = append(args, "--since-time="+at.UTC().Format(time.RFC3339))
			}
			if log, err := c.env.Kubectl.Run(ctx, args...); err == nil {
				if lines := deathIn(log, 3); len(lines) > 0 {
					deaths = append(deaths, fmt.Sprintf("the chapter %d operator's pod %s panicked, or died, %s:\n%s", c.Chapter, p.Name, when, strings.Join(lines, "\n")))
				}
			}
			unasked := st.RestartCount - c.restartsAsked[p.Name] - c.restartsSeen[p.Name]
			if unasked <= 0 {
				continue
			}
			c.restartsSeen[p.Name] += unasked
			how := ""
			if t := st.LastTerminationState.Terminated; t != nil {
				how = fmt.Sprintf(" (its last container %s, exit code %d)", t.Reason, t.ExitCode)
			}
			previous, _ := c.env.Kubectl.Run(ctx, "logs", "-n", OperatorNamespace, p.Name, "-c", "manager", "--previous")
			deaths = append(deaths, fmt.Sprintf("the chapter %d operator's pod %s restarted %d times by itself %s%s; the log of the container that ended ends with:\n%s",
				c.Chapter, p.Name, unasked, when, how, lastLines(previous, 20)))
		}
	}
	return deaths
}

// Undeploy runs `make undeploy` (on the local backend, after stopping
// the host processes, whose ServiceAccount it deletes).
func (c *InCluster) Undeploy(ctx context.Context) error {
	GinkgoHelper()
	mustBeSerial("make undeploy")
	for _, r := range c.hosts {
		Expect(r.host.Stop()).To(Succeed(), "stopping replica %s", r.Name)
	}
	c.hosts = nil
	return c.env.Make(ctx, "undeploy")
}

// startHosts starts the host replicas: the operator under test (see
// InCluster) with the Deployment's flags, but for the addresses it binds
// (each gets free loopback ports), the Lease's namespace (a pod reads it
// from its token's mount) and the webhook's certificates (a pod mounts
// their Secret; make deploy wrote it from these files), with a token of
// the Deployment's ServiceAccount.
func (c *InCluster) startHosts(ctx context.Context) error {
	dep := &appsv1.Deployment{}
	if err := c.env.Client.Get(ctx, client.ObjectKey{Namespace: OperatorNamespace, Name: Deployment}, dep); err != nil {
		return err
	}
	var args []string
	for _, a := range dep.Spec.Template.Spec.Containers[0].Args {
		if !strings.HasPrefix(a, "--metrics-bind-address") && !strings.HasPrefix(a, "--health-probe-bind-address") {
			args = append(args, a)
		}
	}
	args = append(args, "--leader-election-namespace="+OperatorNamespace)
	kubeconfig := filepath.Join(OutputDir(), "operator", chapters.SuiteName(c.env.Chapter)+"-deployed.kubeconfig")
	if err := c.env.tokenKubeconfig(ctx, OperatorNamespace, DeploymentServiceAccount, kubeconfig); err != nil {
		return err
	}
	binary := filepath.Join(OutputDir(), "image", "manager-linux")
	if b := os.Getenv(chapters.EnvOperatorBin); b != "" {
		binary = b
	}
	for i := range DeployedReplicas {
		name := fmt.Sprintf("replica-%d", i)
		r := &Replica{Name: name, webhookAddr: fmt.Sprintf("127.0.0.1:%d", c.webhookPorts[i]), host: &Operator{
			Name: name, Binary: binary, Chapter: c.Chapter, Kubeconfig: kubeconfig,
			LogPath: filepath.Join(OutputDir(), "logs", chapters.SuiteName(c.env.Chapter)+"-"+name+".log"), asDeployed: true,
			Args: append(slices.Clip(args), fmt.Sprintf("--webhook-port=%d", c.webhookPorts[i]), "--webhook-cert-dir="+WebhookCertDir()),
		}}
		if err := r.start(ctx); err != nil {
			return err
		}
		c.hosts = append(c.hosts, r)
	}
	return nil
}

// start starts host replica r, whose log then begins where its file ends.
func (r *Replica) start(ctx context.Context) error {
	r.logStart = r.host.LogOffset()
	return r.host.Start(ctx)
}

// operatorPods selects the Deployment's pods (config/manager).
var operatorPods = client.MatchingLabels{"app.kubernetes.io/name": "redis-operator", "app.kubernetes.io/component": "controller-manager"}

// Replicas lists the replicas that run now: the Deployment's pods that
// run and are not being deleted, or the host processes. A spec that
// looks at the replicas one by one is Serial: it stops them, or counts
// what each does.
func (c *InCluster) Replicas(ctx context.Context) ([]*Replica, error) {
	GinkgoHelper()
	mustBeSerial("looking at the operator's replicas")
	return c.replicas(ctx)
}

// replicas is Replicas without the check; the failure dump uses it.
func (c *InCluster) replicas(ctx context.Context) ([]*Replica, error) {
	if !c.pods && c.remote {
		return nil, fmt.Errorf("the host replicas run on parallel process 1, not %d; their logs are in %s", GinkgoParallelProcess(), filepath.Join(OutputDir(), "logs"))
	}
	if !c.pods {
		var running []*Replica
		for _, r := range c.hosts {
			if r.host.Running() {
				running = append(running, r)
			}
		}
		return running, nil
	}
	list := &corev1.PodList{}
	if err := c.env.Client.List(ctx, list, client.InNamespace(OperatorNamespace), operatorPods); err != nil {
		return nil, err
	}
	var running []*Replica
	for _, p := range list.Items {
		if p.DeletionTimestamp == nil && p.Status.Phase == corev1.PodRunning {
			running = append(running, &Replica{Name: p.Name})
		}
	}
	return running, nil
}

// ExpectReplicasRun waits until exactly the deployed number of replicas
// run, all ready, and no other (an old pod still terminating) is left. A
// host replica that a spec stopped is started again, as the ReplicaSet
// makes a new pod; one that died by itself fails the spec.
func (c *InCluster) ExpectReplicasRun(ctx context.Context) {
	GinkgoHelper()
	mustBeSerial("waiting for the operator's replicas")
	if !c.pods {
		for _, r := range c.hosts {
			Expect(r.host.exitedUnasked("before the replicas were counted")).To(BeEmpty(), "a replica of the operator died")
			if !r.host.Running() {
				GinkgoWriter.Printf("starting %s again\n", r.Name)
				Expect(r.start(ctx)).To(Succeed())
			}
		}
		return
	}
	Eventually(func(g Gomega) {
		list := &corev1.PodList{}
		g.Expect(c.env.Client.List(ctx, list, client.InNamespace(OperatorNamespace), operatorPods)).To(Succeed())
		g.Expect(list.Items).To(HaveLen(DeployedReplicas))
		for _, p := range list.Items {
			g.Expect(p.DeletionTimestamp).To(BeNil(), "pod %s is being deleted", p.Name)
			ready := false
			for _, cond := range p.Status.Conditions {
				ready = ready || (cond.Type == corev1.PodReady && cond.Status == corev1.ConditionTrue)
			}
			g.Expect(ready).To(BeTrue(), "pod %s is not ready", p.Name)
		}
	}).WithContext(ctx).WithTimeout(2*time.Minute).Should(Succeed(), "the operator's %d replicas do not run", DeployedReplicas)
}

// Lease reads the leader election Lease.
func (c *InCluster) Lease(ctx context.Context) (*coordinationv1.Lease, error) {
	l := &coordinationv1.Lease{}
	return l, c.env.Client.Get(ctx, client.ObjectKey{Namespace: OperatorNamespace, Name: LeaseName}, l)
}

// Leader waits until a running replica holds the Lease and returns it,
// with the Lease. A pod's identity in the Lease starts with its name (its
// host name); two host processes share the host's name, so there the
// leader is the one that logged acquiring it.
func (c *InCluster) Leader(ctx context.Context) (*Replica, *coordinationv1.Lease) {
	GinkgoHelper()
	var leader *Replica
	var lease *coordinationv1.Lease
	Eventually(func(g Gomega) {
		var err error
		lease, err = c.Lease(ctx)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(lease.Spec.HolderIdentity).NotTo(BeNil())
		holder := *lease.Spec.HolderIdentity
		g.Expect(holder).NotTo(BeEmpty(), "no replica holds the Lease")
		replicas, err := c.Replicas(ctx)
		g.Expect(err).NotTo(HaveOccurred())
		leader = nil
		for _, r := range replicas {
			if c.pods && strings.HasPrefix(holder, r.Name+"_") || !c.pods && strings.Contains(c.Log(ctx, r), AcquiredLease) {
				leader = r
			}
		}
		g.Expect(leader).NotTo(BeNil(), "the Lease's holder %s is none of the running replicas", holder)
	}).WithContext(ctx).Should(Succeed())
	return leader, lease
}

// Log returns what replica r has logged: a pod's current container's
// log, or a host process' log since it started.
func (c *InCluster) Log(ctx context.Context, r *Replica) string {
	if !c.pods {
		return r.host.LogSince(r.logStart)
	}
	out, err := c.env.Kubectl.Run(ctx, "logs", "-n", OperatorNamespace, r.Name, "-c", "manager")
	if err != nil {
		return err.Error()
	}
	return out
}

// Stop stops replica r: with SIGTERM, as a rollout or a drained node
// does, or with SIGKILL, as a crash or a lost node does.
func (c *InCluster) Stop(ctx context.Context, r *Replica, kill bool) error {
	GinkgoHelper()
	mustBeSerial("stopping a replica")
	switch {
	case !c.pods && kill:
		return r.host.Kill()
	case !c.pods:
		return r.host.Stop()
	case !kill:
		// The kubelet sends SIGTERM; the ReplicaSet makes a new pod.
		_, err := c.env.Kubectl.Run(ctx, "delete", "pod", r.Name, "-n", OperatorNamespace, "--wait=false")
		return err
	default:
		// Asked: the restart that follows is no death.
		c.restartsAsked[r.Name]++
		return signalContainer(ctx, &c.env.ClusterProxy, r, "KILL")
	}
}

// signalContainer sends a signal (KILL, STOP, CONT) to the manager
// container's process of pod r from its kind node (after a SIGKILL the
// kubelet starts the container again in the same pod): no kubectl command
// does, `kubectl delete --force` included.
func signalContainer(ctx context.Context, p *ClusterProxy, r *Replica, signal string) error {
	if p.Cluster.Name() != cluster.Kind {
		return fmt.Errorf("signalling a container needs a node to run ctr on: kind's, not %s's", p.Cluster.Name())
	}
	pod := &corev1.Pod{}
	if err := p.Client.Get(ctx, client.ObjectKey{Namespace: OperatorNamespace, Name: r.Name}, pod); err != nil {
		return err
	}
	// The container's first process is the operator: ctr signals it, as
	// runc kill does.
	script := kindcluster.RunningContainersScript("io.kubernetes.container.name", "manager",
		"io.kubernetes.pod.name", r.Name, "io.kubernetes.pod.namespace", OperatorNamespace) +
		fmt.Sprintf(` | { read -r id && ctr --namespace k8s.io tasks kill --signal SIG%s "$id"; }`, signal)
	GinkgoWriter.Printf("$ docker exec %s bash -c \"$script\"   # script:\n%s\n", pod.Spec.NodeName, script)
	out, err := exec.CommandContext(ctx, "docker", "exec", pod.Spec.NodeName, "bash", "-c", script).CombinedOutput()
	if err != nil {
		return fmt.Errorf("sending SIG%s to the manager container of %s: %w: %s", signal, r.Name, err, out)
	}
	return nil
}

// Metrics GETs replica r's metrics endpoint over HTTPS with a bearer
// token (none when empty) and returns the status code and body. A pod's
// port is reached through `kubectl port-forward`.
func (c *InCluster) Metrics(ctx context.Context, r *Replica, token string) (int, string, error) {
	addr := ""
	if c.pods {
		local, stop, err := portForward(ctx, &c.env.ClusterProxy, r.Name, metricsPort)
		if err != nil {
			return 0, "", err
		}
		defer stop()
		addr = local
	} else {
		u, err := url.Parse(r.host.metricsURL())
		if err != nil {
			return 0, "", err
		}
		addr = u.Host
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+addr+"/metrics", nil)
	if err != nil {
		return 0, "", err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := metricsClient.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), err
}

// metricsClient accepts the operator's self-signed certificate: the
// spec checks who may read the metrics, not the certificate, which a
// real deployment gets from its own CA (cert-manager, say).
var metricsClient = &http.Client{
	Timeout:   10 * time.Second,
	Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}, //nolint:gosec // see above
}

var forwarding = regexp.MustCompile(`Forwarding from 127\.0\.0\.1:(\d+)`)

// portForward runs `kubectl port-forward` to port of pod and returns the
// local address and a function that stops it.
func portForward(ctx context.Context, p *ClusterProxy, pod string, port int) (string, func(), error) {
	args := []string{"--kubeconfig", p.Kubectl.Kubeconfig, "port-forward", "-n", OperatorNamespace, "pod/" + pod, ":" + strconv.Itoa(port)}
	GinkgoWriter.Printf("$ kubectl %s\n", strings.Join(args[2:], " "))
	cmd := exec.CommandContext(ctx, p.Kubectl.Path, args...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return "", nil, err
	}
	cmd.Stderr = GinkgoWriter
	if err := cmd.Start(); err != nil {
		return "", nil, err
	}
	stop := func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }
	lines := bufio.NewScanner(stdout)
	for lines.Scan() {
		if m := forwarding.FindStringSubmatch(lines.Text()); m != nil {
			go func() { _, _ = io.Copy(io.Discard, stdout) }()
			return "127.0.0.1:" + m[1], stop, nil
		}
	}
	stop()
	return "", nil, fmt.Errorf("kubectl port-forward to %s:%d ended before it forwarded", pod, port)
}

// MetricsToken returns a token of a new ServiceAccount in namespace ns,
// bound to the metrics-reader ClusterRole when reader is true.
func (p *ClusterProxy) MetricsToken(ctx context.Context, ns, name string, reader bool) string {
	GinkgoHelper()
	p.MustKubectl(ctx, "create", "serviceaccount", name, "-n", ns)
	if reader {
		binding := ns + "-" + name
		p.MustKubectl(ctx, "create", "clusterrolebinding", binding, "--clusterrole="+MetricsReaderRole, "--serviceaccount="+ns+":"+name)
		DeferCleanup(func(ctx SpecContext) {
			p.MustKubectl(ctx, "delete", "clusterrolebinding", binding, "--ignore-not-found")
		})
	}
	return strings.TrimSpace(p.MustKubectl(ctx, "create", "token", name, "-n", ns))
}

// teardown ends an in-cluster suite: the cluster's logs if a spec
// failed, the suite's namespaces emptied while the operator still runs,
// then `make undeploy`.
func (c *InCluster) teardown(ctx context.Context) {
	c.env.CollectClusterLogs(ctx)
	c.env.WaitForOtherNamespacesEmpty(ctx, "")
	// The whole run, the specs' cleanups included, before the replicas go.
	deaths := append(c.env.exitsUnasked("in the suite"), c.env.deathsSince(ctx, c.deployed, "in the suite")...)
	Expect(c.Undeploy(ctx)).To(Succeed())
	Expect(deaths).To(BeEmpty(), "the operator under test died or panicked")
}

// dump adds each replica's log to a failed spec's report.
func (c *InCluster) dump(ctx context.Context) {
	replicas, err := c.replicas(ctx)
	if err != nil {
		AddReportEntry("the operator's replicas", err.Error())
	}
	for _, r := range replicas {
		AddReportEntry("log of the operator's "+r.Name+" (last 150 lines)", lastLines(c.Log(ctx, r), 150))
	}
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
