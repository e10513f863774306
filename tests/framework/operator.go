package framework

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	rbacv1ac "k8s.io/client-go/applyconfigurations/rbac/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"example.com/redis-operator/chapters"
	"example.com/redis-operator/internal/proc"
	"example.com/redis-operator/internal/promtext"
)

// Operator is bin/operator running one chapter as a separate process
// against the cluster, exactly as `make run` runs it, with its log kept in a
// file for the failure dump.
type Operator struct {
	// Name tells a replica of several apart (Replicas); empty for the
	// suite's one operator.
	Name    string
	Binary  string
	Chapter int
	// Kubeconfig holds the operator's own credentials: a ServiceAccount
	// token bound to the chapter's generated role, never the admin's.
	Kubeconfig string
	LogPath    string
	// Env is more environment for every start, e.g. ENABLE_WEBHOOKS=false.
	Env []string
	// Args are more flags for every start, e.g. --leader-elect.
	Args []string
	// remote is set on the parallel processes other than 1: the operator
	// is process 1's, and only its log can be read here.
	remote bool
	// metricsToken is sent with each read of the operator's metrics: a
	// token of an account that may get /metrics (Env.metricsScraperToken).
	metricsToken string
	// asDeployed: a host replica of the deployed operator, with the
	// Deployment's flags alone (none of the suites' verbosity).
	asDeployed bool

	mu   sync.Mutex
	proc *proc.Operator
	// The supervisor of StartSupervised, and what it saw: exits has a lock
	// of its own, since a start holds mu until the operator is ready.
	stopSupervisor, supervisorDone chan struct{}
	exitsMu                        sync.Mutex
	exits                          []error
	// stopped is set by Stop and cleared by a start: whether the process
	// that is not running was asked to end.
	stopped bool
	// exitAllowed is set when a spec did what may make the process end
	// by itself (froze it past its leader election's renew deadline),
	// and cleared by a start: such an exit is no death.
	exitAllowed bool
}

// The ServiceAccount the operator runs as in the suites, and its namespace.
const (
	OperatorNamespace      = "redis-operator-system"
	OperatorServiceAccount = "redis-operator"
	// operatorRole is the ClusterRole name in every chapter's role.yaml.
	operatorRole = chapters.RoleName
)

// ChapterRole is the RBAC role generated from chapter n's markers
// (`make manifests` writes it), in the repository at root: where the
// table of chapters says it is (chapters.RoleFile).
func ChapterRole(root string, n int) (string, error) {
	rel, err := chapters.RoleFile(n)
	if err != nil {
		return "", err
	}
	role := filepath.Join(root, filepath.FromSlash(rel))
	if _, err := os.Stat(role); err != nil {
		return "", fmt.Errorf("no generated role for chapter %d (%w); `make manifests` writes it", n, err)
	}
	return role, nil
}

// fieldOwner is the field manager of what the suites apply with their
// client.
const fieldOwner = "redis-operator-e2e"

// ServiceAccountKubeconfig gives the operator an identity of its own: it
// applies role (a chapter's generated ClusterRole, and from chapter 10 on a
// Role), a ServiceAccount bound to them and nothing else, and writes to
// path a kubeconfig with a token of that account for the cluster behind
// the admin kubeconfig.
func (p *ClusterProxy) ServiceAccountKubeconfig(ctx context.Context, role, path string) error {
	// Set-up, not what a learner types: the client applies these, without
	// the CPU of a kubectl process.
	subject := rbacv1ac.Subject().WithKind(rbacv1.ServiceAccountKind).WithNamespace(OperatorNamespace).WithName(OperatorServiceAccount)
	for _, obj := range []runtime.ApplyConfiguration{
		corev1ac.Namespace(OperatorNamespace),
		corev1ac.ServiceAccount(OperatorServiceAccount, OperatorNamespace),
		rbacv1ac.ClusterRoleBinding(OperatorServiceAccount).WithSubjects(subject).
			WithRoleRef(rbacv1ac.RoleRef().WithAPIGroup(rbacv1.GroupName).WithKind("ClusterRole").WithName(operatorRole)),
		// From chapter 10 on, role holds a Role in the operator's namespace
		// too: its Lease, for leader election.
		rbacv1ac.RoleBinding(OperatorServiceAccount, OperatorNamespace).WithSubjects(subject).
			WithRoleRef(rbacv1ac.RoleRef().WithAPIGroup(rbacv1.GroupName).WithKind("Role").WithName(operatorRole)),
	} {
		if err := p.Client.Apply(ctx, obj, client.FieldOwner(fieldOwner), client.ForceOwnership); err != nil {
			return err
		}
	}
	// After the namespace: from chapter 10 on, role holds a Role there too.
	if _, err := p.Kubectl.Run(ctx, "apply", "--server-side", "--force-conflicts", "-f", role); err != nil {
		return err
	}
	return p.tokenKubeconfig(ctx, OperatorNamespace, OperatorServiceAccount, path)
}

