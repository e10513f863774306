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
// of the Redis objects and pods, and the tail of the cluster's logs (for
// kind, exported into _output/cluster-logs/<namespace> first).
func (e *Env) Dump(ctx context.Context, ns string) {
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
	logDir := e.Cluster.LogDir
	if e.Cluster.ExportLogs != nil {
		dir := filepath.Join(RepoRoot(), "_output", "cluster-logs", ns)
		var err error
		if logDir, err = e.Cluster.ExportLogs(dir); err != nil {
			AddReportEntry("exporting the cluster's logs", err.Error())
		}
		AddReportEntry("cluster logs", "all of them in "+dir)
	}
	if logDir == "" {
		return
	}
	files, _ := filepath.Glob(filepath.Join(logDir, "*.log")) // sorted by name
	for _, l := range files {
		AddReportEntry(fmt.Sprintf("%s (last 30 lines)", filepath.Base(l)), proc.Tail(l, 30))
	}
}
