package framework

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"example.com/redis-operator/chapters"
	"example.com/redis-operator/operator/faults"
)

// A suite whose row says chapters.OperatorPerSpec starts, crashes and
// restarts the operator itself, spec by spec: the cluster and the CRD as
// for the host's, and the operator built and given its ServiceAccount,
// but not started. Its Operator runs the test build that injects faults
// (FaultsBinary), on the host, as `make run` runs it (so without its
// webhook, ENABLE_WEBHOOKS=false), where a spec can kill it at the moment
// it chooses. A spec that must run the operator that ships sets
// Operator.Binary to OperatorBinary().
func init() {
	operatorRuns[chapters.OperatorPerSpec] = func(env *Env) (setUp, connect func(context.Context)) {
		env.specsRunOperator = true
		return func(ctx context.Context) {
			env.prepareOperator(ctx)
			if os.Getenv(chapters.EnvFaultsBin) == "" {
				Expect(env.Make(ctx, "build-faults")).To(Succeed())
			}
			env.Operator.Binary = FaultsBinary()
			Expect(env.Operator.Binary).To(BeAnExistingFile(), "the operator's test build, which injects faults: make build-faults (for a variant, make build-variant builds it, for a chapter in FAULTS_CHAPTERS or with FAULTS=true)")
			env.Operator.Env = []string{"ENABLE_WEBHOOKS=false"}
			env.WaitForOwnerMapping(ctx)
		}, env.connectToHostOperator
	}
}

// WritesSince lists the writes the operator logged after offset (see
// LogOffset), the crash line included.
func (o *Operator) WritesSince(offset int64) []faults.Write {
	GinkgoHelper()
	mustBeSerial("WritesSince")
	return faults.WritesIn(o.LogSince(offset))
}

// Crashed reports whether err is the exit of an operator that crashed on
// purpose.
func Crashed(err error) bool {
	var exit *exec.ExitError
	return errors.As(err, &exit) && exit.ExitCode() == faults.CrashExitCode
}

// FaultsBinary is the test build of the operator, which injects the
// faults that REDIS_OPERATOR_FAULT_* variables ask for (package
// operator/faults): OPERATOR_FAULTS_BIN, or bin/operator-faults, which
// `make build-faults` makes. The operator that ships (OperatorBinary) has
// none of that code.
func FaultsBinary() string {
	if b := os.Getenv(chapters.EnvFaultsBin); b != "" {
		return b
	}
	return filepath.Join(RepoRoot(), "bin", "operator-faults")
}
