//go:build e2e

// Package chapter07 is the end-to-end suite of chapter 7, idiomatic: it
// runs the chapter 7 operator (bin/operator) against a real cluster and checks with
// kubectl what the operator does. The behaviour specs of chapters 3, 5
// and 6 run here unchanged (the framework's shared specs, RebuildSpec and
// the others); the lesson specs check what the refactor changes.
package chapter07

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"example.com/redis-operator/tests/framework"
)

// env is the suite's world, set up as the chapter's row of the table of
// chapters says (the operator on the host, deployed, or run by each spec).
var env = framework.NewSuite(7)

func TestSuite(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, env.Description(), env.Labels())
}
