//go:build e2e

// Package chapter12 is the end-to-end suite of chapter 12, crash after
// every write. It runs the operator as a host process, as `make run`
// does, so that it can crash it right after any one of its writes and
// restart it at once; then it checks, step by step, that the cluster ends
// as a run without a crash does.
package chapter12

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"example.com/redis-operator/tests/framework"
)

// env is the suite's world, set up as the chapter's row of the table of
// chapters says (the operator on the host, deployed, or run by each spec).
var env = framework.NewSuite(12)

func TestSuite(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, env.Description(), env.Labels())
}
