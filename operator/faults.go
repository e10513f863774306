//go:build faults

package main

import "example.com/redis-operator/operator/faults"

// The test build of the operator (go build -tags faults: make
// build-faults) injects the faults that REDIS_OPERATOR_FAULT_* variables
// ask for; the operator that ships has no such file, and none of the code.
func init() { injectFaults = faults.Inject }
