package framework

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	myappv1 "example.com/redis-operator/api/v1"
	"example.com/redis-operator/chapters"
)

// Suite-wide timing. Eventually waits long enough for a pod to be deleted
// through kubelet termination and rebuilt (E2E_EVENTUALLY_TIMEOUT changes
// it: `make prove-chapter` uses a shorter one, so that the specs that must
// fail against the previous chapter do not each wait 90 s); Consistently
// watches long enough for a reconcile that should not happen to have
// happened.
const (
	DefaultEventuallyTimeout = 90 * time.Second
	PollingInterval          = 250 * time.Millisecond
	ConsistentlyWindow       = 6 * time.Second
	// CRDName is the name of the Redis CRD.
	CRDName = "redis.myapp.example.com"
	// SetupTimeout bounds BeforeSuite: building the operator and starting it.
	SetupTimeout = 5 * time.Minute
)

// Env is one chapter suite's world: the cluster (ClusterProxy's kubectl,
// client and reads, which Env's methods include) and the operator, run on
// the host (Operator) or deployed in the cluster (InCluster).
type Env struct {
	Chapter int
	ClusterProxy
	Operator *Operator
	// suite is the chapter's row of the table, as the suite reads it;
	// description, if set, names a suite that is not the chapter's.
	suite       chapters.Suite
	description string
	// operatorRole is the role file that the operator's ServiceAccount is
	// bound to, deleted at the end of the suite.
	operatorRole string
	// operatorArgs are more flags for the operator (TraceSpec's).
	operatorArgs []string
	// specsRunOperator is set when each spec starts and stops the
	// operator itself (chapters.OperatorPerSpec): nothing else starts it
	// then.
	specsRunOperator bool
	// deployed is the operator that `make deploy` runs, in a suite whose
	// row says chapters.OperatorDeployed (Operator is nil then): the
	// failure dump shows it, and Teardown undeploys it.
	deployed interface {
		dump(ctx context.Context)
		teardown(ctx context.Context)
		// hostProcesses and podDeaths are what the death check reads
		// (death.go).
		hostProcesses() []*Operator
		podDeaths(ctx context.Context, at time.Time, when string) []string
	}
}

// NewSuite registers the set-up and tear-down of chapter n's suite, as
// the chapter's row of the table of chapters says (chapters.SuiteOf):
// the cluster, the CRD installed, and chapter n's operator under the
// chapter's own RBAC role, run the row's way (operatorRuns); and, if the
// row says the suite carries them, the behaviour specs of the chapters
// before it. It returns the Env they fill in. A suite's file names its
// chapter here and nowhere else: RunSpecs takes its Description and
// Labels.
func NewSuite(chapter int) *Env {
	suite, err := chapters.SuiteOf(chapter)
	if err != nil {
		panic(fmt.Sprintf("framework.NewSuite(%d): %v", chapter, err))
	}
	run, ok := operatorRuns[suite.Operator]
	if !ok {
		panic(fmt.Sprintf("framework.NewSuite(%d): the table runs this chapter's operator as %d, which this framework has no file for", chapter, suite.Operator))
	}
	env := &Env{Chapter: chapter, suite: suite}
	env.registerSuiteNodes(run(env))
	carryBehaviour(env, suite.Carries)
	return env
}

// operatorRuns sets a suite up for each way the table runs an operator
// (chapters.OperatorRun): what process 1 does before the specs, and what
// every other process does. This file has the host's; the files of the
// framework that a chapter brings (deployed.go, faults.go) add theirs, so
// that a chapter's branch has only the ways its chapter needs.
var operatorRuns = map[chapters.OperatorRun]func(*Env) (setUp, connect func(context.Context)){
	chapters.OperatorOnHost: func(env *Env) (setUp, connect func(context.Context)) {
		return env.setup, env.connectToHostOperator
	},
}

// Description is what the suite's report is called, from its row
// ("Chapter 5: rebuild pods"): RunSpecs' description.
func (e *Env) Description() string {
	if e.description != "" {
		return e.description
	}
	return e.suite.Description()
}

// Labels label every spec of the suite (chapter-05): RunSpecs' labels.
func (e *Env) Labels() Labels { return Label(e.suite.Label()) }

