//go:build e2e

package chapter07

import "example.com/redis-operator/tests/framework"

// Chapter 7's lesson: no finalizer, and the finalizers of chapters 2 to
// 6 migrated away.
var _ = framework.NoFinalizerSpec(framework.SpecInput{Env: env, Lesson: true})
