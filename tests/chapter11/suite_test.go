//go:build e2e

// Package chapter11 is the end-to-end suite of chapter 11, admission: the
// operator deployed with its validating webhook (make deploy), as in
// chapter 10, and the chapter's CRD with its CEL rules (make install). It
// checks with kubectl what the API server refuses, and why, before
// anything is stored; how the webhook's certificate is rotated; and what
// a webhook that no replica serves does to creates, updates and deletes.
package chapter11

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"example.com/redis-operator/tests/framework"
)

var env = framework.NewInClusterSuite(11)

func TestChapter11(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Chapter 11: admission", Label("chapter-11"))
}