// Lesson labels the specs that prove what a chapter teaches: each must fail
// against the previous chapter's operator, after its LessonStep, and pass
// against its own (`make prove-chapter N`).
var Lesson = Label(chapters.LabelLesson)

// Containers labels the specs, not lessons, whose proof needs pods in real
// containers, which only the kind backend runs: a kubelet that mounts and
// updates a Secret, a pod's own endpoint. CI runs them on kind with the
// lesson specs.
var Containers = Label("containers")

// CrashSweep labels the spec that crashes the operator after each of its
// writes in turn (`make test-faults` runs it alone).
var CrashSweep = Label(chapters.LabelCrashSweep)

// RestartsAPIServer labels the specs that stop the cluster's API server
// and start it again.
var RestartsAPIServer = Label("apiserver-restart")

// Exercise labels a learner's own spec (`make exercise-spec N`): `make
// check-spec` runs only the specs so labelled, against chapter N-1, where
// each must fail after its LessonStep, at its DecidingCheck, against
// chapter N, where it must pass, and against the chapter's mutants of the
// spec it stands for, which it must kill.
var Exercise = Label(chapters.LabelExercise)

// LessonStep marks where the lesson of a spec begins. What comes before it
// is setup, which the previous chapter's operator must pass too: a lesson
// spec that fails there proves nothing, and `make prove-chapter` counts it
// red only when it failed after this step. The spec bodies that several
// chapters share mark it too; in a spec not labelled lesson the mark is
// only a step of its report.
func LessonStep(text string) {
	By(chapters.LessonMark + text)
}

// DecidingCheck runs the assertion that decides a spec: a failure of
// Gomega's while check runs is the check's. Against the previous chapter
// (or a mutant), `make prove-chapter`, `make mutants` and `make
// check-spec` count a spec red only when its failure is a deciding
// check's, after its LessonStep: not an assertion before or after it, not
// a bare error of kubectl, the network or the cluster (one no assertion
// describes), not a panic. A spec may have more than one, each named by
// what it decides; keep each to the assertions that decide, and what
// leads to them outside. It adds a report entry, not a step, so the steps
// of the spec's report stay as they were.
//
// Every suite registers Ginkgo's Fail as Gomega's fail handler; while a
// check runs, failInCheck records a failure as the innermost check's
// first (a check may call a helper that has one of its own).
func DecidingCheck(what string, check func()) {
	GinkgoHelper()
	AddReportEntry(chapters.DecidingCheckEntry, what)
	before := asserted.Load()
	func() {
		if len(checking) == 0 {
			RegisterFailHandler(failInCheck)
			defer RegisterFailHandler(Fail)
		}
		checking = append(checking, what)
		defer func() { checking = checking[:len(checking)-1] }()
		check()
	}()
	// Outside the check: a check that decides nothing is the spec's
	// fault, never a red verdict.
	if asserted.Load() == before {
		Fail(fmt.Sprintf("the deciding check %q ran no assertion (an Expect, Eventually or Consistently with a matcher): it decides nothing", what))
	}
}

// checking holds the deciding checks running, the innermost last.
var checking []string

func failInCheck(message string, callerSkip ...int) {
	skip := 1 // this function
	if len(callerSkip) > 0 {
		skip += callerSkip[0]
	}
	AddReportEntry(chapters.CheckFailedEntry, chapters.CheckFailure{Check: checking[len(checking)-1], Message: message}, ReportEntryVisibilityNever)
	Fail(message, skip)
}

// setup prepares the operator and starts it on the host, as `make run`
// does: without its webhook (ENABLE_WEBHOOKS=false), which it serves only
// in the cluster.
func (e *Env) setup(ctx context.Context) {
	GinkgoHelper()
	e.prepareOperator(ctx)
	e.Operator.Env = []string{"ENABLE_WEBHOOKS=false"}
	if e.suite.Faults {
		e.WaitForOwnerMapping(ctx)
	}
	By(fmt.Sprintf("starting the chapter %d operator as that ServiceAccount (log: %s)", e.Operator.Chapter, e.Operator.LogPath))
	Expect(e.Operator.Start(ctx)).To(Succeed())
}

