package framework

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2" //nolint:revive // Ginkgo's DSL reads best dot-imported.
	. "github.com/onsi/gomega"    //nolint:revive // Gomega's DSL reads best dot-imported.
	corev1 "k8s.io/api/core/v1"
)

// Suite-wide timing. Eventually waits long enough for a pod to be deleted
// through kubelet termination and rebuilt; Consistently watches long enough
// for a reconcile that should not happen to have happened.
const (
	EventuallyTimeout  = 90 * time.Second
	PollingInterval    = 250 * time.Millisecond
	ConsistentlyWindow = 6 * time.Second
	crdName            = "redis.myapp.example.com"
	// SetupTimeout bounds BeforeSuite: building the operator and starting it.
	SetupTimeout = 5 * time.Minute
)

// Env is one chapter suite's world: the cluster, kubectl and the running
// operator.
type Env struct {
	Chapter  int
	Cluster  *Cluster
	Kubectl  *Kubectl
	Operator *Operator
}

// NewSuite registers the BeforeSuite and AfterSuite of chapter n's suite
// and returns the Env they fill in: the cluster, the CRD installed, and
// bin/operator --chapter n running.
func NewSuite(chapter int) *Env {
	env := &Env{Chapter: chapter}
	BeforeSuite(func(ctx SpecContext) { env.setup(ctx) }, NodeTimeout(SetupTimeout))
	AfterSuite(func(ctx SpecContext) { env.Teardown(ctx) }, NodeTimeout(SetupTimeout))
	return env
}

// RunSuite runs a chapter's specs under the label chapter-NN.
func RunSuite(t *testing.T, env *Env, title string) {
	RegisterFailHandler(Fail)
	RunSpecs(t, title, Label(fmt.Sprintf("chapter-%02d", env.Chapter)))
}

func (e *Env) setup(ctx context.Context) {
	SetDefaultEventuallyTimeout(EventuallyTimeout)
	SetDefaultEventuallyPollingInterval(PollingInterval)
	SetDefaultConsistentlyDuration(ConsistentlyWindow)
	SetDefaultConsistentlyPollingInterval(PollingInterval)
	// Specs pass their SpecContext to Eventually so that an interrupted run
	// stops polling; without this, Gomega then ignores the default timeout
	// and a spec whose condition never comes true waits forever.
	EnforceDefaultTimeoutsWhenUsingContexts()
	chapter := e.Chapter

	cluster, err := ClusterFromEnv(ctx)
	Expect(err).NotTo(HaveOccurred())
	By(fmt.Sprintf("using the %s cluster (%s)", cluster.Provider, cluster.Kubeconfig))
	e.Cluster, e.Kubectl = cluster, NewKubectl(cluster.Kubeconfig)

	By("installing the Redis CRD")
	root := RepoRoot()
	e.MustKubectl(ctx, "apply", "--server-side", "--force-conflicts", "-f", filepath.Join(root, "config", "crd", "bases"))
	e.MustKubectl(ctx, "wait", "--for", "condition=Established", "--timeout=60s", "crd/"+crdName)

	binary := os.Getenv("OPERATOR_BIN")
	if binary == "" {
		By("building bin/operator")
		binary = filepath.Join(root, "bin", "operator")
		out, err := exec.CommandContext(ctx, "go", "build", "-o", binary, "./operator").CombinedOutput()
		Expect(err).NotTo(HaveOccurred(), "go build ./operator: %s", out)
	}
	// OPERATOR_CHAPTER runs this suite against another chapter's operator,
	// e.g. chapter 5's suite against chapter 4, to watch it fail where the
	// lesson matters.
	operatorChapter := chapter
	if v := os.Getenv("OPERATOR_CHAPTER"); v != "" {
		operatorChapter, err = strconv.Atoi(v)
		Expect(err).NotTo(HaveOccurred(), "OPERATOR_CHAPTER must be a chapter number")
	}
	e.Operator = &Operator{
		Binary:     binary,
		Chapter:    operatorChapter,
		Kubeconfig: cluster.Kubeconfig,
		LogPath:    filepath.Join(root, "_output", "logs", fmt.Sprintf("chapter%02d-operator.log", chapter)),
	}
	_ = os.Remove(e.Operator.LogPath)
	By(fmt.Sprintf("starting bin/operator --chapter %d (log: %s)", operatorChapter, e.Operator.LogPath))
	Expect(e.Operator.Start(ctx)).To(Succeed())
}

