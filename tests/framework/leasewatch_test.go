package framework

import (
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestLeaseHandover(t *testing.T) {
	t0 := time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC)
	at := func(s float64) *metav1.MicroTime {
		return &metav1.MicroTime{Time: t0.Add(time.Duration(s * float64(time.Second)))}
	}
	state := func(holder string, acquired, renewed float64) coordinationv1.LeaseSpec {
		return coordinationv1.LeaseSpec{HolderIdentity: &holder, AcquireTime: at(acquired), RenewTime: at(renewed)}
	}
	tests := []struct {
		name   string
		states []coordinationv1.LeaseSpec
		want   Handover
		err    string
	}{{
		name:   "released, then taken",
		states: []coordinationv1.LeaseSpec{state("a", 0, 10), state("a", 0, 12), state("", 13, 13), state("b", 15.5, 15.5)},
		want:   Handover{Released: true, From: at(13).Time, NewHolder: "b", Acquired: at(15.5).Time},
	}, {
		name:   "expired, then taken: from the last renewal",
		states: []coordinationv1.LeaseSpec{state("a", 0, 10), state("a", 0, 12), state("b", 29, 29), state("b", 29, 31)},
		want:   Handover{From: at(12).Time, NewHolder: "b", Acquired: at(29).Time},
	}, {
		name:   "never taken",
		states: []coordinationv1.LeaseSpec{state("a", 0, 10), state("", 11, 11)},
		err:    "no replica took the Lease over from a",
	}, {
		name:   "taken again by the old holder",
		states: []coordinationv1.LeaseSpec{state("a", 0, 10), state("", 11, 11), state("a", 12, 12)},
		err:    "a held the Lease again after releasing it",
	}, {
		name:   "nothing of the old holder seen",
		states: []coordinationv1.LeaseSpec{state("b", 3, 3)},
		err:    "no state of the Lease before b took it",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := LeaseHandover(tt.states, "a")
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("LeaseHandover: error %v; want one with %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("LeaseHandover = %+v; want %+v", got, tt.want)
			}
		})
	}
}
