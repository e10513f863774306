package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"runtime"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// describe says what the bench runs on: this machine's CPU and memory and
// the cluster's nodes, how many more pods they have room for, and which
// backend it is.
func describe(ctx context.Context, cs kubernetes.Interface) (machine, error) {
	m := machine{
		CPU: procField("/proc/cpuinfo", "model name"), CPUs: runtime.NumCPU(),
		OS: runtime.GOOS, Arch: runtime.GOARCH, Go: runtime.Version(),
		Date: time.Now().UTC().Format(time.RFC3339),
	}
	var kb float64
	if _, err := fmt.Sscan(procField("/proc/meminfo", "MemTotal"), &kb); err == nil {
		m.MemoryGiB = kb / (1 << 20)
	}
	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return m, fmt.Errorf("listing the nodes: %w", err)
	}
	counted := map[string]bool{}
	for _, n := range nodes.Items {
		m.Nodes = append(m.Nodes, n.Name)
		if !n.Spec.Unschedulable && !tainted(&n) {
			m.PodSlots += int(n.Status.Allocatable.Pods().Value())
			counted[n.Name] = true
		}
	}
	// What runs already takes room: the cluster's own pods (kind's node
	// runs about ten), not an earlier bench run's, which go first.
	pods, err := cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName!="})
	if err != nil {
		return m, fmt.Errorf("listing the pods: %w", err)
	}
	for _, p := range pods.Items {
		ended := p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
		if counted[p.Spec.NodeName] && !ended && !strings.HasPrefix(p.Namespace, "bench-") {
			m.PodSlots--
		}
	}
	m.Cluster = backend(os.Getenv("CLUSTER"), m.Nodes)
	return m, nil
}

// backend names the cluster: the backend make resolved, or one guessed
// from the node names when make did not say.
func backend(cluster string, nodes []string) string {
	if cluster != "" && cluster != "auto" {
		return cluster
	}
	for _, n := range nodes {
		switch {
		case strings.HasPrefix(n, "hollow-node"):
			return "local"
		case strings.HasSuffix(n, "-control-plane"):
			return "kind"
		}
	}
	return "existing"
}

// tainted reports whether a node keeps ordinary pods away for good. The
// node lifecycle controller's taints (node.kubernetes.io/not-ready and
// the like) come and go with the node's conditions: a node that has just
// joined still has one.
func tainted(n *corev1.Node) bool {
	for _, t := range n.Spec.Taints {
		lifecycle := strings.HasPrefix(t.Key, "node.kubernetes.io/")
		if !lifecycle && (t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute) {
			return true
		}
	}
	return false
}

// procField reads "name : value" from a /proc file; "" when missing.
func procField(path, name string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == name {
			return strings.TrimSuffix(strings.TrimSpace(v), " kB")
		}
	}
	return ""
}
