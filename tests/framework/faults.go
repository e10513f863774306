package framework

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"example.com/redis-operator/chapters"
	"example.com/redis-operator/operator/faults"
)

// NewFaultSuite registers the BeforeSuite and AfterSuite of a suite that
// starts, crashes and restarts the operator itself, spec by spec: the
// cluster and the CRD as for NewSuite, and the operator built and given
// its ServiceAccount, but not started. Its Operator runs the test build
// that injects faults (FaultsBinary), on the host, as `make run` runs it
// (so without its webhook, ENABLE_WEBHOOKS=false), where a spec can kill
// it at the moment it chooses. A spec that must run the operator that
// ships sets Operator.Binary to OperatorBinary().
func NewFaultSuite(chapter int) *Env {
	env := &Env{Chapter: chapter, specsRunOperator: true}
	env.registerSuiteNodes(func(ctx context.Context) {
		env.prepareOperator(ctx)
		if os.Getenv(chapters.EnvFaultsBin) == "" {
			Expect(env.Make(ctx, "build-faults")).To(Succeed())
		}
		env.Operator.Binary = FaultsBinary()
		Expect(env.Operator.Binary).To(BeAnExistingFile(), "the operator's test build, which injects faults: make build-faults (for a variant, make build-variant builds it, for a chapter in FAULTS_CHAPTERS or with FAULTS=true)")
		env.Operator.Env = []string{"ENABLE_WEBHOOKS=false"}
		env.WaitForOwnerMapping(ctx)
	}, func(ctx context.Context) {
		env.connect(ctx)
		env.Operator = remoteOperator(env.Chapter)
	})
	return env
}

// NewShippedSuite registers the BeforeSuite and AfterSuite of the suite of
// the chapter that ships (chapters.Shipped): the operator that ships runs
// on the host from the start, as `make run` runs it (without its webhook,
// ENABLE_WEBHOOKS=false), as NewSuite's does, so that the behaviour specs
// of the chapters before it run against it, in parallel. The chapter's own
// specs, Serial, run the operator their own way (Env.StartSupervised stops
// the suite's first), and the cleanup of each spec's namespace starts it
// again.
func NewShippedSuite(chapter int) *Env {
	env := &Env{Chapter: chapter}
	env.registerSuiteNodes(func(ctx context.Context) {
		env.prepareOperator(ctx)
		env.Operator.Env = []string{"ENABLE_WEBHOOKS=false"}
		env.WaitForOwnerMapping(ctx)
		By(fmt.Sprintf("starting the chapter %d operator, as it ships, as that ServiceAccount (log: %s)", env.Operator.Chapter, env.Operator.LogPath))
		Expect(env.Operator.Start(ctx)).To(Succeed())
	}, func(ctx context.Context) {
		env.connect(ctx)
		env.Operator = remoteOperator(env.Chapter)
	})
	return env
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

// WritesSince lists the writes the operator logged after offset (see
// LogOffset), the crash line included.
func (o *Operator) WritesSince(offset int64) []faults.Write {
	GinkgoHelper()
	mustBeSerial("WritesSince")
	return faults.WritesIn(o.LogSince(offset))
}

// Crashed reports whether err is the exit of an operator that crashed on
// purpose.
func Crashed(err error) bool {
	var exit *exec.ExitError
	return errors.As(err, &exit) && exit.ExitCode() == faults.CrashExitCode
}

// FaultsBinary is the test build of the operator, which injects the
// faults that REDIS_OPERATOR_FAULT_* variables ask for (package
// operator/faults): OPERATOR_FAULTS_BIN, or bin/operator-faults, which
// `make build-faults` makes. The operator that ships (OperatorBinary) has
// none of that code.
func FaultsBinary() string {
	if b := os.Getenv(chapters.EnvFaultsBin); b != "" {
		return b
	}
	return filepath.Join(RepoRoot(), "bin", "operator-faults")
}