// prepareOperator connects to the cluster, installs the CRD, builds the
// operator if OPERATOR_BIN does not name it, and gives it a ServiceAccount
// of its own; it does not start it.
func (e *Env) prepareOperator(ctx context.Context) {
	e.setupCluster(ctx)
	if os.Getenv(chapters.EnvOperatorBin) == "" {
		Expect(e.Make(ctx, "build")).To(Succeed())
	}
	chapter := operatorChapter(e.Chapter)
	kubeconfig := operatorKubeconfig(e.Chapter)
	if chapter != 0 {
		role, err := ChapterRole(RepoRoot(), chapter)
		if variantRole := os.Getenv(chapters.EnvOperatorRole); variantRole != "" {
			// A variant of the chapter (make test-chapter N VARIANT=dir)
			// runs under the role its own markers ask for.
			role, err = variantRole, nil
		}
		Expect(err).NotTo(HaveOccurred())
		e.operatorRole = role
		By(fmt.Sprintf("making a ServiceAccount bound only to chapter %d's role (%s)", chapter, role))
		Expect(e.ServiceAccountKubeconfig(ctx, role, kubeconfig)).To(Succeed())
	}

	e.Operator = &Operator{
		Binary:     OperatorBinary(),
		Chapter:    chapter,
		Kubeconfig: kubeconfig,
		LogPath:    operatorLogPath(e.Chapter),
		Args:       slices.Clone(e.operatorArgs),
	}
	if chapter != 0 {
		e.Operator.metricsToken = e.metricsScraperToken(ctx)
	}
	_ = os.Remove(e.Operator.LogPath)
}

// The account the suites read the operator's metrics as: from chapter 10
// on, the operator serves them over HTTPS to callers that the API server
// authenticates and authorizes, as a Prometheus in the cluster is (the
// metrics-reader ClusterRole that make deploy installs, under a name of
// the suites' own, which their tear-down deletes).
const (
	metricsScraper     = "metrics-scraper"
	metricsScraperRole = "redis-operator-suite-metrics-reader"
)

// metricsScraperToken makes the account the suites read the operator's
// metrics as, and returns a token of it. Before chapter 10 the operator
// serves its metrics to anyone over HTTP, and the token is not sent.
func (e *Env) metricsScraperToken(ctx context.Context) string {
	GinkgoHelper()
	By("making the account the suite reads the operator's metrics as, allowed to get /metrics, as a Prometheus in the cluster is")
	_, err := e.Apply(ctx, fmt.Sprintf(`apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: %[1]s
rules:
- nonResourceURLs: [/metrics]
  verbs: [get]
---
apiVersion: v1
kind: ServiceAccount
metadata:
  namespace: %[2]s
  name: %[3]s
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: %[1]s
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: %[1]s}
subjects:
- {kind: ServiceAccount, namespace: %[2]s, name: %[3]s}
`, metricsScraperRole, OperatorNamespace, metricsScraper))
	Expect(err).NotTo(HaveOccurred())
	return strings.TrimSpace(e.MustKubectl(ctx, "create", "token", metricsScraper, "-n", OperatorNamespace, "--duration=6h"))
}

// OperatorBinary is the operator the suite runs, as it ships: OPERATOR_BIN,
// or bin/operator, which `make build` makes.
func OperatorBinary() string {
	if b := os.Getenv(chapters.EnvOperatorBin); b != "" {
		return b
	}
	return filepath.Join(RepoRoot(), "bin", "operator")
}

// operatorKubeconfig holds the credentials of the operator's
// ServiceAccount.
func operatorKubeconfig(chapter int) string {
	return filepath.Join(OutputDir(), "operator", chapters.SuiteName(chapter)+".kubeconfig")
}

// operatorLogPath is the file the suite's host operator logs to.
func operatorLogPath(chapter int) string {
	return chapters.OperatorLog(OutputDir(), chapter)
}

// connectToHostOperator connects a process other than 1 to the cluster
// and to the operator that process 1 runs on the host.
func (e *Env) connectToHostOperator(ctx context.Context) {
	e.connect(ctx)
	e.Operator = remoteOperator(e.Chapter)
}

// remoteOperator is the handle of a process other than 1 on the operator
// that process 1 runs: it names the operator's binary, credentials and
// log, and refuses to start, stop or signal it.
func remoteOperator(chapter int) *Operator {
	return &Operator{Binary: OperatorBinary(), Chapter: operatorChapter(chapter), Kubeconfig: operatorKubeconfig(chapter),
		LogPath: operatorLogPath(chapter), remote: true}
}