// tokenKubeconfig writes to path a kubeconfig with a token of the
// ServiceAccount ns/name, for the cluster behind the admin kubeconfig.
func (p *ClusterProxy) tokenKubeconfig(ctx context.Context, ns, name, path string) error {
	req := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](12 * 60 * 60)}}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	if err := p.Client.SubResource("token").Create(ctx, sa, req); err != nil {
		return fmt.Errorf("a token of ServiceAccount %s/%s: %w", ns, name, err)
	}
	token := req.Status.Token
	admin, err := clientcmd.BuildConfigFromFlags("", p.Cluster.KubeconfigPath())
	if err != nil {
		return err
	}
	if err := rest.LoadTLSFiles(admin); err != nil {
		return err
	}
	user := "system:serviceaccount:" + ns + ":" + name
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["cluster"] = &clientcmdapi.Cluster{Server: admin.Host, CertificateAuthorityData: admin.CAData}
	cfg.AuthInfos[user] = &clientcmdapi.AuthInfo{Token: strings.TrimSpace(token)}
	cfg.Contexts["operator"] = &clientcmdapi.Context{Cluster: "cluster", AuthInfo: user}
	cfg.CurrentContext = "operator"
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return clientcmd.WriteToFile(*cfg, path)
}

// Scoped is another operator of the same binary, chapter, credentials,
// environment and flags that reconciles, and caches, only namespace ns
// (its --namespace flag), and logs to a file of its own beside o's. Each
// of several specs' runs, or of one spec's, can have its own, all running
// at once, where one operator for every namespace makes them take turns.
func (o *Operator) Scoped(ns string) *Operator {
	return &Operator{
		Binary: o.Binary, Chapter: o.Chapter, Kubeconfig: o.Kubeconfig,
		LogPath: strings.TrimSuffix(o.LogPath, ".log") + "." + ns + ".log",
		Env:     slices.Clone(o.Env), Args: append(slices.Clone(o.Args), "--namespace="+ns),
		remote: o.remote,
	}
}

// Start starts the operator and waits until its readiness probe answers.
// Chapter 0 is no operator at all: the CRD alone, which is what chapter
// 1's lesson specs must fail against.
func (o *Operator) Start(ctx context.Context) error {
	GinkgoHelper()
	mustBeSerial("starting the operator")
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.start(ctx, nil)
}

// start starts the operator with more environment; o.mu is held.
func (o *Operator) start(ctx context.Context, env []string) error {
	if o.remote {
		return o.errRemote()
	}
	if o.Chapter == 0 {
		GinkgoWriter.Println("chapter 0: no operator runs")
		return nil
	}
	if o.proc != nil && o.proc.Running() {
		return fmt.Errorf("the chapter %d operator runs already (pid %d): two would fight over the same objects", o.Chapter, o.proc.Pid())
	}
	env = append(slices.Clip(o.Env), env...)
	args := append(slices.Clip(verbosityArgs), o.Args...)
	if o.asDeployed {
		args = o.Args
	}
	p, err := proc.StartOperator(ctx, proc.OperatorOptions{
		Binary: o.Binary, Chapter: o.Chapter, Kubeconfig: o.Kubeconfig, LogPath: o.LogPath, Args: args, Env: env,
	})
	if err != nil {
		return err
	}
	o.proc, o.stopped, o.exitAllowed = p, false, false
	GinkgoWriter.Printf("$ OPERATOR_CHAPTER=%d %s%s %s%s\n", o.Chapter, strings.Join(append(env, ""), " "), filepath.Base(o.Binary), strings.Join(p.Args, " "), o.named())
	return nil
}

// restartBackOff is how long the supervisor of StartSupervised waits
// before it tries again to start an operator that exited during start-up
// (while the API server is down, its preflight fails at once).
const restartBackOff = time.Second

