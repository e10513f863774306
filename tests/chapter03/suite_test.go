// Package chapter03 is the end-to-end suite of chapter 3, owner-references: it
// runs bin/operator --chapter 3 against a real cluster and checks with
// kubectl what the operator does.
package chapter03

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"example.com/redis-operator/tests/framework"
)

var env *framework.Env

func TestChapter03(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Chapter 3: owner references", Label("chapter-03"))
}

var _ = BeforeSuite(func(ctx SpecContext) {
	env = framework.Setup(ctx, 3)
}, NodeTimeout(framework.SetupTimeout))

var _ = AfterSuite(func(ctx SpecContext) {
	env.Teardown(ctx)
}, NodeTimeout(framework.SetupTimeout))
