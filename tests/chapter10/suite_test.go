//go:build e2e

// Package chapter10 is the end-to-end suite of chapter 10, in the cluster:
// it deploys the operator as a user does (make deploy: the image built
// offline, the manifests of config/) and checks with kubectl and the
// Lease what two replicas do. On kind they are the Deployment's pods; the
// local backend runs no containers, so there they are two host processes
// of the image's binary with the Deployment's flags and ServiceAccount.
package chapter10

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"example.com/redis-operator/tests/framework"
)

// env is the suite's world, set up as the chapter's row of the table of
// chapters says (the operator on the host, deployed, or run by each spec).
var env = framework.NewSuite(10)

func TestSuite(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, env.Description(), env.Labels())
}
