package framework

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"

	"example.com/redis-operator/chapters"
	"example.com/redis-operator/internal/proc"
)

// Dump adds what someone debugging a failed spec wants first to the spec's
// report: the operator's log, the namespace's events, and `kubectl
// describe` of the Redis objects and pods; only the log when make
// prove-chapter expects the run to fail (E2E_EXPECT_FAILURE: a red run, a
// mutant's), where the failure is the point and the rest costs CPU. The
// cluster's own logs are collected once, when the suite ends
// (CollectClusterLogs), but not then either.
func (e *Env) Dump(ctx context.Context, ns string) {
	markFailed(e.Chapter)
	if e.Operator != nil {
		AddReportEntry("operator log (last 150 lines of "+e.Operator.LogPath+")", proc.Tail(e.Operator.LogPath, 150))
	}
	if expectFailure() {
		AddReportEntry("kubectl's dumps", "skipped: make prove-chapter expects this run's specs to fail (E2E_EXPECT_FAILURE)")
		return
	}
	if e.deployed != nil {
		e.deployed.dump(ctx)
	}
	for _, args := range [][]string{
		{"events", "-n", ns},
		{"describe", "redis", "-n", ns},
		{"describe", "pods", "-n", ns},
	} {
		out, err := e.Kubectl.Run(ctx, args...)
		if err != nil {
			out += "\n" + err.Error()
		}
		AddReportEntry("kubectl "+strings.Join(args, " "), out)
	}
}

// CollectClusterLogs collects the cluster's logs once, after a suite in
// which a spec failed (kind's are exported to OutputDir()/cluster-logs/
// chapterNN; the local cluster's are files already), and reports the
// tails of the files that matter most.
func (e *Env) CollectClusterLogs(ctx context.Context) {
	if !anySpecFailed(e.Chapter) || e.Cluster == nil || expectFailure() {
		return
	}
	dir := filepath.Join(OutputDir(), "cluster-logs", chapters.SuiteName(e.Chapter))
	logDir, err := e.Cluster.CollectLogs(ctx, dir)
	if err != nil {
		AddReportEntry("collecting the cluster's logs", err.Error())
	}
	if logDir == "" {
		return
	}
	AddReportEntry("cluster logs", "all of them in "+logDir)
	files, _ := filepath.Glob(filepath.Join(logDir, "*.log")) // sorted by name
	for _, l := range files {
		AddReportEntry(fmt.Sprintf("%s (last 30 lines)", filepath.Base(l)), proc.Tail(l, 30))
	}
}

// expectFailure: make prove-chapter runs this suite expecting its specs
// to fail (E2E_EXPECT_FAILURE), a red run or a mutant's.
func expectFailure() bool { return os.Getenv(chapters.EnvExpectFailure) == "true" }
