package main

import (
	"maps"
	"math"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestPercentile(t *testing.T) {
	samples := []float64{5, 1, 4, 2, 3, 10, 9, 8, 7, 6} // 1..10, unsorted
	for _, tc := range []struct {
		q    float64
		want float64
	}{{.5, 5}, {.9, 9}, {.99, 10}, {1, 10}, {.01, 1}} {
		if got := percentile(samples, tc.q); got != tc.want {
			t.Errorf("percentile(1..10, %v) = %v, want %v (nearest rank)", tc.q, got, tc.want)
		}
	}
	if samples[0] != 5 {
		t.Error("percentile sorted the caller's samples")
	}
	if !math.IsNaN(percentile(nil, .5)) {
		t.Error("percentile of no samples is not NaN")
	}
}

// spread returns 30 samples from base, step apart.
func spread(base, step float64) []float64 {
	s := make([]float64, 30)
	for i := range s {
		s[i] = base + float64(i)*step
	}
	return s
}

func TestExcessBounds(t *testing.T) {
	node := spread(300, 60) // 300 to 2040 ms, as a graceful delete waits for the node
	if b := excessBounds(node, node, .5); b[0] > 0 {
		t.Errorf("excessBounds of equal samples = %v, want at most 0", b)
	}
	shifted := spread(400, 60) // 100 ms above at every quantile, with the same spread
	if b := excessBounds(node, shifted, .9); b[0] > 0 {
		t.Errorf("excessBounds(lower, higher) = %v, want at most 0", b)
	}
	tight, above := spread(10, .1), spread(20, .1) // 10 ms apart, 3 ms spread
	for i, b := range excessBounds(above, tight, .5, .9, .99) {
		if b < 9 || b > 11 {
			t.Errorf("excessBounds(10 ms above), quantile %d = %v, want about 10", i, b)
		}
	}
	if a, b := excessBounds(node, shifted, .5), excessBounds(node, shifted, .5); a[0] != b[0] {
		t.Errorf("excessBounds is not the same twice: %v, then %v", a, b)
	}
	if b := excessBounds(nil, node, .5, .9); len(b) != 2 || !math.IsNaN(b[0]) || !math.IsNaN(b[1]) {
		t.Errorf("excessBounds of no samples = %v, want NaN for each quantile", b)
	}
}

func TestVerdicts(t *testing.T) {
	samples := func(latency, share []float64) *rebuildSamples {
		return &rebuildSamples{LatencyMs: latency, ShareMs: share}
	}
	node := spread(300, 60)
	r := report{
		Config: reportConfig{OldChapter: 5, NewChapter: 7, Objects: 10, Steady: "1m0s"},
		Rebuild: map[string]rebuildSet{
			// 5 ms above at every quantile, where the node's time spreads over 1.7 s: chance.
			"graceful": {"chapter 7": samples(spread(305, 60), spread(3, .1)), sts: samples(node, spread(3, .1))},
			// 10 ms above, with 3 ms of spread: slower. And a share p99 of 21 ms.
			"grace-period=0": {"chapter 7": samples(spread(20, .1), spread(18, .1)), sts: samples(spread(10, .1), spread(3, .1))},
		},
		Converge: map[string]*converge{"chapter 7": {RunningSeconds: 10}, sts: {RunningSeconds: 20}},
		API: map[string]*apiCost{"chapter 7": {
			SteadyRequests: 2, NamespaceDeletion: map[string]float64{"POST 403": 12},
			NamespaceDeletionReconcile: 11, NamespaceDeletionRedis: 11,
		}},
		Memory: map[string]*memory{
			"chapter 7": {IdleHeapMiB: 4, UnrelatedHeapMiB: 4.2},
			"chapter 5": {IdleHeapMiB: 4, UnrelatedHeapMiB: 26},
		},
	}
	got := map[string]bool{}
	for _, v := range r.verdicts() {
		got[v.target] = v.ok
	}
	want := map[string]bool{
		"rebuild p50/p90/p99, graceful, at most the StatefulSet's beyond chance (95% lower bound of the excess at most 0)":          true,
		"rebuild p50/p90/p99, grace-period=0, at most the StatefulSet's beyond chance (95% lower bound of the excess at most 0)":    false,
		"controller's share p99, graceful, under 20 ms":                                                                             true,
		"controller's share p99, grace-period=0, under 20 ms":                                                                       false,
		"10 x 3 pods running in at most half the StatefulSet's time":                                                                true, // 10 s against 20 s
		"steady state: no write, no reconcile, and no request but the 2 informers' watch renewals (at most 2 in 1m0s)":              true,
		"namespace deletion: no refused create retried (no reconcile error, so no requeue; at most one refused POST per reconcile)": false, // 12 refused in 11 reconciles
		"Go heap within 10% with 0 unrelated pods, where chapter 5's grows":                                                         true,
	}
	if !maps.Equal(got, want) {
		t.Errorf("verdicts:\n got %v\nwant %v", got, want)
	}
}

func TestFit(t *testing.T) {
	c := config{}
	if err := c.fit(4000); err != nil || c.objects != 100 || c.apiObjects != 100 {
		t.Errorf("fit(4000) = %d objects, %d API objects, %v; want 100, 100", c.objects, c.apiObjects, err)
	}
	c = config{}
	if err := c.fit(110); err != nil || c.objects != (110-fixedPods)/3 || c.apiObjects != (110-fixedPods)/6 {
		t.Errorf("fit(110) = %d objects, %d API objects, %v; want what 110 pods hold", c.objects, c.apiObjects, err)
	}
	c = config{objects: 1000}
	if err := c.fit(110); err == nil {
		t.Error("BENCH_N=1000 fit a node of 110 pods")
	}
	c = config{}
	if err := c.fit(fixedPods); err == nil {
		t.Error("a cluster with no room for any object was accepted")
	}
}

func TestBackend(t *testing.T) {
	for _, tc := range []struct {
		cluster string
		nodes   []string
		want    string
	}{
		{"kind", []string{"redis-operator-control-plane"}, "kind"},
		{"auto", []string{"hollow-node-1"}, "local"},
		{"", []string{"redis-operator-control-plane"}, "kind"},
		{"", []string{"node-a"}, "existing"},
	} {
		if got := backend(tc.cluster, tc.nodes); got != tc.want {
			t.Errorf("backend(%q, %v) = %q, want %q", tc.cluster, tc.nodes, got, tc.want)
		}
	}
}

func TestTainted(t *testing.T) {
	node := func(taints ...corev1.Taint) *corev1.Node { return &corev1.Node{Spec: corev1.NodeSpec{Taints: taints}} }
	for _, tc := range []struct {
		node *corev1.Node
		want bool
	}{
		{node(), false},
		{node(corev1.Taint{Key: "node.kubernetes.io/not-ready", Effect: corev1.TaintEffectNoSchedule}), false},
		{node(corev1.Taint{Key: "node-role.kubernetes.io/control-plane", Effect: corev1.TaintEffectNoSchedule}), true},
		{node(corev1.Taint{Key: "example.org/busy", Effect: corev1.TaintEffectPreferNoSchedule}), false},
	} {
		if got := tainted(tc.node); got != tc.want {
			t.Errorf("tainted(%v) = %t, want %t", tc.node.Spec.Taints, got, tc.want)
		}
	}
}