// Teardown waits for the suite's namespaces to be deleted while the
// operator still runs (a Redis with finalizers needs it), then stops the
// operator. The cluster stays up for the next suite.
func (e *Env) Teardown(ctx context.Context) {
	if e == nil || e.Operator == nil {
		return
	}
	if e.Operator.Running() {
		e.WaitForOtherNamespacesGone(ctx, "")
	}
	Expect(e.Operator.Stop()).To(Succeed())
}

// MustKubectl runs kubectl and fails the spec if it fails.
func (e *Env) MustKubectl(ctx context.Context, args ...string) string {
	GinkgoHelper()
	out, err := e.Kubectl.Run(ctx, args...)
	Expect(err).NotTo(HaveOccurred())
	return out
}

// Apply pipes a manifest into `kubectl apply -f -`.
func (e *Env) Apply(ctx context.Context, manifest string) (string, error) {
	return e.Kubectl.RunWithInput(ctx, manifest, "apply", "-f", "-")
}

// NewNamespace creates a namespace for one spec and registers its cleanup:
// on failure, the dump of what the spec saw; then the namespace's deletion.
func (e *Env) NewNamespace(ctx context.Context) string {
	GinkgoHelper()
	suffix := make([]byte, 3)
	_, _ = rand.Read(suffix)
	ns := fmt.Sprintf("ch%02d-%s", e.Chapter, hex.EncodeToString(suffix))
	_, err := e.Apply(ctx, fmt.Sprintf("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: %s\n  labels:\n    %s: %q\n",
		ns, suiteLabel, e.suiteLabelValue()))
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func(ctx SpecContext) {
		if CurrentSpecReport().Failed() {
			e.Dump(ctx, ns)
		}
		// A Redis keeps its finalizers until a running operator of a
		// finalizer chapter removes them; make sure one runs.
		if !e.Operator.Running() {
			Expect(e.Operator.Start(ctx)).To(Succeed())
		}
		// The namespace controller takes a few seconds; the next spec does
		// not wait for it (it has a namespace of its own), Teardown does.
		e.MustKubectl(ctx, "delete", "namespace", ns, "--wait=false")
	})
	return ns
}

// WaitForOtherNamespacesGone waits until this suite's namespaces other than
// keep are deleted, for specs that observe the operator as a whole (its
// metrics) and must not see it reconcile an earlier spec's objects.
func (e *Env) WaitForOtherNamespacesGone(ctx context.Context, keep string) {
	GinkgoHelper()
	Eventually(func(g Gomega) []string {
		out, err := e.Kubectl.Run(ctx, "get", "namespaces", "-l", suiteLabel+"="+e.suiteLabelValue(), "-o", "name")
		g.Expect(err).NotTo(HaveOccurred())
		var others []string
		for _, name := range strings.Fields(out) {
			if name != "namespace/"+keep {
				others = append(others, name)
			}
		}
		return others
	}).WithContext(ctx).WithTimeout(2*time.Minute).Should(BeEmpty(), "earlier specs' namespaces were not deleted")
}

// suiteLabel marks the namespaces a suite creates, so it can wait for them.
const suiteLabel = "e2e.myapp.example.com/suite"

func (e *Env) suiteLabelValue() string { return fmt.Sprintf("chapter-%02d", e.Chapter) }

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

// CreateRedis applies a Redis and waits until its pods <name>-0..N-1 exist.
func (e *Env) CreateRedis(ctx context.Context, ns, name string, replicas int) {
	GinkgoHelper()
	_, err := e.Apply(ctx, RedisManifest(ns, name, replicas))
	Expect(err).NotTo(HaveOccurred())
	Eventually(e.PodNamesFunc(ctx, ns, name)).WithContext(ctx).Should(Equal(PodNames(name, replicas)))
}

// PodNames is <name>-0 .. <name>-(n-1), in the order `kubectl get` sorts them.
func PodNames(name string, n int) []string {
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("%s-%d", name, i)
	}
	sort.Strings(names)
	return names
}

// Pods lists the pods of a Redis (by its instance label) with kubectl.
func (e *Env) Pods(ctx context.Context, ns, redis string) ([]corev1.Pod, error) {
	out, err := e.Kubectl.Run(ctx, "get", "pods", "-n", ns, "-l", "app.kubernetes.io/instance="+redis, "-o", "json")
	if err != nil {
		return nil, err
	}
	var list corev1.PodList
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		return nil, err
	}
	sort.Slice(list.Items, func(i, j int) bool { return list.Items[i].Name < list.Items[j].Name })
	return list.Items, nil
}

// PodNamesFunc is for Eventually: the sorted names of a Redis' pods that
// are not being deleted.
func (e *Env) PodNamesFunc(ctx context.Context, ns, redis string) func(Gomega) []string {
	return func(g Gomega) []string {
		pods, err := e.Pods(ctx, ns, redis)
		g.Expect(err).NotTo(HaveOccurred())
		names := []string{}
		for _, p := range pods {
			if p.DeletionTimestamp == nil {
				names = append(names, p.Name)
			}
		}
		return names
	}
}

