package framework

import (
	"context"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	"github.com/onsi/gomega/types"
)

// A deciding check decides a spec only by the assertions it runs: one
// that runs none (a bare Expect(x) with no matcher, an Eventually(f)
// with no Should, a branch that skips them all) would pass against any
// operator. So the framework counts every assertion made through
// Gomega's Default (Expect, Eventually, Consistently, and Ω, with a
// matcher applied), and DecidingCheck fails a check that ran none.

// asserted counts the assertions made, a matcher applied, since the
// suite started.
var asserted atomic.Int64

func init() { gomega.Default = countAssertions(gomega.Default, &asserted) }

// countAssertions wraps g so that every assertion made through it, with
// a matcher applied, adds one to n. Gomega unwraps it (Inner) where it
// needs its own (RegisterFailHandler).
func countAssertions(g types.Gomega, n *atomic.Int64) types.Gomega {
	return countingGomega{Gomega: g, n: n}
}

type countingGomega struct {
	types.Gomega
	n *atomic.Int64
}

func (g countingGomega) Inner() types.Gomega { return g.Gomega }

func (g countingGomega) Ω(actual any, extra ...any) types.Assertion {
	return newCountingAssertion(g.Gomega.ExpectWithOffset(1, actual, extra...), g.n)
}

func (g countingGomega) Expect(actual any, extra ...any) types.Assertion {
	return newCountingAssertion(g.Gomega.ExpectWithOffset(1, actual, extra...), g.n)
}

func (g countingGomega) ExpectWithOffset(offset int, actual any, extra ...any) types.Assertion {
	return newCountingAssertion(g.Gomega.ExpectWithOffset(offset+1, actual, extra...), g.n)
}

func (g countingGomega) Eventually(actualOrCtx any, args ...any) types.AsyncAssertion {
	return newCountingAsync(g.Gomega.EventuallyWithOffset(1, actualOrCtx, args...), g.n)
}

func (g countingGomega) EventuallyWithOffset(offset int, actualOrCtx any, args ...any) types.AsyncAssertion {
	return newCountingAsync(g.Gomega.EventuallyWithOffset(offset+1, actualOrCtx, args...), g.n)
}

func (g countingGomega) Consistently(actualOrCtx any, args ...any) types.AsyncAssertion {
	return newCountingAsync(g.Gomega.ConsistentlyWithOffset(1, actualOrCtx, args...), g.n)
}

func (g countingGomega) ConsistentlyWithOffset(offset int, actualOrCtx any, args ...any) types.AsyncAssertion {
	return newCountingAsync(g.Gomega.ConsistentlyWithOffset(offset+1, actualOrCtx, args...), g.n)
}

// matching is what an Assertion and an AsyncAssertion share: the ways to
// apply a matcher.
type matching interface {
	Should(m types.GomegaMatcher, d ...any) bool
	ShouldNot(m types.GomegaMatcher, d ...any) bool
	To(m types.GomegaMatcher, d ...any) bool
	ToNot(m types.GomegaMatcher, d ...any) bool
	NotTo(m types.GomegaMatcher, d ...any) bool
}

// counted counts each matcher applied through a (an Eventually once,
// however often it polls). Its methods are Ginkgo helpers, so that a
// failure is reported where the spec asserted.
type counted[A matching] struct {
	a A
	n *atomic.Int64
}

func (c counted[A]) Should(m types.GomegaMatcher, d ...any) bool {
	GinkgoHelper()
	c.n.Add(1)
	return c.a.Should(m, d...)
}

func (c counted[A]) ShouldNot(m types.GomegaMatcher, d ...any) bool {
	GinkgoHelper()
	c.n.Add(1)
	return c.a.ShouldNot(m, d...)
}

func (c counted[A]) To(m types.GomegaMatcher, d ...any) bool {
	GinkgoHelper()
	c.n.Add(1)
	return c.a.To(m, d...)
}

func (c counted[A]) ToNot(m types.GomegaMatcher, d ...any) bool {
	GinkgoHelper()
	c.n.Add(1)
	return c.a.ToNot(m, d...)
}

func (c counted[A]) NotTo(m types.GomegaMatcher, d ...any) bool {
	GinkgoHelper()
	c.n.Add(1)
	return c.a.NotTo(m, d...)
}

// countingAssertion is an Assertion that counts; what it builds counts too.
type countingAssertion struct{ counted[types.Assertion] }

func newCountingAssertion(a types.Assertion, n *atomic.Int64) types.Assertion {
	return countingAssertion{counted[types.Assertion]{a, n}}
}

func (c countingAssertion) WithOffset(offset int) types.Assertion {
	return newCountingAssertion(c.a.WithOffset(offset), c.n)
}

func (c countingAssertion) Error() types.Assertion { return newCountingAssertion(c.a.Error(), c.n) }

// countingAsync is countingAssertion for Eventually and Consistently.
type countingAsync struct{ counted[types.AsyncAssertion] }

func newCountingAsync(a types.AsyncAssertion, n *atomic.Int64) types.AsyncAssertion {
	return countingAsync{counted[types.AsyncAssertion]{a, n}}
}

func (c countingAsync) WithOffset(offset int) types.AsyncAssertion {
	return newCountingAsync(c.a.WithOffset(offset), c.n)
}

func (c countingAsync) WithTimeout(d time.Duration) types.AsyncAssertion {
	return newCountingAsync(c.a.WithTimeout(d), c.n)
}

func (c countingAsync) WithPolling(d time.Duration) types.AsyncAssertion {
	return newCountingAsync(c.a.WithPolling(d), c.n)
}

func (c countingAsync) Within(d time.Duration) types.AsyncAssertion {
	return newCountingAsync(c.a.Within(d), c.n)
}

func (c countingAsync) ProbeEvery(d time.Duration) types.AsyncAssertion {
	return newCountingAsync(c.a.ProbeEvery(d), c.n)
}

func (c countingAsync) WithContext(ctx context.Context) types.AsyncAssertion {
	return newCountingAsync(c.a.WithContext(ctx), c.n)
}

func (c countingAsync) WithArguments(args ...any) types.AsyncAssertion {
	return newCountingAsync(c.a.WithArguments(args...), c.n)
}

func (c countingAsync) MustPassRepeatedly(count int) types.AsyncAssertion {
	return newCountingAsync(c.a.MustPassRepeatedly(count), c.n)
}