// setupCluster connects to the cluster and installs the CRD.
func (e *Env) setupCluster(ctx context.Context) {
	GinkgoHelper()
	e.connect(ctx)
	// Each chapter installs its own CRD: from chapter 11 on, it has CEL
	// rules that the chapters before do not.
	Expect(e.Make(ctx, "install", chapters.EnvChapter+"="+strconv.Itoa(operatorChapter(e.Chapter)))).To(Succeed())
}

// connect sets the suite's timing and connects to the cluster: kubectl
// and a client. Every parallel process does.
func (e *Env) connect(ctx context.Context) {
	GinkgoHelper()
	SetDefaultEventuallyTimeout(EventuallyTimeout())
	SetDefaultEventuallyPollingInterval(PollingInterval)
	SetDefaultConsistentlyDuration(ConsistentlyWindow)
	SetDefaultConsistentlyPollingInterval(PollingInterval)
	// Specs pass their SpecContext to Eventually so that an interrupted run
	// stops polling; without this, Gomega then ignores the default timeout
	// and a spec whose condition never comes true waits forever.
	EnforceDefaultTimeoutsWhenUsingContexts()

	var err error
	e.Cluster, err = ClusterFromEnv(ctx)
	Expect(err).NotTo(HaveOccurred())
	kubeconfig := e.Cluster.KubeconfigPath()
	By(fmt.Sprintf("using the %s cluster (%s)", e.Cluster.Name(), kubeconfig))
	e.Kubectl, err = NewKubectl(kubeconfig)
	Expect(err).NotTo(HaveOccurred())
	e.Client, err = NewClient(kubeconfig)
	Expect(err).NotTo(HaveOccurred())
}

// EventuallyTimeout is how long Eventually waits: DefaultEventuallyTimeout
// unless E2E_EVENTUALLY_TIMEOUT says otherwise.
func EventuallyTimeout() time.Duration {
	GinkgoHelper()
	v := os.Getenv(chapters.EnvEventuallyTimeout)
	if v == "" {
		return DefaultEventuallyTimeout
	}
	timeout, err := time.ParseDuration(v)
	Expect(err).NotTo(HaveOccurred(), chapters.EnvEventuallyTimeout+" must be a duration such as 30s")
	return timeout
}

// Make runs a target of the project's Makefile, as a user types it.
func (e *Env) Make(ctx context.Context, args ...string) error {
	By("make " + strings.Join(args, " "))
	cmd := exec.CommandContext(ctx, "make", append([]string{"-C", RepoRoot(), "--no-print-directory"}, args...)...)
	cmd.Stdout, cmd.Stderr = GinkgoWriter, GinkgoWriter
	// As a user types it: what the make that ran the suite was given on
	// its command line (MAKEFLAGS) must not choose this one's cluster or
	// chapter; the suite's environment (KUBECONFIG, CLUSTER, OUTPUT_DIR,
	// which the Makefile exports) and args do.
	cmd.Env = slices.DeleteFunc(os.Environ(), func(kv string) bool {
		name, _, _ := strings.Cut(kv, "=")
		return name == "MAKEFLAGS" || name == "MFLAGS" || name == "MAKELEVEL" || name == "MAKEOVERRIDES"
	})
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("make %s: %w (its output is in the report)", strings.Join(args, " "), err)
	}
	return nil
}

// operatorChapter is the chapter whose operator the suite runs: its own,
// unless OPERATOR_CHAPTER names another, e.g. chapter 5's suite against
// chapter 4, to watch it fail where the lesson matters; 0 runs none (the
// CRD alone; OPERATOR_CHAPTER=none).
func operatorChapter(chapter int) int {
	GinkgoHelper()
	n, err := chapters.OperatorChapter(os.Getenv(chapters.EnvChapter), chapter)
	Expect(err).NotTo(HaveOccurred())
	return n
}

