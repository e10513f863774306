//go:build e2e

// Package chapter11 is the end-to-end suite of chapter 11, admission: the
// operator deployed with its validating webhook (make deploy), as in
// chapter 10, and the chapter's CRD with its CEL rules (make install). It
// checks with kubectl what the API server refuses, and why, before
// anything is stored; how the webhook's certificate is rotated; and what
// a webhook that no replica serves does to creates, updates and deletes.
package chapter11

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"example.com/redis-operator/tests/framework"
)

// env is the suite's world, set up as the chapter's row of the table of
// chapters says (the operator on the host, deployed, or run by each spec).
var env = framework.NewSuite(11)

func TestSuite(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, env.Description(), env.Labels())
}
