// Package framework is what every chapter's end-to-end suite shares: a
// cluster from a provider, a kubectl runner, the operator as a separate
// process, per-spec namespaces and a failure dump.
package framework

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"example.com/redis-operator/tests/framework/clusters"
	"example.com/redis-operator/tests/framework/kindcluster"
	"example.com/redis-operator/tests/framework/localcluster"
)

// Cluster is the cluster a suite runs against. The suites only need its
// kubeconfig; the provider says where it came from, for the failure dump.
type Cluster struct {
	Provider   string
	Kubeconfig string
	// LogDir holds the cluster components' logs, when the provider has them.
	LogDir string
	// ExportLogs, when the provider has it, writes the cluster's logs under
	// dir and returns the directory whose *.log files matter most.
	ExportLogs func(dir string) (string, error)
}

// ClusterFromEnv returns the cluster chosen with CLUSTER, which
// `make cluster-up` starts:
//
//   - kind: the kind cluster named KIND_CLUSTER_NAME (default
//     redis-operator), its kubeconfig in KIND_CLUSTER_DIR (default
//     _output/kind-cluster in the repository);
//   - local: the cluster on loopback, found through its state directory
//     (LOCAL_CLUSTER_DIR, default _output/local-cluster);
//   - existing: whatever KUBECONFIG points at;
//   - auto or empty: kind when a Docker daemon answers, local otherwise.
func ClusterFromEnv(ctx context.Context) (*Cluster, error) {
	provider, reason, err := clusters.Choose(ctx, os.Getenv("CLUSTER"))
	if err != nil {
		return nil, err
	}
	start := "start one with `make cluster-up CLUSTER=" + provider + "`, or run the suite with `make test-chapter N`"
	switch provider {
	case clusters.Kind:
		o, err := kindcluster.OptionsFromEnv(filepath.Join(RepoRoot(), "_output", "kind-cluster"))
		if err != nil {
			return nil, err
		}
		exists, err := kindcluster.Exists(o)
		if err != nil {
			return nil, err
		}
		if _, statErr := os.Stat(o.KubeconfigPath()); !exists || statErr != nil {
			return nil, fmt.Errorf("no kind cluster %q with a kubeconfig in %s (%s): %s", o.Name, o.StateDir, reason, start)
		}
		return &Cluster{
			Provider:   provider,
			Kubeconfig: o.KubeconfigPath(),
			ExportLogs: func(dir string) (string, error) { return kindcluster.ExportLogs(o, dir) },
		}, nil
	case clusters.Local:
		dir := os.Getenv("LOCAL_CLUSTER_DIR")
		if dir == "" {
			dir = filepath.Join(RepoRoot(), "_output", "local-cluster")
		}
		o := localcluster.Options{StateDir: dir}
		if o.Running() == 0 {
			return nil, fmt.Errorf("no local cluster is running in %s (%s): %s", dir, reason, start)
		}
		return &Cluster{Provider: provider, Kubeconfig: o.KubeconfigPath(), LogDir: o.LogDir()}, nil
	default: // existing
		kubeconfig := os.Getenv("KUBECONFIG")
		if kubeconfig == "" {
			return nil, fmt.Errorf("CLUSTER=existing needs KUBECONFIG to point at the cluster")
		}
		return &Cluster{Provider: provider, Kubeconfig: kubeconfig}, nil
	}
}

// RepoRoot is the directory that holds go.mod, found from the working
// directory (Ginkgo runs each suite in its own package directory).
func RepoRoot() string {
	dir, err := os.Getwd()
	if err != nil {
		panic(err)
	}
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d
		}
		if filepath.Dir(d) == d {
			panic("go.mod not found above " + dir)
		}
	}
}
