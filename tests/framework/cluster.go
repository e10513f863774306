package framework

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"example.com/redis-operator/internal/cluster"
)

// ClusterFromEnv returns the provider of the cluster chosen with CLUSTER
// (kind, local, existing, or auto: kind when a Docker daemon answers, local
// otherwise), which `make cluster-up` starts; the suites only use it.
func ClusterFromEnv(ctx context.Context) (cluster.Provider, error) {
	name, reason, err := cluster.Choose(ctx, os.Getenv("CLUSTER"))
	if err != nil {
		return nil, err
	}
	opts, err := cluster.OptionsFromEnv(RepoRoot())
	if err != nil {
		return nil, err
	}
	p, err := cluster.New(name, opts)
	if err != nil {
		return nil, err
	}
	if err := p.Check(ctx); err != nil {
		return nil, fmt.Errorf("%w (%s): start one with `make cluster-up CLUSTER=%s`, or run the suite with `make test-chapter N`", err, reason, name)
	}
	return p, nil
}

// OutputDir is where the suites write what they make (the operator's logs
// and credentials, the cluster's logs) and make keeps the cluster's state:
// OUTPUT_DIR, which the Makefile exports, or _output in the repository.
func OutputDir() string {
	dir := os.Getenv("OUTPUT_DIR")
	switch {
	case dir == "":
		return filepath.Join(RepoRoot(), "_output")
	case !filepath.IsAbs(dir):
		return filepath.Join(RepoRoot(), dir)
	}
	return dir
}

// WebhookCertDir is where make deploy keeps the webhook's CA and serving
// certificate (chapter 11 on).
func WebhookCertDir() string {
	return filepath.Join(OutputDir(), "deploy", "certs")
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
