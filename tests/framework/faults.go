package framework

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"slices"
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
)

// The environment variables of the operator's faults, and the status it
// exits with when it crashes on purpose.
const (
	EnvCrashAfterWrite = "FAULT_CRASH_AFTER_WRITE"
	EnvConflictOnce    = "FAULT_CONFLICT_ONCE"
	EnvStalePods       = "FAULT_STALE_PODS"
	crashExitCode      = 3
)

// countWrites is the environment of an operator that logs its writes and
// injects no fault.
var countWrites = []string{EnvCrashAfterWrite + "=0"}

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
		env.waitForOwnerMapping(ctx)
	}, func(ctx context.Context) {
		env.connect(ctx)
		env.Operator = env.remoteOperator()
	})
	return env
}

// waitForOwnerMapping waits until the API server admits a pod owned by a
// Redis. Right after the CRD is first installed, its admission plugin
// OwnerReferencesPermissionEnforcement cannot map the kind Redis yet and
// refuses every such pod ("cannot set blockOwnerDeletion ... cannot find
// RESTMapping"); the operator retries until it can. A clean run that
// started then would count dozens of refused creates, which are the
// cluster's, not the operator's: the sweep would crash after each.
func (e *Env) waitForOwnerMapping(ctx context.Context) {
	GinkgoHelper()
	By("waiting until the API server admits a pod owned by a Redis (a server-side dry run)")
	yes := true
	Eventually(func() error {
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: "default", GenerateName: "owner-mapping-", OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "myapp.example.com/v1", Kind: "Redis", Name: "any", UID: "00000000-0000-0000-0000-000000000000",
				Controller: &yes, BlockOwnerDeletion: &yes,
			}}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "redis:7.0"}}},
		}
		return e.Client.Create(ctx, pod, client.DryRunAll)
	}).WithContext(ctx).WithTimeout(2 * time.Minute).Should(Succeed())
}

// Write is one write the operator logged (FAULT_CRASH_AFTER_WRITE set).
type Write struct {
	N      int    `json:"n"`
	Verb   string `json:"verb"`
	Kind   string `json:"kind"`
	Object string `json:"object"`
	Error  string `json:"error"`
	// Crash is true on the line that says the operator exits after it.
	Crash bool `json:"-"`
}

func (w Write) String() string {
	s := fmt.Sprintf("%d: %s %s %s", w.N, w.Verb, w.Kind, w.Object)
	if w.Error != "" {
		s += " (" + w.Error + ")"
	}
	return s
}

// writesIn reads the operator's write lines (logger "faults") from a log:
// the console encoder writes time, level, logger and message, then the
// key/values as one JSON object.
func writesIn(log string) []Write {
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
		w.Crash = strings.HasPrefix(fields[3], "Crashing after write")
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
	return writesIn(o.LogSince(offset))
}

// crashed reports whether err is the exit of an operator that crashed on
// purpose.
func crashed(err error) bool {
	var exit *exec.ExitError
	return errors.As(err, &exit) && exit.ExitCode() == crashExitCode
}

// State is what a namespace holds when a step of a scenario is over: every
// pod in it (whoever made it), and the Redis' status, in words that two
// runs of the same scenario can compare.
type State struct {
	Pods   []string
	Status string
	// UIDs are the pods' UIDs, which a second run does not share: not
	// compared, but checked between the steps of one run.
	UIDs map[string]types.UID `json:"-"`
}

// withoutUIDs is s as two runs compare it.
func (s State) withoutUIDs() State { return State{Pods: s.Pods, Status: s.Status} }

// stateOf reads the State of namespace ns, whose Redis is named redis.
func (e *Env) stateOf(ctx context.Context, ns, redis string) (State, error) {
	s := State{UIDs: map[string]types.UID{}, Status: "Redis gone"}
	r, err := e.Redis(ctx, ns, redis)
	switch {
	case apierrors.IsNotFound(err):
		r = nil
	case err != nil:
		return s, err
	default:
		available := meta.FindStatusCondition(r.Status.Conditions, "Available")
		progressing := meta.FindStatusCondition(r.Status.Conditions, "Progressing")
		cond := func(c *metav1.Condition) string {
			if c == nil || c.ObservedGeneration != r.Generation {
				return "unknown"
			}
			return string(c.Status)
		}
		s.Status = fmt.Sprintf("spec %d, status %d pods, %d ready, generation observed %t, Available %s, Progressing %s",
			r.Spec.Replicas, r.Status.Replicas, r.Status.ReadyReplicas, r.Status.ObservedGeneration == r.Generation,
			cond(available), cond(progressing))
	}
	list := &corev1.PodList{}
	if err := e.Client.List(ctx, list, client.InNamespace(ns)); err != nil {
		return s, err
	}
	for _, p := range list.Items {
		owner := "no controller"
		if ref := metav1.GetControllerOf(&p); ref != nil {
			owner = ref.Kind + " " + ref.Name
			if r == nil || ref.UID != r.UID {
				owner += " (an earlier one)"
			}
		}
		desc := fmt.Sprintf("%s: %s, controlled by %s", p.Name, p.Status.Phase, owner)
		if !p.DeletionTimestamp.IsZero() {
			desc += ", terminating"
		}
		s.Pods = append(s.Pods, desc)
		s.UIDs[p.Name] = p.UID
	}
	slices.Sort(s.Pods)
	return s, nil
}

