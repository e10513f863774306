// Package chapter02 is the end-to-end suite of chapter 2, finalizer-tracking: it
// runs bin/operator --chapter 2 against a real cluster and checks with
// kubectl what the operator does.
package chapter02

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"example.com/redis-operator/tests/framework"
)

var env *framework.Env

func TestChapter02(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Chapter 2: finalizer tracking", Label("chapter-02"))
}

var _ = BeforeSuite(func(ctx SpecContext) {
	env = framework.Setup(ctx, 2)
}, NodeTimeout(framework.SetupTimeout))

var _ = AfterSuite(func(ctx SpecContext) {
	env.Teardown(ctx)
}, NodeTimeout(framework.SetupTimeout))
