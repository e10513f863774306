package framework

import (
	"context"
	"encoding/json"
	"fmt"
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
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"example.com/redis-operator/operator/faults"
)

// The scenario that the fault chapters' suites (12 to 14) run, a user's
// day with a Redis, and the state a namespace must reach after each of
// its steps: what a run with a fault is compared with.

// CountWrites is the environment of an operator that logs its writes and
// injects no fault.
var CountWrites = []string{faults.EnvCrashAfterWrite + "=0"}

// WritesIn keeps the writes to the objects of namespace ns: an earlier
// spec's namespace may still be going, its Redis reconciled by the same
// operator, and its writes are not this spec's.
func WritesIn(ns string, writes []faults.Write) []faults.Write {
	return slices.DeleteFunc(writes, func(w faults.Write) bool { return !strings.HasPrefix(w.Object, ns+"/") })
}

// StartSupervised starts the operator under Operator.StartSupervised,
// and stops it when the spec ends, whatever happened. In a suite whose
// operator runs between specs (on the host, the shipped chapter's), it
// stops that one first; the cleanup of the spec's namespace starts it
// again.
func (e *Env) StartSupervised(ctx context.Context, vars, restartVars []string) error {
	if !e.specsRunOperator && e.Operator.Running() {
		if err := e.Operator.Stop(); err != nil {
			return err
		}
	}
	if err := e.Operator.StartSupervised(ctx, vars, restartVars); err != nil {
		return err
	}
	DeferCleanup(e.Operator.Stop)
	return nil
}

// State is what a namespace holds when a step of a scenario is over: every
// pod in it (whoever made it), and the Redis' status, in words that two
// runs of the same scenario can compare.
type State struct {
	Pods   []string
	Status string
	// Details is the rest of what the operator wrote there, which a step's
	// Want does not say but a user sees: each pod's labels, annotations,
	// owner references, finalizers and whole spec (podSpecAsWritten); the
	// Redis' labels, finalizers, selector and conditions with their
	// reasons and messages. The crash sweep compares it with the clean
	// run's, step by step. Not the events: the operator records one after
	// its write, best effort, and a crash between the two loses it, as
	// any crash of any controller does.
	Details []string `json:"-"`
	// UIDs are the pods' UIDs, which a second run does not share: not
	// compared, but checked between the steps of one run.
	UIDs map[string]types.UID `json:"-"`
}

// WithoutUIDs is s as a step's Want says it.
func (s State) WithoutUIDs() State { return State{Pods: s.Pods, Status: s.Status} }

// StateOf reads the State of namespace ns, whose Redis is named redis.
func (e *Env) StateOf(ctx context.Context, ns, redis string) (State, error) {
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
		var conditions []string
		for _, c := range r.Status.Conditions {
			conditions = append(conditions, fmt.Sprintf("%s %s %s %q", c.Type, c.Status, c.Reason, c.Message))
		}
		slices.Sort(conditions)
		s.Details = append(s.Details, fmt.Sprintf("Redis %s: labels %v, finalizers %v, selector %q, conditions %v",
			r.Name, r.Labels, r.Finalizers, r.Status.Selector, conditions))
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
		var images, owners []string
		for _, c := range p.Spec.Containers {
			images = append(images, c.Name+"="+c.Image)
		}
		for _, o := range p.OwnerReferences {
			owners = append(owners, fmt.Sprintf("%s %s %s controller=%t blockOwnerDeletion=%t", o.APIVersion, o.Kind, o.Name,
				ptr.Deref(o.Controller, false), ptr.Deref(o.BlockOwnerDeletion, false)))
		}
		spec, err := podSpecAsWritten(p.Spec)
		if err != nil {
			return s, err
		}
		s.Details = append(s.Details, fmt.Sprintf("pod %s: labels %v, annotations %v, images %v, owners %v, finalizers %v, spec %s",
			p.Name, p.Labels, p.Annotations, images, owners, p.Finalizers, spec))
	}
	slices.Sort(s.Pods)
	slices.Sort(s.Details)
	return s, nil
}

// podSpecAsWritten is a pod's spec as JSON, with what differs from one run
// of the same scenario to the next taken out: the node the scheduler
// chose, and the projected ServiceAccount token's volume, whose name the
// API server makes up (kube-api-access-xxxxx), and its mounts. What stays
// is what the operator wrote, with the API server's defaults, which are
// the same every time.
func podSpecAsWritten(spec corev1.PodSpec) (string, error) {
	spec = *spec.DeepCopy()
	spec.NodeName = ""
	generated := func(name string) bool { return strings.HasPrefix(name, "kube-api-access-") }
	spec.Volumes = slices.DeleteFunc(spec.Volumes, func(v corev1.Volume) bool { return generated(v.Name) })
	for _, cs := range [][]corev1.Container{spec.InitContainers, spec.Containers} {
		for i := range cs {
			cs[i].VolumeMounts = slices.DeleteFunc(cs[i].VolumeMounts, func(m corev1.VolumeMount) bool { return generated(m.Name) })
		}
	}
	data, err := json.Marshal(spec)
	return string(data), err
}

