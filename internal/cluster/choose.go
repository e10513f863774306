// Package cluster is the test cluster, behind one interface for every
// backend: bin/cluster (what `make cluster-up` runs) and the suites choose a
// Provider once, from CLUSTER, and never switch on the backend's name again.
package cluster

import (
	"context"
	"fmt"

	"example.com/redis-operator/internal/cluster/kindcluster"
)

// The backends.
const (
	Kind     = "kind"     // a kind cluster (Docker)
	Local    = "local"    // the no-Docker cluster on loopback
	Envtest  = "envtest"  // an API server alone, as envtest starts it
	Existing = "existing" // whatever KUBECONFIG points at
)

// Choose resolves requested (the value of CLUSTER). kind, local and
// existing are taken as they are; empty or "auto" means kind when a Docker
// daemon answers, local otherwise. The reason says why, for the user.
func Choose(ctx context.Context, requested string) (name, reason string, err error) {
	switch requested {
	case Kind, Local, Envtest, Existing:
		return requested, "CLUSTER=" + requested, nil
	case "", "auto":
		version, err := kindcluster.DockerAnswers(ctx)
		if err != nil {
			return Local, fmt.Sprintf("%v; CLUSTER=kind once Docker runs", err), nil
		}
		return Kind, fmt.Sprintf("Docker %s answers; CLUSTER=local for the cluster without Docker", version), nil
	default:
		return "", "", fmt.Errorf("unknown CLUSTER %q: choose kind, local, envtest, existing or auto (the default)", requested)
	}
}