// StartSupervised starts the operator with env added to its environment,
// and from then on restarts it at once whenever it exits by itself, with
// restartEnv instead: as the kubelet restarts a container, but with no
// back-off after a run and restartBackOff after a failed start. Stop ends
// the supervision; Exits says what ended each run and each failed start.
func (o *Operator) StartSupervised(ctx context.Context, env, restartEnv []string) error {
	GinkgoHelper()
	mustBeSerial("starting the operator")
	o.mu.Lock()
	defer o.mu.Unlock()
	if err := o.start(ctx, env); err != nil {
		return err
	}
	o.exitsMu.Lock()
	o.exits = nil
	o.exitsMu.Unlock()
	stop, done := make(chan struct{}), make(chan struct{})
	o.stopSupervisor, o.supervisorDone = stop, done
	go func() {
		defer close(done)
		for {
			o.mu.Lock()
			p := o.proc
			o.mu.Unlock()
			select {
			case <-stop:
				return
			case <-p.Done():
			}
			o.mu.Lock()
			select {
			case <-stop:
				o.mu.Unlock()
				return
			default:
			}
			o.addExit(p.Err())
			GinkgoWriter.Printf("the operator exited (%v); restarting it\n", p.Err())
			failed := 0
			for err := o.start(context.Background(), restartEnv); err != nil; err = o.start(context.Background(), restartEnv) {
				o.addExit(err)
				o.mu.Unlock()
				if failed++; failed == 1 {
					GinkgoWriter.Printf("restarting the operator: %v\n", err)
				}
				GinkgoWriter.Printf("the operator failed to start (%d in a row); trying again in %s\n", failed, restartBackOff)
				select {
				case <-stop:
					return
				case <-time.After(restartBackOff):
				}
				o.mu.Lock()
			}
			o.mu.Unlock()
		}
	}()
	return nil
}

// Exits lists why each run of a supervised operator ended, in order; the
// one Stop ends is not among them.
func (o *Operator) Exits() []error {
	o.exitsMu.Lock()
	defer o.exitsMu.Unlock()
	return slices.Clone(o.exits)
}

func (o *Operator) addExit(err error) {
	o.exitsMu.Lock()
	defer o.exitsMu.Unlock()
	o.exits = append(o.exits, err)
}

// Signal sends sig to the operator's process.
func (o *Operator) Signal(sig os.Signal) error {
	GinkgoHelper()
	mustBeSerial("signalling the operator")
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.proc == nil {
		return fmt.Errorf("the chapter %d operator was not started", o.Chapter)
	}
	return o.proc.Signal(sig)
}

// allowExit says that the running process may end by itself, as a spec
// asked for it: no death (exitAllowed), until it is started again.
func (o *Operator) allowExit() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.exitAllowed = true
}

// pid is the operator process' pid, 0 if it never started.
func (o *Operator) pid() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.proc == nil {
		return 0
	}
	return o.proc.Pid()
}

// metricsURL is where the operator serves its metrics.
func (o *Operator) metricsURL() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.proc == nil {
		return ""
	}
	return o.proc.MetricsURL
}

// Running reports whether the operator process is alive.
func (o *Operator) Running() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.proc != nil && o.proc.Running()
}

// LivenessWatch polls the liveness probe (/healthz) of whichever process
// of the operator runs, until Stop, and keeps each answer that was not
// 200 OK within a kubelet's default probe timeout, a second: each one a
// kubelet would count towards restarting it.
type LivenessWatch struct {
	stop, done chan struct{}
	polls      int
	failures   []string
}

// WatchLiveness starts a LivenessWatch that polls every interval.
func (o *Operator) WatchLiveness(interval time.Duration) *LivenessWatch {
	w := &LivenessWatch{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(w.done)
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			o.mu.Lock()
			p := o.proc
			o.mu.Unlock()
			if p != nil && p.Running() {
				ctx, cancel := context.WithTimeout(context.Background(), time.Second)
				err := p.Live(ctx)
				cancel()
				w.polls++
				if err != nil {
					w.failures = append(w.failures, time.Now().Format("15:04:05.000")+" "+err.Error())
				}
			}
			select {
			case <-w.stop:
				return
			case <-tick.C:
			}
		}
	}()
	return w
}

// Stop ends the watch, and returns how many times it asked and what each
// answer that was not 200 OK said. It may be called more than once.
func (w *LivenessWatch) Stop() (polls int, failures []string) {
	select {
	case <-w.stop:
	default:
		close(w.stop)
	}
	<-w.done
	return w.polls, slices.Clone(w.failures)
}

