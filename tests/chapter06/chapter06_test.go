//go:build e2e

package chapter06

import "example.com/redis-operator/tests/framework"

// Chapter 6's lesson: scaling both ways, the status, and a pod that ended
// replaced.
var (
	_ = framework.ScaleSpec(framework.SpecInput{Env: env, Lesson: true, RecordsPods: true, SaysRebuilt: true})
	_ = framework.StatusSpec(framework.SpecInput{Env: env, Lesson: true})
	_ = framework.EndedPodSpec(framework.SpecInput{Env: env, Lesson: true})
)

// What the learner's controller of the series (seed 004) gets wrong
// besides, caught by specs that are not lessons: a pass that stops at
// the first pod it cannot create (in ScaleSpec), a steady Redis
// requeued, a Redis that is gone taken for an error (in RebuildSpec).
var _ = framework.SteadySpec(framework.SpecInput{Env: env})

// What chapters 3 and 5 taught, unchanged.
var (
	_ = framework.RebuildSpec(framework.SpecInput{Env: env, RecordsPods: true, SaysRebuilt: true})
	_ = framework.ForeignPodSpec(framework.SpecInput{Env: env})
)
