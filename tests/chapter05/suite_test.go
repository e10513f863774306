//go:build e2e

// Package chapter05 is the end-to-end suite of chapter 5, rebuild-pods: it
// runs the chapter 5 operator (bin/operator) against a real cluster and checks with
// kubectl what the operator does.
package chapter05

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"example.com/redis-operator/tests/framework"
)

var env = framework.NewSuite(5)

func TestChapter05(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Chapter 5: rebuild pods", Label("chapter-05"))
}
