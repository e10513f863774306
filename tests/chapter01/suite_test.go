//go:build e2e

// Package chapter01 is the end-to-end suite of chapter 1, create-pods: it
// runs the chapter 1 operator (bin/operator) against a real cluster and checks with
// kubectl what the operator does.
package chapter01

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"example.com/redis-operator/tests/framework"
)

// env is the suite's world, set up as the chapter's row of the table of
// chapters says (the operator on the host, deployed, or run by each spec).
var env = framework.NewSuite(1)

func TestSuite(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, env.Description(), env.Labels())
}
