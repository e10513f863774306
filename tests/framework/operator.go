package framework

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"example.com/redis-operator/tests/framework/proc"
)

// Operator is bin/operator running one chapter as a separate process
// against the cluster, exactly as `make run` runs it, with its log kept in a
// file for the failure dump.
type Operator struct {
	Binary      string
	Chapter     int
	Kubeconfig  string
	LogPath     string
	metricsAddr string
	probeAddr   string
	proc        *proc.Process
}

// Start starts the operator and waits until its readiness probe answers.
func (o *Operator) Start(ctx context.Context) error {
	for _, addr := range []*string{&o.metricsAddr, &o.probeAddr} {
		port, err := proc.FreePort()
		if err != nil {
			return err
		}
		*addr = fmt.Sprintf("127.0.0.1:%d", port)
	}
	if err := os.MkdirAll(filepath.Dir(o.LogPath), 0o755); err != nil {
		return err
	}
	logf, err := os.OpenFile(o.LogPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	fmt.Fprintf(logf, "==== %s starting bin/operator --chapter %d\n", time.Now().Format(time.RFC3339), o.Chapter)
	o.proc, err = proc.Start(exec.Command(o.Binary,
		"--chapter", strconv.Itoa(o.Chapter),
		"--kubeconfig", o.Kubeconfig,
		"--metrics-bind-address", o.metricsAddr,
		"--health-probe-bind-address", o.probeAddr,
	), logf)
	if err != nil {
		return err
	}

	deadline := time.Now().Add(60 * time.Second)
	for {
		select {
		case <-o.proc.Done():
			return fmt.Errorf("operator exited during start-up; its log %s ends with:\n%s", o.LogPath, proc.Tail(o.LogPath, 20))
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
		resp, err := http.Get("http://" + o.probeAddr + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("operator not ready after 60s; see %s", o.LogPath)
		}
	}
}

// Running reports whether the operator process is alive.
func (o *Operator) Running() bool { return o.proc != nil && o.proc.Running() }

// Stop stops the operator gracefully and waits for it to exit.
func (o *Operator) Stop() error {
	if o.proc != nil {
		o.proc.Stop(30 * time.Second)
	}
	return nil
}

// ReconcileTotal reads controller_runtime_reconcile_total for the "redis"
// controller from the operator's metrics endpoint, summed over results.
// It counts every Reconcile call, so a spec can observe from outside
// whether an event made the operator reconcile.
func (o *Operator) ReconcileTotal() (float64, error) {
	resp, err := http.Get("http://" + o.metricsAddr + "/metrics")
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		return 0, fmt.Errorf("parsing metrics: %w", err)
	}
	family, ok := families["controller_runtime_reconcile_total"]
	if !ok {
		return 0, fmt.Errorf("controller_runtime_reconcile_total not exported")
	}
	var total float64
	for _, m := range family.GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == "controller" && l.GetValue() == "redis" {
				total += m.GetCounter().GetValue()
			}
		}
	}
	return total, nil
}
