package main

import (
	"fmt"
	"strings"

	"github.com/onsi/ginkgo/v2/types"

	"example.com/redis-operator/chapters"
)

// proveTooLow runs the chapter's spec that needs more than an API server
// (the table's TooLow) against the chapter's own operator, on the cluster
// that is up, and requires it red there as any lesson spec against the
// chapter before (judgeRed), at its check, for the reason the table
// gives: the operator is right, the rung cannot show it.
func proveTooLow(base runInput, row chapters.Chapter) error {
	t := row.TooLow
	if t == nil {
		return fmt.Errorf("chapter %d has no spec that is run one rung too low (TooLow in chapters/chapters.go)", row.Number)
	}
	fmt.Printf("=== Chapter %d's spec one rung too low: %q against chapter %d itself must fail at its check %q, for want of %s; Eventually waits %s\n",
		row.Number, t.Spec, row.Number, t.Check, t.Lacks, base.timeout)
	in := base
	in.operator, in.focus, in.label, in.expectFailure = row.Number, []string{t.Spec}, "too-low", true
	res, err := runSuite(in)
	if err != nil {
		return err
	}
	s, ran := res.byText[t.Spec]
	v, problem := judgeTooLow(*t, s, ran)
	if problem != "" {
		if res.setupErr != "" {
			problem += "; BeforeSuite failed: " + why(res.setupErr)
		}
		return fmt.Errorf("chapter %d's %q does not fail one rung too low as it should: %s (see %s)", row.Number, t.Spec, problem, res.log)
	}
	fmt.Printf("  ok  failed in step %q, at its check %q: %s\n", v.step, v.check, why(s.Failure.Message))
	fmt.Printf("=== Chapter %d's spec fails one rung too low, for want of %s\n", row.Number, t.Lacks)
	return nil
}

// judgeTooLow says why a run of t's spec is not the failure t asks for,
// or "": red as judgeRed counts it, in t's check, with t's message.
func judgeTooLow(t chapters.TooLow, s types.SpecReport, ran bool) (redVerdict, string) {
	v := judgeRed(s, ran)
	switch {
	case !v.ok:
		return v, v.problem
	case v.check != t.Check:
		return v, fmt.Sprintf("it failed at its check %q, not at %q: %s", v.check, t.Check, why(s.Failure.Message))
	case !strings.Contains(s.Failure.Message, t.Message):
		return v, fmt.Sprintf("it failed at its check, but without %q in its message, so not for want of %s: %s", t.Message, t.Lacks, why(s.Failure.Message))
	}
	return v, ""
}
