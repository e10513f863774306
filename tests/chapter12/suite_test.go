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

var env = framework.NewFaultSuite(12)

func TestChapter12(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Chapter 12: crash after every write", Label("chapter-12"))
}
