//go:build e2e

package chapter15

import "example.com/redis-operator/tests/framework"

// The behaviour of chapters 3, 5, 6, 7 and 8, unchanged.
var (
	_ = framework.RebuildSpec(framework.SpecInput{Env: env})
	_ = framework.ScaleSpec(framework.SpecInput{Env: env})
	_ = framework.StatusSpec(framework.SpecInput{Env: env})
	_ = framework.SteadySpec(framework.SpecInput{Env: env})
	_ = framework.EndedPodSpec(framework.SpecInput{Env: env})
	_ = framework.ForeignPodSpec(framework.SpecInput{Env: env})
	_ = framework.NoFinalizerSpec(framework.SpecInput{Env: env})
	_ = framework.OwnPodsSpec(framework.SpecInput{Env: env})
)

// One pod deletion, stage by stage, to set beside chapter 9's.
var _ = framework.TraceSpec(framework.SpecInput{Env: env})

// Chapter 9's rebuild ahead of a queue of new Redis objects: the
// controller's own queue puts a deleted pod's Redis first, as chapter 9's
// priority queue does.
var _ = framework.RebuildFirstSpec(framework.SpecInput{Env: env})
