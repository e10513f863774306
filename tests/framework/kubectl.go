package framework

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// Kubectl runs the real kubectl against one cluster, the way a learner
// would from a shell.
type Kubectl struct {
	// Path is the kubectl binary: $KUBECTL if set (the Makefile points it at
	// the kubectl built with the local cluster), else kubectl from PATH.
	Path       string
	Kubeconfig string
}

// NewKubectl returns a runner for the cluster behind kubeconfig.
func NewKubectl(kubeconfig string) *Kubectl {
	path := os.Getenv("KUBECTL")
	if path == "" {
		path = "kubectl"
	} else if _, err := os.Stat(path); err != nil {
		path = "kubectl"
	}
	return &Kubectl{Path: path, Kubeconfig: kubeconfig}
}

// Run runs kubectl with args and returns its standard output. The error
// carries standard error, which is where kubectl says what went wrong.
func (k *Kubectl) Run(ctx context.Context, args ...string) (string, error) {
	return k.RunWithInput(ctx, "", args...)
}

// RunWithInput is Run with stdin, for `kubectl apply -f -`.
func (k *Kubectl) RunWithInput(ctx context.Context, stdin string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, k.Path, append([]string{"--kubeconfig", k.Kubeconfig}, args...)...)
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("kubectl %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}