// Teardown waits for the suite's namespaces to be deleted while the
// operator still runs (a Redis with finalizers needs it), then stops the
// operator. The cluster stays up for the next suite.
func (e *Env) Teardown(ctx context.Context) {
	if e != nil && e.deployed != nil {
		e.deployed.teardown(ctx)
		return
	}
	if e == nil || e.Operator == nil {
		return
	}
	e.CollectClusterLogs(ctx)
	// The suites after this one, and `make try-it`, must not meet its
	// objects; those of a suite whose specs stop the operator go without it.
	// After a failed spec, the operator under test may be what failed (a
	// mutant that never removes its finalizer): once it is stopped, the
	// finalizers go by hand.
	failed := anySpecFailed(e.Chapter)
	if !failed && (e.Operator.Running() || e.specsRunOperator) {
		e.WaitForOtherNamespacesEmpty(ctx, "")
	}
	Expect(e.Operator.Stop()).To(Succeed())
	if failed {
		e.releaseLeftovers(ctx)
		e.WaitForOtherNamespacesEmpty(ctx, "")
	}
	// The role was applied server-side; `make deploy` (a chapter 10 Try it
	// after the suites) applies its own client-side, and kubectl warns
	// about an object it did not make.
	if e.operatorRole != "" {
		e.MustKubectl(ctx, "delete", "-f", e.operatorRole, "--ignore-not-found")
	}
	e.MustKubectl(ctx, "delete", "clusterrolebinding,clusterrole", metricsScraperRole, "--ignore-not-found")
	e.MustKubectl(ctx, "delete", "serviceaccount", metricsScraper, "-n", OperatorNamespace, "--ignore-not-found")
	// The whole run, the specs' cleanups included, which a spec's own
	// check (NewNamespace) does not wait for.
	Expect(e.deathsSince(ctx, deathMark{}, "in the suite")).To(BeEmpty(), "the operator under test died or panicked")
}

// NewNamespace creates a namespace for one spec and registers its cleanup:
// on failure, the dump of what the spec saw; then the namespace's deletion.
func (e *Env) NewNamespace(ctx context.Context) string {
	GinkgoHelper()
	suffix := make([]byte, 3)
	_, _ = rand.Read(suffix)
	ns := chapters.Tag(e.Chapter) + "-" + hex.EncodeToString(suffix)
	// Set-up, not what a learner types: the client, not a kubectl process.
	Expect(e.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
		Name: ns, Labels: map[string]string{suiteLabel: e.suite.Label()},
	}})).To(Succeed())
	DeferCleanup(func(ctx SpecContext) {
		if CurrentSpecReport().Failed() {
			e.Dump(ctx, ns)
		}
		// An operator that exited by itself fails the spec (death.go),
		// once the namespace is cleaned up; it is seen here, before it is
		// started again. Its log is read at the spec's end.
		died := e.exitsUnasked("during the spec")
		// A Redis keeps its finalizers until a running operator of a
		// finalizer chapter removes them; make sure one runs. (Only a
		// Serial spec stops it, on process 1; chapter 0 has none to run.)
		if e.Operator != nil && e.Operator.Chapter != 0 && !e.Operator.remote && !e.specsRunOperator && !e.Operator.Running() {
			Expect(e.Operator.Start(ctx)).To(Succeed())
		}
		// The namespace controller waits 5 s before it deletes anything,
		// and comes back seconds later each time it finds something left
		// (half the pods' grace period, or of a guess for finalizers); the
		// Redis objects and then the pods go now, so that a Serial spec or
		// Teardown, which wait for them (WaitForOtherNamespacesEmpty), wait
		// less. (The Redis first: an operator that rebuilds deleted pods
		// rebuilds none for a Redis that is gone or being deleted.) The
		// next spec waits for neither: it has a namespace of its own.
		if err := e.Client.DeleteAllOf(ctx, &myappv1.Redis{}, client.InNamespace(ns)); err != nil && !meta.IsNoMatchError(err) {
			Expect(err).NotTo(HaveOccurred(), "deleting the Redis objects of namespace %s", ns)
		}
		Expect(e.Client.DeleteAllOf(ctx, &corev1.Pod{}, client.InNamespace(ns))).To(Succeed(), "deleting the pods of namespace %s", ns)
		Expect(client.IgnoreNotFound(e.Client.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))).To(Succeed(), "deleting namespace %s", ns)
		Expect(died).To(BeEmpty(), "the operator under test died")
	})
	e.waitForProvisioned(ctx, ns)
	return ns
}

