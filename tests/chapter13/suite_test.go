//go:build e2e

// Package chapter13 is the end-to-end suite of chapter 13, a cache behind
// and writes refused. It runs the operator's test build as a host
// process, as `make run` does, with its pod watch held behind a gate or
// each of its writes answered 409 Conflict once, and checks that it
// deletes no pod it did not make and makes a refused write again.
package chapter13

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"example.com/redis-operator/tests/framework"
)

var env = framework.NewFaultSuite(13)

func TestChapter13(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Chapter 13: a cache behind and writes refused", Label("chapter-13"))
}
