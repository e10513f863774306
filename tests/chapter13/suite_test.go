//go:build e2e

// Package chapter13 is the end-to-end suite of chapter 13, under the hood:
// the operator on client-go alone, judged by the behaviour specs of
// chapters 5 to 8 and chapter 9's rebuild ahead of a queue, unchanged,
// and one pod deletion followed through its layers (the operator runs
// with --trace-pods). A rewrite, it has no
// lesson spec: make prove-chapter 13 runs the suite, then its mutants.
package chapter13

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"example.com/redis-operator/tests/framework"
)

var env = framework.NewSuite(13, framework.TraceArgs...)

func TestChapter13(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Chapter 13: under the hood", Label("chapter-13"))
}
