//go:build e2e

// Package chapter04 is the end-to-end suite of chapter 4, watch-pod-deletes: it
// runs the chapter 4 operator (bin/operator) against a real cluster and checks with
// kubectl what the operator does.
package chapter04

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"example.com/redis-operator/tests/framework"
)

var env = framework.NewSuite(4)

func TestChapter04(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Chapter 4: watch pod deletes", Label("chapter-04"))
}
