//go:build e2e

// Package chapter06 is the end-to-end suite of chapter 6, scale-and-status:
// it runs the chapter 6 operator (bin/operator) against a real cluster and checks with
// kubectl what the operator does.
package chapter06

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"example.com/redis-operator/tests/framework"
)

var env = framework.NewSuite(6)

func TestChapter06(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Chapter 6: scale and status", Label("chapter-06"))
}
