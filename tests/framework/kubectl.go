package framework

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"

	. "github.com/onsi/ginkgo/v2"
)

// Kubectl runs the real kubectl against one cluster, the way a learner
// would from a shell. Every command line goes to GinkgoWriter, so the
// report shows what a spec did.
type Kubectl struct {
	// Path is the kubectl built at the cluster's version ($KUBECTL, which
	// the Makefile sets).
	Path       string
	Kubeconfig string
}

// NewKubectl returns a runner for the cluster behind kubeconfig, with the
// kubectl that $KUBECTL names. A kubectl of another version than the
// cluster's is not silently taken from PATH instead.
func NewKubectl(kubeconfig string) (*Kubectl, error) {
	path := os.Getenv("KUBECTL")
	if path == "" {
		return nil, fmt.Errorf("KUBECTL is not set: run the suites with `make test-chapter N`, which builds kubectl at the cluster's version (`make kubectl`) and sets it")
	}
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("KUBECTL=%s: %w; `make kubectl` builds it", path, err)
	}
	return &Kubectl{Path: path, Kubeconfig: kubeconfig}, nil
}

// Run runs kubectl with args and returns its standard output. The error
// carries standard error, which is where kubectl says what went wrong.
func (k *Kubectl) Run(ctx context.Context, args ...string) (string, error) {
	return k.RunWithInput(ctx, "", args...)
}

// RunWithInput is Run with stdin, for `kubectl apply -f -`.
func (k *Kubectl) RunWithInput(ctx context.Context, stdin string, args ...string) (string, error) {
	stdout, _, err := k.Output(ctx, stdin, args...)
	return stdout, err
}

// Output is RunWithInput that also returns standard error, where kubectl
// prints the warnings the API server sent ("Warning: ...") when it
// succeeds.
func (k *Kubectl) Output(ctx context.Context, stdin string, args ...string) (string, string, error) {
	GinkgoWriter.Printf("$ kubectl %s\n", strings.Join(args, " "))
	cmd := exec.CommandContext(ctx, k.Path, append([]string{"--kubeconfig", k.Kubeconfig}, args...)...)
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), stderr.String(), fmt.Errorf("kubectl %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), stderr.String(), nil
}
