// Package chapter04 is the end-to-end suite of chapter 4, watch-pod-deletes: it
// runs bin/operator --chapter 4 against a real cluster and checks with
// kubectl what the operator does.
package chapter04

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"example.com/redis-operator/tests/framework"
)

var env *framework.Env

func TestChapter04(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Chapter 4: watch pod deletes", Label("chapter-04"))
}

var _ = BeforeSuite(func(ctx SpecContext) {
	env = framework.Setup(ctx, 4)
}, NodeTimeout(framework.SetupTimeout))

var _ = AfterSuite(func(ctx SpecContext) {
	env.Teardown(ctx)
}, NodeTimeout(framework.SetupTimeout))
