//go:build e2e

// Package chapter08 is the end-to-end suite of chapter 8, own pods: it
// runs the chapter 8 operator (bin/operator) against a real cluster and checks with
// kubectl what the operator does. The behaviour specs of chapters 3 to 7
// run here unchanged (the framework's shared specs, RebuildSpec and the
// others); the lesson specs check that the operator's cache holds its own
// pods only, and that its pods keep the label that makes them its own.
package chapter08

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"example.com/redis-operator/tests/framework"
)

// env is the suite's world, set up as the chapter's row of the table of
// chapters says (the operator on the host, deployed, or run by each spec).
var env = framework.NewSuite(8)

func TestSuite(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, env.Description(), env.Labels())
}
