//go:build e2e

package chapter08

import "example.com/redis-operator/tests/framework"

// Chapter 8's lesson: the operator caches only the pods labelled as its
// own, and puts the label back on a pod of its own that lost it.
var _ = framework.OwnPodsSpec(framework.SpecInput{Env: env, Lesson: true})