// ConvergedState is the State of the scenario's Redis with n pods that
// all run, as the operator should leave it; n < 0 is the Redis deleted and
// its pods gone.
func ConvergedState(n int) State {
	const redis = ScenarioRedis
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
	Do   func(ctx context.Context, ns string) error
	// Want is the state after the step, once the operator is done.
	Want State
	// Replaced is the pod the step deletes, which comes back with a new
	// UID; every other pod that the step does not remove keeps its UID.
	Replaced string
	// Wait is how much longer than the suite's Eventually timeout the step
	// may take, e.g. for a Lease to expire first.
	Wait time.Duration
}

// ScenarioRedis is the Redis that Scenario makes.
const ScenarioRedis = "cache"

// Scenario is what the fault specs run, a user's day with a Redis: create
// it with 3 pods, delete one, scale to 5, scale to 2, delete the Redis.
func (e *Env) Scenario() []Step {
	kubectl := func(args ...string) func(context.Context, string) error {
		return func(ctx context.Context, ns string) error {
			_, err := e.Kubectl.Run(ctx, append(args, "-n", ns)...)
			return err
		}
	}
	return []Step{
		{Name: "create a Redis of 3", Want: ConvergedState(3), Do: func(ctx context.Context, ns string) error {
			_, err := e.Apply(ctx, RedisManifest(ns, ScenarioRedis, 3))
			return err
		}},
		{Name: "delete pod cache-1", Want: ConvergedState(3), Replaced: "cache-1", Do: kubectl("delete", "pod", "cache-1")},
		{Name: "scale to 5", Want: ConvergedState(5), Do: kubectl("scale", "redis", ScenarioRedis, "--replicas=5")},
		{Name: "scale to 2", Want: ConvergedState(2), Do: kubectl("scale", "redis", ScenarioRedis, "--replicas=2")},
		{Name: "delete the Redis", Want: ConvergedState(-1), Do: kubectl("delete", "redis", ScenarioRedis)},
	}
}

// RunScenario runs the steps in namespace ns and, after each, waits until
// the namespace is in the step's state: the same pods, controlled by the
// Redis, none terminating, none left over, the status true; and every pod
// that the step did not delete still the same object. It returns the
// states it saw. Each step's state is a deciding check of its own; what
// the step does (kubectl's command) is not.
func (e *Env) RunScenario(ctx context.Context, ns string, steps []Step) []State {
	GinkgoHelper()
	return e.runScenario(ctx, Default, func(step string) { By(step) }, DecidingCheck, ns, steps)
}

// RunScenarioWith is RunScenario asserting with g, each step said with
// say, for a goroutine other than the spec's: its failures are what g
// makes of them, no deciding check's.
func (e *Env) RunScenarioWith(ctx context.Context, g Gomega, say func(step string), ns string, steps []Step) []State {
	return e.runScenario(ctx, g, say, func(_ string, check func()) { check() }, ns, steps)
}

func (e *Env) runScenario(ctx context.Context, g Gomega, say func(step string), decide func(what string, check func()), ns string, steps []Step) []State {
	var states []State
	before := State{UIDs: map[string]types.UID{}}
	for _, step := range steps {
		say(step.Name)
		g.Expect(step.Do(ctx, ns)).To(Succeed(), "%s", step.Name)
		var now State
		decide(fmt.Sprintf("after %q, the namespace is as the step wants, and the pods it did not replace are the same objects", step.Name), func() {
			g.Eventually(func(g Gomega) State {
				var err error
				now, err = e.StateOf(ctx, ns, ScenarioRedis)
				g.Expect(err).NotTo(HaveOccurred())
				return now.WithoutUIDs()
			}).WithContext(ctx).WithTimeout(EventuallyTimeout()+step.Wait).Should(Equal(State{Pods: step.Want.Pods, Status: step.Want.Status}),
				"after %q, the namespace is not as it should be", step.Name)
			for name, uid := range before.UIDs {
				if got, ok := now.UIDs[name]; ok && name != step.Replaced {
					g.Expect(got).To(Equal(uid), "after %q, pod %s is another object: it was deleted and made again", step.Name, name)
				}
			}
			if step.Replaced != "" {
				g.Expect(now.UIDs[step.Replaced]).NotTo(Equal(before.UIDs[step.Replaced]), "after %q, pod %s was not replaced", step.Name, step.Replaced)
			}
		})
		states = append(states, now)
		before = now
	}
	return states
}
