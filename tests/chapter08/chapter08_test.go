//go:build e2e

package chapter08

import "example.com/redis-operator/tests/framework"

// Chapter 8's lesson: the operator caches only the pods labelled as its
// own, and puts the label back on a pod of its own that lost it.
var _ = framework.OwnPodsSpec(framework.SpecInput{Env: env, Lesson: true})

// The behaviour of chapters 3, 5, 6 and 7, unchanged.
var (
	_ = framework.RebuildSpec(framework.SpecInput{Env: env})
	_ = framework.ScaleSpec(framework.SpecInput{Env: env})
	_ = framework.StatusSpec(framework.SpecInput{Env: env})
	_ = framework.SteadySpec(framework.SpecInput{Env: env})
	_ = framework.EndedPodSpec(framework.SpecInput{Env: env})
	_ = framework.ForeignPodSpec(framework.SpecInput{Env: env})
	_ = framework.NoFinalizerSpec(framework.SpecInput{Env: env})
)
