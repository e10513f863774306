package framework

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"
	. "github.com/onsi/gomega"

	"example.com/redis-operator/chapters"
)

// A suite's specs run in parallel (`ginkgo -p`, or --procs=N): each in
// its own namespace, most of their time spent waiting for the cluster.
// One operator serves them all. Process 1 sets the suite up (the CRD, the
// operator's ServiceAccount, the operator itself) and tears it down after
// every process is done; the other processes only connect to the cluster
// and can read the operator's log, which is a file.
//
// A spec that observes or changes the operator or the cluster as a whole
// must not share them: it counts every reconcile or every write, waits
// for the operator to be idle, stops, signals or redeploys it, restarts
// the API server, or changes the webhook's configuration. Such a spec is
// decorated Serial, and Ginkgo runs it on process 1 after the parallel
// specs, alone. The framework's helpers that do any of this call
// mustBeSerial, so a spec that forgets the decorator fails at once,
// naming the helper, in every run, parallel or not.

// registerSuiteNodes registers a suite's set-up and tear-down: setUp runs
// on process 1 before any spec, connect on every other process after it;
// Teardown runs on process 1 once every process has finished its specs.
func (e *Env) registerSuiteNodes(setUp, connect func(context.Context)) {
	SynchronizedBeforeSuite(func(ctx SpecContext) []byte {
		_ = os.Remove(failedMarker(e.Chapter))
		setUp(ctx)
		return nil
	}, func(ctx SpecContext, _ []byte) {
		if GinkgoParallelProcess() != 1 {
			connect(ctx)
		}
	}, NodeTimeout(SetupTimeout))
	SynchronizedAfterSuite(func() {}, func(ctx SpecContext) { e.Teardown(ctx) }, NodeTimeout(SetupTimeout))
	// Every spec, whether it makes a namespace or not, ends with the death
	// check of the operator under test (death.go). Registered before the
	// spec's own cleanups, it runs after them: a panic while a namespace
	// is deleted is the spec's.
	BeforeEach(func() {
		mark := e.markDeaths()
		DeferCleanup(func(ctx SpecContext) {
			Expect(append(e.exitsUnasked("during the spec"), e.deathsSince(ctx, mark, "during the spec")...)).To(BeEmpty(),
				"the operator under test died or panicked")
		})
	})
}

// mustBeSerial fails the running spec unless it is decorated Serial (see
// above): what is that needs the operator or the cluster to itself. Suite
// nodes (set-up, tear-down) run alone anyway.
func mustBeSerial(what string) {
	GinkgoHelper()
	r := CurrentSpecReport()
	if r.LeafNodeType != types.NodeTypeIt || r.IsSerial {
		return
	}
	Fail(fmt.Sprintf("%s needs the operator and the cluster to itself: decorate the spec, or its container, with Serial", what))
}

// failedMarker is a file that says a spec of this suite failed, on any
// process, so that process 1 collects the cluster's logs at the end.
func failedMarker(chapter int) string {
	return filepath.Join(OutputDir(), "logs", chapters.SuiteName(chapter)+".failed")
}

// markFailed records that a spec failed (see failedMarker).
func markFailed(chapter int) {
	p := failedMarker(chapter)
	_ = os.MkdirAll(filepath.Dir(p), 0o755)
	_ = os.WriteFile(p, nil, 0o644)
}

// anySpecFailed reports whether a spec of this suite failed, on any
// process.
func anySpecFailed(chapter int) bool {
	_, err := os.Stat(failedMarker(chapter))
	return err == nil
}
