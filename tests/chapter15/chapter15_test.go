//go:build e2e

package chapter15

import "example.com/redis-operator/tests/framework"

// One pod deletion, stage by stage, to set beside chapter 9's.
var _ = framework.TraceSpec(framework.SpecInput{Env: env})
