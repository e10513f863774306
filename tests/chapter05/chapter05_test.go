//go:build e2e

package chapter05

import "example.com/redis-operator/tests/framework"

// Chapter 5's lesson: a pod deleted with kubectl comes back, still
// recorded by one finalizer, and the operator says it rebuilt it.
var _ = framework.RebuildSpec(framework.SpecInput{Env: env, Lesson: true, RecordsPods: true, SaysRebuilt: true})

// What chapter 3 taught, unchanged.
var _ = framework.ForeignPodSpec(framework.SpecInput{Env: env})
