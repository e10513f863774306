//go:build e2e

// Package chapter15 is the end-to-end suite of chapter 15, under the hood:
// the operator on client-go alone, judged by the behaviour specs of
// chapters 5 to 8 and chapter 9's rebuild ahead of a queue, unchanged,
// and one pod deletion followed through its layers (the operator runs
// with --trace-pods). A rewrite, it has no
// lesson spec: make prove-chapter 15 runs the suite, then its mutants.
package chapter15

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"example.com/redis-operator/tests/framework"
)

// env is the suite's world, set up as the chapter's row of the table of
// chapters says (the operator on the host, deployed, or run by each spec).
var env = framework.NewSuite(15)

func TestSuite(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, env.Description(), env.Labels())
}
