package proc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"example.com/redis-operator/chapters"
)

// OperatorOptions is how to run bin/operator.
type OperatorOptions struct {
	Binary string
	// Chapter is the course's chapter to run, passed in the environment
	// (OPERATOR_CHAPTER): a chapter's own project, which runs that chapter
	// alone, ignores it.
	Chapter    int
	Kubeconfig string
	// LogPath is the file its output is appended to; its directory is
	// created.
	LogPath string
	// Args are more flags, after the ones StartOperator sets.
	Args []string
	// Env is more environment, after OPERATOR_CHAPTER.
	Env []string
}

// Operator is bin/operator running one chapter, with its metrics and
// health endpoints on free loopback ports.
type Operator struct {
	*Process
	// Args are the flags it was started with.
	Args []string
	// MetricsURL is its Prometheus endpoint.
	MetricsURL string
	// ProbeAddr is where its health probes answer (host:port).
	ProbeAddr string
}

// startTimeout bounds how long the operator may take to become ready.
const startTimeout = time.Minute

var httpClient = &http.Client{Timeout: 5 * time.Second}

// StartOperator starts the operator as `make run` does, with the chapter,
// the kubeconfig and free ports for its metrics and probes, and waits
// until its readiness probe answers and its metrics port accepts a
// connection. When it exits or is not ready in a minute, the error ends
// with the end of its log; it is stopped then. An operator that exits
// during start-up because a port was taken before it bound it (FreePort's
// ports are free when picked, and another caller may pick the same one)
// is started again on other ports, portTries times at most.
func StartOperator(ctx context.Context, o OperatorOptions) (*Operator, error) {
	if err := os.MkdirAll(filepath.Dir(o.LogPath), 0o755); err != nil {
		return nil, err
	}
	for try := 1; ; try++ {
		op, err := startOperator(ctx, o)
		if err == nil || !errors.Is(err, errPortTaken) || try == portTries {
			return op, err
		}
	}
}

// portTries bounds how often StartOperator picks new ports for one start.
const portTries = 3

// errPortTaken: the operator exited during start-up because one of its
// ports was in use.
var errPortTaken = errors.New("a port was taken before the operator bound it")

func startOperator(ctx context.Context, o OperatorOptions) (*Operator, error) {
	var addrs [2]string
	for i := range addrs {
		port, err := FreePort()
		if err != nil {
			return nil, err
		}
		addrs[i] = "127.0.0.1:" + strconv.Itoa(port)
	}
	logf, err := os.OpenFile(o.LogPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	args := append([]string{
		"--kubeconfig", o.Kubeconfig,
		"--metrics-bind-address", addrs[0],
		"--health-probe-bind-address", addrs[1],
	}, o.Args...)
	env := append([]string{chapters.EnvChapter + "=" + strconv.Itoa(o.Chapter)}, o.Env...)
	fmt.Fprintf(logf, "==== %s starting %s bin/%s %s\n", time.Now().Format(time.RFC3339), strings.Join(env, " "), filepath.Base(o.Binary), strings.Join(args, " "))
	cmd := exec.Command(o.Binary, args...)
	cmd.Env = append(os.Environ(), env...)
	p, err := Start(cmd, logf)
	if err != nil {
		return nil, err
	}
	op := &Operator{Process: p, Args: args, MetricsURL: "http://" + addrs[0] + "/metrics", ProbeAddr: addrs[1]}

	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, startTimeout, true, func(ctx context.Context) (bool, error) {
		if !p.Running() {
			tail := Tail(o.LogPath, 20)
			if strings.Contains(tail, "address already in use") {
				return false, fmt.Errorf("%w; its log %s ends with:\n%s", errPortTaken, o.LogPath, tail)
			}
			return false, fmt.Errorf("operator exited during start-up; its log %s ends with:\n%s", o.LogPath, tail)
		}
		return op.get(ctx, "/readyz") == nil && listens(addrs[0]), nil
	})
	if err != nil && p.Running() {
		_ = p.Stop(10 * time.Second) // not ready: how it stops adds nothing
		if ctx.Err() == nil {
			err = fmt.Errorf("operator not ready after %s (%w); its log %s ends with:\n%s", startTimeout, err, o.LogPath, Tail(o.LogPath, 20))
		}
	}
	if err != nil {
		return nil, err
	}
	if speaksHTTPS(ctx, op.MetricsURL) {
		op.MetricsURL = "https://" + addrs[0] + "/metrics"
	}
	return op, nil
}

// speaksHTTPS says whether the server at url (http://) answers in TLS:
// Go's HTTP server answers a plain request on a TLS port with 400 and
// says so. From chapter 10 on, the operator serves its metrics over HTTPS
// (to callers the API server authenticates and authorizes).
func speaksHTTPS(ctx context.Context, url string) bool {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return false
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	return resp.StatusCode == http.StatusBadRequest && strings.Contains(string(body), "HTTPS server")
}

// listens says whether something accepts a TCP connection on addr.
func listens(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return false
	}
	_ = c.Close()
	return true
}

// Live asks the operator's liveness probe, /healthz, as a kubelet would,
// and wants 200 OK.
func (o *Operator) Live(ctx context.Context) error { return o.get(ctx, "/healthz") }

// get asks the operator's probe endpoint for path and wants 200 OK.
func (o *Operator) get(ctx context.Context, path string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+o.ProbeAddr+path, nil)
	if err != nil {
		return err
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", path, resp.Status)
	}
	return nil
}
