// Package chapter01 is the end-to-end suite of chapter 1, create-pods: it
// runs bin/operator --chapter 1 against a real cluster and checks with
// kubectl what the operator does.
package chapter01

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"example.com/redis-operator/tests/framework"
)

var env *framework.Env

func TestChapter01(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Chapter 1: create pods", Label("chapter-01"))
}

var _ = BeforeSuite(func(ctx SpecContext) {
	env = framework.Setup(ctx, 1)
}, NodeTimeout(framework.SetupTimeout))

var _ = AfterSuite(func(ctx SpecContext) {
	env.Teardown(ctx)
}, NodeTimeout(framework.SetupTimeout))