// provisionTimeout bounds the wait for what the controller manager puts
// in a new namespace: its watch of namespaces, cut by a restart of the API
// server, is tried again with a back-off that reaches 30 s, jittered up to
// twice that, and its first try may meet an API server whose RBAC rules
// are not loaded yet.
const provisionTimeout = 2 * time.Minute

// waitForProvisioned waits until the controller manager has put in
// namespace ns what every pod needs: the default ServiceAccount, without
// which the API server refuses the pod ("error looking up service
// account"), and the kube-root-ca.crt ConfigMap, without which a kubelet
// cannot mount the pod's API token. The controller manager makes both as
// soon as it sees the namespace: at once, unless its watch of namespaces
// is waiting out a back-off, as it may for a minute after chapter 14's
// specs restart the API server; a spec that created a Redis then would see
// its pods refused for no fault of the operator. Kubernetes' own
// end-to-end framework waits for both too. On an API server alone
// (CLUSTER=envtest) nothing is waited for.
func (e *Env) waitForProvisioned(ctx context.Context, ns string) {
	GinkgoHelper()
	if e.Cluster.APIServerOnly() {
		// No controller manager provisions it; and envtest's API server
		// admits a pod with no ServiceAccount (its ServiceAccount
		// admission plugin is off).
		return
	}
	start := time.Now()
	Eventually(func(g Gomega) {
		g.Expect(e.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "default"}, &corev1.ServiceAccount{})).To(Succeed())
		g.Expect(e.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "kube-root-ca.crt"}, &corev1.ConfigMap{})).To(Succeed())
	}).WithContext(ctx).WithTimeout(provisionTimeout).WithPolling(100*time.Millisecond).Should(Succeed(),
		"namespace %s lacks what the controller manager puts in a new namespace", ns)
	if waited := time.Since(start); waited > time.Second {
		GinkgoWriter.Printf("namespace %s had its default ServiceAccount and kube-root-ca.crt after %.1fs\n", ns, waited.Seconds())
	}
}

// WaitForOtherNamespacesEmpty waits until this suite's namespaces other
// than keep hold no Redis and no pod, for specs that observe the operator
// as a whole (its metrics, its writes) and must not see it reconcile an
// earlier spec's objects; such a spec is Serial. A suite's tear-down waits
// for it too, so that the suites after it, and `make try-it`, do not meet
// its objects. The namespaces may still be there, terminating: the
// namespace controller waits 5 s before it starts on one, and what it
// deletes after the pods (events, ServiceAccounts, ConfigMaps) is nothing
// the operator watches.
func (e *Env) WaitForOtherNamespacesEmpty(ctx context.Context, keep string) {
	GinkgoHelper()
	mustBeSerial("WaitForOtherNamespacesEmpty")
	Eventually(func(g Gomega) []string {
		namespaces := &corev1.NamespaceList{}
		g.Expect(e.Client.List(ctx, namespaces, client.MatchingLabels{suiteLabel: e.suite.Label()})).To(Succeed())
		var left []string
		for _, n := range namespaces.Items {
			if n.Name == keep {
				continue
			}
			redis := &myappv1.RedisList{}
			g.Expect(e.Client.List(ctx, redis, client.InNamespace(n.Name))).To(Succeed())
			for _, r := range redis.Items {
				left = append(left, "redis "+n.Name+"/"+r.Name)
			}
			pods := &corev1.PodList{}
			g.Expect(e.Client.List(ctx, pods, client.InNamespace(n.Name))).To(Succeed())
			for _, p := range pods.Items {
				left = append(left, "pod "+n.Name+"/"+p.Name)
			}
		}
		return left
	}).WithContext(ctx).WithTimeout(2*time.Minute).Should(BeEmpty(), "earlier specs' Redis objects and pods are still there")
}

