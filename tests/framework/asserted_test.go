package framework

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/onsi/gomega"
)

// TestCountAssertions: every assertion with a matcher applied counts once
// (an Eventually once, however often it polls), through every builder;
// an Expect or an Eventually with no matcher counts nothing.
func TestCountAssertions(t *testing.T) {
	var n atomic.Int64
	var failures []string
	g := countAssertions(gomega.NewGomega(func(message string, _ ...int) { failures = append(failures, message) }), &n)
	polls := 0
	for _, tc := range []struct {
		name string
		do   func()
		want int64
	}{
		{"a bare Expect", func() { g.Expect(1) }, 0},                               //nolint:ginkgolinter // a bare assertion is what must count nothing
		{"a bare Eventually", func() { g.Eventually(func() int { return 1 }) }, 0}, //nolint:ginkgolinter // see above
		{"Expect To", func() { g.Expect(1).To(gomega.Equal(1)) }, 1},
		{"Ω Should and ShouldNot", func() { g.Ω(1).Should(gomega.Equal(1)); g.Ω(1).ShouldNot(gomega.Equal(2)) }, 2},
		{"Expect Error NotTo", func() { g.Expect(strconv.Atoi("1")).Error().NotTo(gomega.HaveOccurred()) }, 1},
		{"ExpectWithOffset WithOffset ToNot", func() { g.ExpectWithOffset(1, 1).WithOffset(2).ToNot(gomega.Equal(2)) }, 1},
		{"Eventually through its builders", func() {
			g.Eventually(func() int { polls++; return polls }).WithContext(context.Background()).WithTimeout(time.Second).
				WithPolling(time.Millisecond).Within(time.Second).ProbeEvery(time.Millisecond).WithOffset(1).Should(gomega.BeNumerically(">=", 3))
		}, 1},
		{"Consistently with arguments", func() {
			g.Consistently(func(x int) int { return x }).WithArguments(4).WithTimeout(20 * time.Millisecond).WithPolling(5 * time.Millisecond).Should(gomega.Equal(4))
		}, 1},
		{"a failed assertion", func() { g.Expect(1).To(gomega.Equal(2)) }, 1},
	} {
		before := n.Load()
		tc.do()
		if got := n.Load() - before; got != tc.want {
			t.Errorf("%s counted %d assertions, want %d", tc.name, got, tc.want)
		}
	}
	if len(failures) != 1 {
		t.Errorf("failures %q, want the one of the failed assertion", failures)
	}
	if _, ok := gomega.Default.(countingGomega); !ok {
		t.Errorf("gomega.Default is a %T: the framework's deciding checks count nothing", gomega.Default)
	}
}
