package promtext

import (
	"maps"
	"strings"
	"testing"
)

const exposition = `# TYPE controller_runtime_reconcile_total counter
controller_runtime_reconcile_total{controller="redis",result="success"} 7
controller_runtime_reconcile_total{controller="redis",result="error"} 2
controller_runtime_reconcile_total{controller="other",result="success"} 100
# TYPE controller_runtime_max_concurrent_reconciles gauge
controller_runtime_max_concurrent_reconciles{controller="redis"} 4
`

func TestSum(t *testing.T) {
	m, err := Parse(strings.NewReader(exposition))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		family string
		match  func(map[string]string) bool
		want   float64
	}{
		{"controller_runtime_reconcile_total", Label("controller", "redis"), 9},
		{"controller_runtime_reconcile_total", nil, 109},
		{"controller_runtime_reconcile_total", func(l map[string]string) bool { return l["result"] == "error" }, 2},
		{"controller_runtime_max_concurrent_reconciles", Label("controller", "redis"), 4},
	} {
		got, err := m.Sum(tc.family, tc.match)
		if err != nil || got != tc.want {
			t.Errorf("Sum(%s) = %v, %v; want %v", tc.family, got, err, tc.want)
		}
	}
	if _, err := m.Sum("no_such_family", nil); err == nil {
		t.Error("a family that is not exported summed without an error")
	}
}

func TestSumBy(t *testing.T) {
	m, err := Parse(strings.NewReader(exposition))
	if err != nil {
		t.Fatal(err)
	}
	got, err := m.SumBy("controller_runtime_reconcile_total", "controller", "result")
	want := map[string]float64{"redis success": 7, "redis error": 2, "other success": 100}
	if err != nil || !maps.Equal(got, want) {
		t.Errorf("SumBy(controller, result) = %v, %v; want %v", got, err, want)
	}
	got, err = m.SumBy("controller_runtime_reconcile_total", "result")
	want = map[string]float64{"success": 107, "error": 2}
	if err != nil || !maps.Equal(got, want) {
		t.Errorf("SumBy(result) = %v, %v; want %v", got, err, want)
	}
	if _, err := m.SumBy("no_such_family", "code"); err == nil {
		t.Error("a family that is not exported summed without an error")
	}
}

func TestWrite(t *testing.T) {
	for method, want := range map[string]bool{"POST": true, "PUT": true, "PATCH": true, "DELETE": true, "GET": false, "WATCH": false, "": false} {
		if got := Write(map[string]string{"method": method}); got != want {
			t.Errorf("Write(method=%q) = %t, want %t", method, got, want)
		}
	}
}
