//go:build e2e

package chapter14

import "example.com/redis-operator/tests/framework"

// This chapter's operator is the one that ships (`make deploy` with no
// number deploys it): its suite carries the behaviour of the chapters
// before it, run against it, in parallel where they can be. Chapters 3,
// 5, 6, 7 and 8, unchanged:
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

// Chapter 9's: a rebuild ahead of a queue of new Redis objects.
var _ = framework.RebuildFirstSpec(framework.SpecInput{Env: env})
