//go:build e2e

// Package chapter12 is the end-to-end suite of chapter 12, faults. It
// runs the operator as a host process, as `make run` does, so that it can
// crash it after any one of its writes, refuse its writes with 409
// Conflict and hold its view of the pods, and restart it at once; then it
// checks, step by step, that the cluster ends as a run without faults
// does.
package chapter12

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"example.com/redis-operator/tests/framework"
)

var env = framework.NewFaultSuite(12)

func TestChapter12(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Chapter 12: faults", Label("chapter-12"))
}
