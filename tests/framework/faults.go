package framework

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The environment variables of the operator's faults, and the status it
// exits with when it crashes on purpose.
const (
	EnvCrashAfterWrite  = "FAULT_CRASH_AFTER_WRITE"
	EnvCrashBeforeWrite = "FAULT_CRASH_BEFORE_WRITE"
	EnvConflictOnce     = "FAULT_CONFLICT_ONCE"
	EnvStalePods        = "FAULT_STALE_PODS"
	crashExitCode       = 3
)

// NewFaultSuite registers the BeforeSuite and AfterSuite of a suite that
// starts, crashes and restarts the operator itself, spec by spec: the
// cluster and the CRD as for NewSuite, and the operator built and given
// its ServiceAccount, but not started. It runs on the host, as `make run`
// runs it (so without its webhook, ENABLE_WEBHOOKS=false), where a spec
// can kill it at the moment it chooses.
func NewFaultSuite(chapter int) *Env {
	env := &Env{Chapter: chapter, specsRunOperator: true}
	env.registerSuiteNodes(func(ctx context.Context) {
		env.prepareOperator(ctx)
		env.Operator.Env = []string{"ENABLE_WEBHOOKS=false"}
		env.WaitForOwnerMapping(ctx)
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

// Write is one write the operator logged (FAULT_CRASH_AFTER_WRITE set).
type Write struct {
	N      int    `json:"n"`
	Verb   string `json:"verb"`
	Kind   string `json:"kind"`
	Object string `json:"object"`
	Error  string `json:"error"`
	// Name is how the faults name it: its verb, kind, object's name and,
	// after #, which of the writes of that name it is ("delete Pod
	// cache-4#1").
	Name string `json:"write"`
	// Crash is true on the line that says the operator exits after it, or
	// before it if Before.
	Crash, Before bool `json:"-"`
}

func (w Write) String() string {
	s := fmt.Sprintf("%d: %s %s %s", w.N, w.Verb, w.Kind, w.Object)
	if w.Error != "" {
		s += " (" + w.Error + ")"
	}
	return s
}

// WritesIn reads the operator's write lines (logger "faults") from a log:
// the console encoder writes time, level, logger and message, then the
// key/values as one JSON object.
func WritesIn(log string) []Write {
	var writes []Write
	for _, line := range strings.Split(log, "\n") {
		fields := strings.Split(line, "\t")
		if len(fields) < 5 || fields[2] != "faults" || !strings.HasPrefix(fields[4], "{") {
			continue
		}
		var w Write
		if err := json.Unmarshal([]byte(fields[4]), &w); err != nil || w.N == 0 {
			continue
		}
		w.Before = strings.HasPrefix(fields[3], "Crashing before write")
		w.Crash = w.Before || strings.HasPrefix(fields[3], "Crashing after write")
		if w.Crash || fields[3] == "Write" {
			writes = append(writes, w)
		}
	}
	return writes
}

// WritesSince lists the writes the operator logged after offset (see
// LogOffset), the crash line included.
func (o *Operator) WritesSince(offset int64) []Write {
	GinkgoHelper()
	mustBeSerial("WritesSince")
	return WritesIn(o.LogSince(offset))
}

// Crashed reports whether err is the exit of an operator that crashed on
// purpose.
func Crashed(err error) bool {
	var exit *exec.ExitError
	return errors.As(err, &exit) && exit.ExitCode() == crashExitCode
}
