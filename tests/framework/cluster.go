// Package framework is what every chapter's end-to-end suite shares: a
// cluster from a provider, a kubectl runner, the operator as a separate
// process, per-spec namespaces and a failure dump.
package framework

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"example.com/redis-operator/tests/framework/localcluster"
)

// Cluster is the cluster a suite runs against. The suites only need its
// kubeconfig; the provider says where it came from, for the failure dump.
type Cluster struct {
	Provider   string
	Kubeconfig string
	// LogDir holds the cluster components' logs, when the provider has them.
	LogDir string
}

// ClusterFromEnv returns the cluster chosen with CLUSTER:
//
//   - local (default): the cluster `make cluster-up` started on loopback,
//     found through its state directory (LOCAL_CLUSTER_DIR, default
//     _output/local-cluster in the repository);
//   - existing: whatever KUBECONFIG points at.
func ClusterFromEnv(ctx context.Context) (*Cluster, error) {
	provider := os.Getenv("CLUSTER")
	if provider == "" {
		provider = "local"
	}
	switch provider {
	case "local":
		dir := os.Getenv("LOCAL_CLUSTER_DIR")
		if dir == "" {
			dir = filepath.Join(RepoRoot(), "_output", "local-cluster")
		}
		o := localcluster.Options{StateDir: dir}
		if o.Running() == 0 {
			return nil, fmt.Errorf("no local cluster is running in %s: start one with `make cluster-up`, or run the suite with `make test-chapter N`", dir)
		}
		return &Cluster{Provider: provider, Kubeconfig: o.KubeconfigPath(), LogDir: o.LogDir()}, nil
	case "existing":
		kubeconfig := os.Getenv("KUBECONFIG")
		if kubeconfig == "" {
			return nil, fmt.Errorf("CLUSTER=existing needs KUBECONFIG to point at the cluster")
		}
		return &Cluster{Provider: provider, Kubeconfig: kubeconfig}, nil
	default:
		return nil, fmt.Errorf("unknown CLUSTER %q: choose local or existing", provider)
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