// releaseLeftovers removes the finalizers of the Redis objects and pods
// left in this suite's namespaces, which their cleanup has asked to
// delete: with the operator stopped, nothing else would.
func (e *Env) releaseLeftovers(ctx context.Context) {
	GinkgoHelper()
	namespaces := &corev1.NamespaceList{}
	Expect(e.Client.List(ctx, namespaces, client.MatchingLabels{suiteLabel: e.suite.Label()})).To(Succeed())
	noFinalizers := client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`))
	for _, n := range namespaces.Items {
		redis := &myappv1.RedisList{}
		Expect(e.Client.List(ctx, redis, client.InNamespace(n.Name))).To(Succeed())
		pods := &corev1.PodList{}
		Expect(e.Client.List(ctx, pods, client.InNamespace(n.Name))).To(Succeed())
		objects := make([]client.Object, 0, len(redis.Items)+len(pods.Items))
		for i := range redis.Items {
			objects = append(objects, &redis.Items[i])
		}
		for i := range pods.Items {
			objects = append(objects, &pods.Items[i])
		}
		for _, o := range objects {
			if len(o.GetFinalizers()) > 0 {
				Expect(client.IgnoreNotFound(e.Client.Patch(ctx, o, noFinalizers))).To(Succeed())
			}
		}
	}
}

// suiteLabel marks the namespaces a suite creates, so it can wait for them.
const suiteLabel = "e2e.myapp.example.com/suite"

// RedisManifest is a Redis with the given name and replicas.
func RedisManifest(ns, name string, replicas any) string {
	return fmt.Sprintf(`apiVersion: myapp.example.com/v1
kind: Redis
metadata:
  namespace: %s
  name: %s
spec:
  replicas: %v
`, ns, name, replicas)
}

// ForeignPodManifest is a pod with no owner, as someone other than the
// operator would create it.
func ForeignPodManifest(ns, name string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  namespace: %s
  name: %s
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - name: main
    image: %s
`, ns, name, myappv1.DefaultImage)
}

// PodNames is <name>-0 .. <name>-(n-1), sorted by name.
func PodNames(name string, n int) []string {
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("%s-%d", name, i)
	}
	sort.Strings(names)
	return names
}

// DeletePodAndExpectNoRebuild is what every chapter before the rebuild
// chapter must show. It deletes a pod with kubectl, waits until the pod is
// gone, then makes the operator reconcile the pod's Redis with trigger
// (touching the Redis, say, where nothing watches pods) and observes that
// reconcile. Only then does it check that the pod stays gone: a reconcile
// of its Redis that would rebuild it has run.
func (e *Env) DeletePodAndExpectNoRebuild(ctx context.Context, ns, pod string, trigger func()) {
	GinkgoHelper()
	old, err := e.Pod(ctx, ns, pod)
	Expect(err).NotTo(HaveOccurred())
	redis := old.Labels["app.kubernetes.io/instance"]
	Expect(redis).NotTo(BeEmpty(), "pod %s has no app.kubernetes.io/instance label naming its Redis", pod)
	e.ExpectReconcile(ctx, ns, redis, func() {
		e.MustKubectl(ctx, "delete", "pod", pod, "-n", ns)
		// Gone means no pod with the old UID: a rebuilt pod of the same
		// name is what the Consistently below catches.
		Eventually(func(g Gomega) {
			p, err := e.Pod(ctx, ns, pod)
			if err == nil {
				g.Expect(p.UID).NotTo(Equal(old.UID), "the deleted pod is still there")
			} else {
				g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "want NotFound, got %v", err)
			}
		}).WithContext(ctx).Should(Succeed())
		if trigger != nil {
			trigger()
		}
	})
	DecidingCheck("pod "+pod+" is not made again", func() {
		e.ExpectStaysGone(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: pod}},
			"the pod was rebuilt")
	})
}

// TouchRedis changes a label on the Redis, which makes the operator
// reconcile it without changing what it asks for.
func (e *Env) TouchRedis(ctx context.Context, ns, name string) {
	GinkgoHelper()
	e.MustKubectl(ctx, "label", "redis", name, "-n", ns, "--overwrite", "touched="+strconv.FormatInt(time.Now().UnixNano(), 36))
}

// ExpectRebuilt waits until the named pod exists again with a UID other
// than oldUID, is not being deleted, and is Running.
func (e *Env) ExpectRebuilt(ctx context.Context, ns, pod string, oldUID types.UID) {
	GinkgoHelper()
	Eventually(func(g Gomega) {
		p, err := e.Pod(ctx, ns, pod)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(p.UID).NotTo(Equal(oldUID), "still the old pod")
		g.Expect(p.DeletionTimestamp).To(BeNil())
		g.Expect(p.Status.Phase).To(Equal(corev1.PodRunning))
	}).WithContext(ctx).Should(Succeed(), "pod %s was not rebuilt", pod)
}
