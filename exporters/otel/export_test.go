package otel

import (
	"github.com/breakergen/breakergen/runtime"
	"go.opentelemetry.io/otel/metric"
)

// RegisterWithAnswers is Register with the chains' answers read from
// answers, for tests of the instrument before generated chains count them.
func RegisterWithAnswers(reg *runtime.Registry, m metric.Meter, answers func() []runtime.ChainAnswer) (metric.Registration, error) {
	return register(m, reg, answers, options{})
}
