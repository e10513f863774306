package controller

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// reconcileTotal is controller_runtime_reconcile_total, which the
// course's suites read to count reconciles. This controller is not
// controller-runtime's, but it reports its reconciles in the same words,
// so that the same suites judge it; the metrics server that serves it is
// the manager's, the frame every chapter runs in. controller-runtime
// registers the counter when its controller package is linked in (it is,
// in the course's operator): then this one is that one.
var reconcileTotal = func() *prometheus.CounterVec {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "controller_runtime_reconcile_total",
		Help: "Total number of reconciliations per controller",
	}, []string{"controller", "result"})
	var registered prometheus.AlreadyRegisteredError
	if err := metrics.Registry.Register(c); errors.As(err, &registered) {
		if existing, ok := registered.ExistingCollector.(*prometheus.CounterVec); ok {
			return existing
		}
	}
	return c
}()
