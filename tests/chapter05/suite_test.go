// Package chapter05 is the end-to-end suite of chapter 5, rebuild-pods: it
// runs bin/operator --chapter 5 against a real cluster and checks with
// kubectl what the operator does.
package chapter05

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"example.com/redis-operator/tests/framework"
)

var env *framework.Env

func TestChapter05(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Chapter 5: rebuild pods", Label("chapter-05"))
}

var _ = BeforeSuite(func(ctx SpecContext) {
	env = framework.Setup(ctx, 5)
}, NodeTimeout(framework.SetupTimeout))

var _ = AfterSuite(func(ctx SpecContext) {
	env.Teardown(ctx)
}, NodeTimeout(framework.SetupTimeout))
