//go:build e2e

// Package chapter03 is the end-to-end suite of chapter 3, owner-references: it
// runs the chapter 3 operator (bin/operator) against a real cluster and checks with
// kubectl what the operator does.
package chapter03

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"example.com/redis-operator/tests/framework"
)

var env = framework.NewSuite(3)

func TestChapter03(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Chapter 3: owner references", Label("chapter-03"))
}