// Pod gets one pod with kubectl.
func (e *Env) Pod(ctx context.Context, ns, name string) (*corev1.Pod, error) {
	out, err := e.Kubectl.Run(ctx, "get", "pod", "-n", ns, name, "-o", "json")
	if err != nil {
		return nil, err
	}
	pod := &corev1.Pod{}
	return pod, json.Unmarshal([]byte(out), pod)
}

// PodUIDs maps pod name to UID for a Redis' pods.
func (e *Env) PodUIDs(ctx context.Context, ns, redis string) map[string]string {
	GinkgoHelper()
	pods, err := e.Pods(ctx, ns, redis)
	Expect(err).NotTo(HaveOccurred())
	uids := map[string]string{}
	for _, p := range pods {
		uids[p.Name] = string(p.UID)
	}
	return uids
}

// JSONPath reads one field of an object with kubectl's -o jsonpath.
func (e *Env) JSONPath(ctx context.Context, ns, object, path string) (string, error) {
	out, err := e.Kubectl.Run(ctx, "get", "-n", ns, object, "-o", "jsonpath="+path)
	return strings.TrimSpace(out), err
}

// Finalizers returns an object's finalizers.
func (e *Env) Finalizers(ctx context.Context, ns, object string) ([]string, error) {
	out, err := e.JSONPath(ctx, ns, object, "{.metadata.finalizers}")
	if err != nil || out == "" {
		return nil, err
	}
	var finalizers []string
	return finalizers, json.Unmarshal([]byte(out), &finalizers)
}

// notFound is for Eventually and Consistently: it passes while `kubectl
// get` says NotFound for the object (kind/name).
func (e *Env) notFound(ctx context.Context, ns, object string) func(Gomega) {
	return func(g Gomega) {
		_, err := e.Kubectl.Run(ctx, "get", "-n", ns, object)
		g.Expect(err).To(MatchError(ContainSubstring("NotFound")))
	}
}

// ExpectGone waits until `kubectl get` says NotFound for the object.
func (e *Env) ExpectGone(ctx context.Context, ns, object string) {
	GinkgoHelper()
	Eventually(e.notFound(ctx, ns, object)).WithContext(ctx).Should(Succeed(), "%s in %s still exists", object, ns)
}

// ExpectStaysGone checks that the object does not come back for the
// Consistently window; why says what it would mean if it did.
func (e *Env) ExpectStaysGone(ctx context.Context, ns, object, why string) {
	GinkgoHelper()
	Consistently(e.notFound(ctx, ns, object)).WithContext(ctx).Should(Succeed(), "%s in %s: %s", object, ns, why)
}

// EventReasons lists the reasons of the events in a namespace that are
// about the named object (kind/name, e.g. Redis/cache).
func (e *Env) EventReasons(ctx context.Context, ns, kind, name string) ([]string, error) {
	out, err := e.Kubectl.Run(ctx, "get", "events", "-n", ns, "-o", "json")
	if err != nil {
		return nil, err
	}
	var list corev1.EventList
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		return nil, err
	}
	var reasons []string
	for _, ev := range list.Items {
		if ev.InvolvedObject.Kind == kind && ev.InvolvedObject.Name == name {
			reasons = append(reasons, ev.Reason)
		}
	}
	return reasons, nil
}

// DeletePodAndExpectNoRebuild deletes a pod with kubectl and checks that it
// stays gone: what every chapter before the rebuild chapter must show.
func (e *Env) DeletePodAndExpectNoRebuild(ctx context.Context, ns, pod string) {
	GinkgoHelper()
	e.MustKubectl(ctx, "delete", "pod", pod, "-n", ns)
	e.ExpectStaysGone(ctx, ns, "pod/"+pod, "the pod was rebuilt")
}

// ExpectRebuilt waits until the named pod exists again with a UID other
// than oldUID, is not being deleted, and is Running.
func (e *Env) ExpectRebuilt(ctx context.Context, ns, pod, oldUID string) {
	GinkgoHelper()
	Eventually(func(g Gomega) {
		p, err := e.Pod(ctx, ns, pod)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(string(p.UID)).NotTo(Equal(oldUID), "still the old pod")
		g.Expect(p.DeletionTimestamp).To(BeNil())
		g.Expect(p.Status.Phase).To(Equal(corev1.PodRunning))
	}).WithContext(ctx).Should(Succeed(), "pod %s was not rebuilt", pod)
}
