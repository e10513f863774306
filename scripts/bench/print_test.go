package main

import (
	"math"
	"testing"
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
