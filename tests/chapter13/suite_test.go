//go:build e2e

// Package chapter13 is the end-to-end suite of chapter 13, a cache behind
// and writes refused. It runs the operator's test build as a host
// process, as `make run` does, with its pod watch held behind a gate or
// each of its writes answered 409 Conflict once, and checks that it
// deletes no pod it did not make and makes a refused write again.
package chapter13

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"example.com/redis-operator/tests/framework"
)

// env is the suite's world, set up as the chapter's row of the table of
// chapters says (the operator on the host, deployed, or run by each spec).
var env = framework.NewSuite(13)

func TestSuite(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, env.Description(), env.Labels())
}
