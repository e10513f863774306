package framework

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"

	"example.com/redis-operator/tests/framework/proc"
)

// Dump adds what someone debugging a failed spec wants first to the spec's
// report: the operator's log, the namespace's events, `kubectl describe`
// of the Redis objects and pods, and the tail of the cluster components'
// logs where they are files (the local cluster). A cluster whose logs must
// be exported (kind) is exported once, when the suite ends, by
// ExportClusterLogs.
func (e *Env) Dump(ctx context.Context, ns string) {
	e.failed = true
	AddReportEntry("operator log (last 150 lines of "+e.Operator.LogPath+")", proc.Tail(e.Operator.LogPath, 150))
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
	if e.Cluster.LogDir != "" {
		tailLogs(e.Cluster.LogDir)
	}
}

// ExportClusterLogs exports the cluster's logs once, after a suite in
// which a spec failed, to _output/cluster-logs/chapterNN, and reports the
// tails of the files that matter most.
func (e *Env) ExportClusterLogs() {
	if !e.failed || e.Cluster == nil || e.Cluster.ExportLogs == nil {
		return
	}
	dir := filepath.Join(RepoRoot(), "_output", "cluster-logs", fmt.Sprintf("chapter%02d", e.Chapter))
	logDir, err := e.Cluster.ExportLogs(dir)
	if err != nil {
		AddReportEntry("exporting the cluster's logs", err.Error())
	}
	AddReportEntry("cluster logs", "all of them in "+dir)
	if logDir != "" {
		tailLogs(logDir)
	}
}

func tailLogs(dir string) {
	files, _ := filepath.Glob(filepath.Join(dir, "*.log")) // sorted by name
	for _, l := range files {
		AddReportEntry(fmt.Sprintf("%s (last 30 lines)", filepath.Base(l)), proc.Tail(l, 30))
	}
}
