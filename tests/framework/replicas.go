package framework

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"example.com/redis-operator/chapters"
)

// What controller-runtime logs when a replica becomes the leader
// (AcquiredLease), and while it waits to (StandbyMessage).
const (
	AcquiredLease  = "Successfully acquired lease"
	StandbyMessage = "Attempting to acquire leader lease"
)

// Replicas is several replicas of the suite's operator running at once on
// the host, each a process of its own (an Operator): its own log, its own
// metrics and probe ports, its own identity wherever it takes part (a
// Lease's holder is its host name and a random suffix), and its own Stop,
// Kill and death check. What one does is in its log, so a spec can read
// which replica did what. A spec that starts them is Serial: they compete
// with the suite's operator, if one runs, for every object.
type Replicas struct {
	All []*Operator
}

// StartReplicas starts n replicas of the suite's operator, its binary,
// chapter, credentials and environment, each with args added to its
// flags, one after the other, each once it is ready. The spec's cleanup
// stops them, then fails the spec if any of them panicked, raced or
// exited without being asked to (Stop, Kill), naming each.
func (e *Env) StartReplicas(ctx context.Context, n int, args ...string) *Replicas {
	GinkgoHelper()
	mustBeSerial("starting replicas of the operator")
	Expect(e.Operator).NotTo(BeNil(), "the suite runs no operator on the host to start replicas of")
	rs := &Replicas{}
	DeferCleanup(func(ctx SpecContext) {
		deaths := rs.Deaths("during the spec")
		for _, r := range rs.All {
			Expect(r.Stop()).To(Succeed(), "stopping %s", r.Name)
		}
		Expect(deaths).To(BeEmpty(), "a replica of the operator died or panicked")
	})
	for i := range n {
		r := &Operator{
			Name:   fmt.Sprintf("replica-%d", i),
			Binary: e.Operator.Binary, Chapter: e.Operator.Chapter, Kubeconfig: e.Operator.Kubeconfig,
			LogPath: strings.TrimSuffix(e.Operator.LogPath, ".log") + fmt.Sprintf(".replica-%d.log", i),
			Env:     slices.Clone(e.Operator.Env), Args: append(slices.Clone(e.Operator.Args), args...),
			metricsToken: e.Operator.metricsToken,
		}
		_ = os.Remove(r.LogPath)
		By(fmt.Sprintf("starting %s of the chapter %d operator (log: %s)", r.Name, r.Chapter, r.LogPath))
		Expect(r.Start(ctx)).To(Succeed(), "starting %s", r.Name)
		rs.All = append(rs.All, r)
	}
	return rs
}

// Running lists the replicas whose process runs, in order.
func (rs *Replicas) Running() []*Operator {
	var running []*Operator
	for _, r := range rs.All {
		if r.Running() {
			running = append(running, r)
		}
	}
	return running
}

// Logged lists the replicas whose log holds text, in order.
func (rs *Replicas) Logged(text string) []*Operator {
	var logged []*Operator
	for _, r := range rs.All {
		if strings.Contains(r.LogSince(0), text) {
			logged = append(logged, r)
		}
	}
	return logged
}

// Deaths says, for each replica that panicked, raced, or exited without
// being asked to, how (when says what the logs cover); empty if none did.
func (rs *Replicas) Deaths(when string) []string {
	var deaths []string
	for _, r := range rs.All {
		for _, d := range []string{r.deathSince(0, when), r.exitedUnasked(when)} {
			if d != "" {
				deaths = append(deaths, d)
			}
		}
	}
	return deaths
}

// NewReplicasSuite registers the set-up and tear-down of a suite of the
// framework's own, not a chapter's, about several replicas of chapter n's
// operator: the cluster, the CRD, the operator built and given its
// ServiceAccount, and none started, for its specs to start replicas of
// (StartReplicas). description names the suite's report.
func NewReplicasSuite(chapter int, description string) *Env {
	env := &Env{Chapter: chapter, specsRunOperator: true, suite: chapters.Suite{Number: chapter}, description: description}
	env.registerSuiteNodes(func(ctx context.Context) {
		env.prepareOperator(ctx)
		env.Operator.Env = []string{"ENABLE_WEBHOOKS=false"}
	}, env.connectToHostOperator)
	return env
}