// convergedState is the State of the scenario's Redis with n pods that
// all run, as the operator should leave it; n < 0 is the Redis deleted and
// its pods gone.
func convergedState(n int) State {
	const redis = scenarioRedis
	if n < 0 {
		return State{Status: "Redis gone"}
	}
	s := State{Status: fmt.Sprintf("spec %d, status %d pods, %d ready, generation observed true, Available True, Progressing False", n, n, n)}
	for _, name := range PodNames(redis, n) {
		s.Pods = append(s.Pods, name+": Running, controlled by Redis "+redis)
	}
	return s
}

// Step is one thing a user does in a scenario, and the state the operator
// must then reach.
type Step struct {
	Name string
	Do   func(ctx context.Context, e *Env, ns string)
	// Want is the state after the step, once the operator is done.
	Want State
	// Replaced is the pod the step deletes, which comes back with a new
	// UID; every other pod that the step does not remove keeps its UID.
	Replaced string
	// Wait is how much longer than the suite's Eventually timeout the step
	// may take, e.g. for a Lease to expire first.
	Wait time.Duration
}

// scenarioRedis is the Redis that Scenario makes.
const scenarioRedis = "cache"

// Scenario is what the fault specs run, a user's day with a Redis: create
// it with 3 pods, delete one, scale to 5, scale to 2, delete the Redis.
func Scenario() []Step {
	kubectl := func(args ...string) func(context.Context, *Env, string) {
		return func(ctx context.Context, e *Env, ns string) {
			GinkgoHelper()
			e.MustKubectl(ctx, append(args, "-n", ns)...)
		}
	}
	return []Step{
		{Name: "create a Redis of 3", Want: convergedState(3), Do: func(ctx context.Context, e *Env, ns string) {
			GinkgoHelper()
			_, err := e.Apply(ctx, RedisManifest(ns, scenarioRedis, 3))
			Expect(err).NotTo(HaveOccurred())
		}},
		{Name: "delete pod cache-1", Want: convergedState(3), Replaced: "cache-1", Do: kubectl("delete", "pod", "cache-1")},
		{Name: "scale to 5", Want: convergedState(5), Do: kubectl("scale", "redis", scenarioRedis, "--replicas=5")},
		{Name: "scale to 2", Want: convergedState(2), Do: kubectl("scale", "redis", scenarioRedis, "--replicas=2")},
		{Name: "delete the Redis", Want: convergedState(-1), Do: kubectl("delete", "redis", scenarioRedis)},
	}
}

// RunScenario runs the steps in namespace ns and, after each, waits until
// the namespace is in the step's state: the same pods, controlled by the
// Redis, none terminating, none left over, the status true; and every pod
// that the step did not delete still the same object. It returns the
// states it saw.
func (e *Env) RunScenario(ctx context.Context, ns string, steps []Step) []State {
	GinkgoHelper()
	var states []State
	before := State{UIDs: map[string]types.UID{}}
	for _, step := range steps {
		By(step.Name)
		step.Do(ctx, e, ns)
		var now State
		Eventually(func(g Gomega) State {
			var err error
			now, err = e.stateOf(ctx, ns, scenarioRedis)
			g.Expect(err).NotTo(HaveOccurred())
			return now.withoutUIDs()
		}).WithContext(ctx).WithTimeout(eventuallyTimeout()+step.Wait).Should(Equal(State{Pods: step.Want.Pods, Status: step.Want.Status}),
			"after %q, the namespace is not as it should be", step.Name)
		for name, uid := range before.UIDs {
			if got, ok := now.UIDs[name]; ok && name != step.Replaced {
				Expect(got).To(Equal(uid), "after %q, pod %s is another object: it was deleted and made again", step.Name, name)
			}
		}
		if step.Replaced != "" {
			Expect(now.UIDs[step.Replaced]).NotTo(Equal(before.UIDs[step.Replaced]), "after %q, pod %s was not replaced", step.Name, step.Replaced)
		}
		states = append(states, now)
		before = now
	}
	return states
}