// Stop stops the operator gracefully (and its supervisor, if any) and
// waits for it to exit.
func (o *Operator) Stop() error {
	GinkgoHelper()
	mustBeSerial("stopping the operator")
	if o.remote {
		return o.errRemote()
	}
	// A supervised operator crashes when a spec asks it to, and is
	// restarted: one that is down as it is stopped is no error.
	supervised := o.stopSupervisor != nil
	if supervised {
		close(o.stopSupervisor)
		<-o.supervisorDone
		o.stopSupervisor, o.supervisorDone = nil, nil
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.proc == nil || o.stopped {
		return nil
	}
	o.stopped = true
	if !o.proc.Running() && (supervised || o.exitAllowed) {
		return nil
	}
	if !o.proc.Running() {
		return fmt.Errorf("the chapter %d operator had exited before it was stopped (%v): see %s", o.Chapter, o.proc.Err(), o.LogPath)
	}
	GinkgoWriter.Printf("stopping the chapter %d operator%s\n", o.Chapter, o.named())
	if err := o.proc.Stop(30 * time.Second); err != nil {
		return fmt.Errorf("stopping the chapter %d operator: %w: see %s", o.Chapter, err, o.LogPath)
	}
	return nil
}

// Kill ends the operator's process with SIGKILL, as a crash or a lost
// node does: asked, so no death check counts it.
func (o *Operator) Kill() error {
	GinkgoHelper()
	mustBeSerial("killing the operator")
	if o.remote {
		return o.errRemote()
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.proc == nil || !o.proc.Running() {
		return fmt.Errorf("the chapter %d operator%s is not running", o.Chapter, o.named())
	}
	o.stopped = true
	GinkgoWriter.Printf("killing the chapter %d operator%s (pid %d)\n", o.Chapter, o.named(), o.proc.Pid())
	o.proc.Kill()
	return nil
}

// diedUnasked reports whether the operator's process has ended though
// no one stopped it and no supervisor restarts it, and how it ended.
func (o *Operator) diedUnasked() (bool, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.proc == nil || o.stopped || o.exitAllowed || o.stopSupervisor != nil || o.proc.Running() {
		return false, nil
	}
	return true, o.proc.Err()
}

// ReconcileTotal reads controller_runtime_reconcile_total for the "redis"
// controller from the operator's metrics endpoint, summed over results.
// It counts every Reconcile call, so a spec can observe from outside
// whether something made the operator reconcile.
func (o *Operator) ReconcileTotal(ctx context.Context) (float64, error) {
	return o.metric(ctx, "controller_runtime_reconcile_total", promtext.Label("controller", "redis"))
}

// WriteRequests reads rest_client_requests_total from the operator's
// metrics endpoint, summed over the methods that write (POST, PUT, PATCH,
// DELETE): every write request the operator sent to the API server, a
// write that changes nothing included.
func (o *Operator) WriteRequests(ctx context.Context) (float64, error) {
	return o.metric(ctx, "rest_client_requests_total", promtext.Write)
}

// metric sums the samples of a family on the operator's metrics endpoint
// for which match is true.
func (o *Operator) metric(ctx context.Context, family string, match func(map[string]string) bool) (float64, error) {
	GinkgoHelper()
	mustBeSerial("reading the operator's metrics, which count what every spec makes it do,")
	if o.remote {
		return 0, o.errRemote()
	}
	if o.Chapter == 0 {
		return 0, fmt.Errorf("no operator runs (chapter 0)")
	}
	o.mu.Lock()
	p := o.proc
	o.mu.Unlock()
	if p == nil {
		return 0, fmt.Errorf("the chapter %d operator was not started", o.Chapter)
	}
	m, err := promtext.ScrapeWithToken(ctx, p.MetricsURL, o.metricsToken)
	if err != nil {
		return 0, err
	}
	return m.Sum(family, match)
}

// SettledReconcileTotal waits until the operator has stopped reconciling
// (the counter holds still for a few seconds) and returns the counter.
// Earlier specs' namespaces are emptied first: their Redis objects are
// reconciled while they go.
func (e *Env) SettledReconcileTotal(ctx context.Context, ns string) float64 {
	GinkgoHelper()
	e.WaitForOtherNamespacesEmpty(ctx, ns)
	var total float64
	Eventually(func(g Gomega) {
		var err error
		total, err = e.Operator.ReconcileTotal(ctx)
		g.Expect(err).NotTo(HaveOccurred())
		g.Consistently(e.Operator.ReconcileTotal).WithContext(ctx).WithTimeout(3 * time.Second).Should(Equal(total))
	}).WithContext(ctx).Should(Succeed())
	return total
}

// ExpectReconcile runs action once the operator is done with Redis
// ns/name (WaitForIdle) and waits until the operator has finished a
// reconcile of ns/name that started after it: the proof, for a spec that
// says something must not happen, that what would have made it happen did
// happen. A reconcile of another object does not count, so the specs that
// run beside it in parallel do not disturb it.
func (e *Env) ExpectReconcile(ctx context.Context, ns, name string, action func()) {
	GinkgoHelper()
	e.WaitForIdle(ctx, ns, name)
	offset := e.Operator.LogOffset()
	action()
	e.ExpectReconciledSince(ctx, offset, ns, name)
}

// ExpectReconciledSince waits until the operator's log shows, after
// offset (Operator.LogOffset), a reconcile of Redis ns/name that ended.
func (e *Env) ExpectReconciledSince(ctx context.Context, offset int64, ns, name string) {
	GinkgoHelper()
	Eventually(func() []ReconcileCall { return e.Operator.ReconcilesSince(offset) }).WithContext(ctx).
		Should(ContainElement(And(HaveField("Namespace", ns), HaveField("Name", name), HaveField("Done", true))),
			"the operator did not reconcile Redis %s/%s after the action", ns, name)
}

// idleFor is how long the operator must have started no reconcile of a
// Redis for WaitForIdle: longer than the events of its last change take
// to reach the operator.
const idleFor = 3 * time.Second

// WaitForIdle waits until the operator's log shows no reconcile of Redis
// ns/name running and none started for idleFor: whatever the Redis' last
// change queued has been reconciled. Only this Redis counts; the operator
// may be busy with others.
func (e *Env) WaitForIdle(ctx context.Context, ns, name string) {
	GinkgoHelper()
	this := And(HaveField("Namespace", ns), HaveField("Name", name))
	Eventually(func(g Gomega) {
		offset := e.Operator.LogOffset()
		g.Expect(e.Operator.ReconcilesSince(0)).NotTo(ContainElement(And(this, HaveField("Done", false))),
			"a reconcile of Redis %s/%s is running", ns, name)
		g.Consistently(func() []ReconcileCall { return e.Operator.ReconcilesSince(offset) }).WithContext(ctx).
			WithTimeout(idleFor).ShouldNot(ContainElement(this), "the operator reconciled Redis %s/%s again", ns, name)
	}).WithContext(ctx).Should(Succeed(), "the operator did not stop reconciling Redis %s/%s", ns, name)
}

// ReconcilesSince lists the reconciles the operator started after offset
// (see LogOffset), in the order they started, from its log.
func (o *Operator) ReconcilesSince(offset int64) []ReconcileCall {
	return reconcileCalls(o.LogSince(offset))
}

// ReconcileOverlapSince says what the operator's log after offset shows of
// reconciles that ran at the same time, of every object: a Serial spec's.
func (o *Operator) ReconcileOverlapSince(offset int64) Overlap {
	GinkgoHelper()
	mustBeSerial("ReconcileOverlapSince")
	return reconcileOverlap(o.LogSince(offset))
}

// errRemote is what a process other than 1 gets when it asks to run the
// operator.
func (o *Operator) errRemote() error {
	return fmt.Errorf("the chapter %d operator runs on parallel process 1, not %d", o.Chapter, GinkgoParallelProcess())
}

// LogOffset is where the operator's log ends now, for LogSince.
func (o *Operator) LogOffset() int64 {
	info, err := os.Stat(o.LogPath)
	if err != nil {
		return 0
	}
	return info.Size()
}

// LogSince returns what the operator logged after offset.
func (o *Operator) LogSince(offset int64) string {
	data, err := os.ReadFile(o.LogPath)
	if err != nil || int64(len(data)) < offset {
		return ""
	}
	return string(data[offset:])
}

// WaitForOwnerMapping waits until the API server admits a pod owned by a
// Redis. Right after the CRD is first installed, its admission plugin
// OwnerReferencesPermissionEnforcement cannot map the kind Redis yet and
// refuses every such pod ("cannot set blockOwnerDeletion ... cannot find
// RESTMapping"); the operator retries until it can. A clean run that
// started then would count dozens of refused creates, which are the
// cluster's, not the operator's: the sweep would crash after each. The
// dry run is the operator's, made with its credentials: the plugin needs
// the mapping only for a user who may not set finalizers on everything,
// so the admin's create passes at once.
func (e *Env) WaitForOwnerMapping(ctx context.Context) {
	GinkgoHelper()
	By("waiting until the API server admits a pod owned by a Redis, created by the operator's ServiceAccount (a server-side dry run)")
	operator, err := NewClient(e.Operator.Kubeconfig)
	Expect(err).NotTo(HaveOccurred())
	yes := true
	Eventually(func() error {
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: "default", GenerateName: "owner-mapping-", OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "myapp.example.com/v1", Kind: "Redis", Name: "any", UID: "00000000-0000-0000-0000-000000000000",
				Controller: &yes, BlockOwnerDeletion: &yes,
			}}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "redis:7.0"}}},
		}
		return operator.Create(ctx, pod, client.DryRunAll)
	}).WithContext(ctx).WithTimeout(2 * time.Minute).Should(Succeed())
}
