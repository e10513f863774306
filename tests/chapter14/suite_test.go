//go:build e2e

// Package chapter14 is the end-to-end suite of chapter 14, the API server
// goes away. It runs the operator that ships as a host process, as `make
// run` does, stops the cluster's API server and starts it again, and
// checks that the operator lives through it (without leader election) or
// gives its Lease up and takes it over again (with it).
package chapter14

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"example.com/redis-operator/tests/framework"
)

// env is the suite's world, set up as the chapter's row of the table of
// chapters says (the operator on the host, deployed, or run by each spec).
var env = framework.NewSuite(14)

func TestSuite(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, env.Description(), env.Labels())
}
