//go:build e2e

package chapter07

import "example.com/redis-operator/tests/framework"

// Chapter 7's lesson: no finalizer, and the finalizers of chapters 2 to
// 6 migrated away.
var _ = framework.NoFinalizerSpec(framework.SpecInput{Env: env, Lesson: true})

// The behaviour of chapters 3, 5 and 6, unchanged.
var (
	_ = framework.RebuildSpec(framework.SpecInput{Env: env})
	_ = framework.ScaleSpec(framework.SpecInput{Env: env})
	_ = framework.StatusSpec(framework.SpecInput{Env: env})
	_ = framework.SteadySpec(framework.SpecInput{Env: env})
	_ = framework.EndedPodSpec(framework.SpecInput{Env: env})
	_ = framework.ForeignPodSpec(framework.SpecInput{Env: env})
)
