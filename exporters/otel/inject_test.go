package otel_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/breakergen/breakergen/exporters/otel"
	"github.com/breakergen/breakergen/runtime"
)

// TestRegisterInjectedOutcome: an injected fault counts as injected, not
// as failure, as in the Prometheus exporter.
func TestRegisterInjectedOutcome(t *testing.T) {
	reg := newRegistry(runtime.WithConfig(runtime.Config{Name: "chaos", Fault: 1}))
	m, reader := newMeter()
	_, err := otel.Register(reg, m)
	require.NoError(t, err)
	chaos := reg.Breaker(runtime.Config{Name: "chaos", FailureThreshold: 100})
	plain := reg.Breaker(runtime.Config{Name: "plain", FailureThreshold: 100})
	for range 3 {
		require.ErrorIs(t, chaos.Do(context.Background(), succeed), runtime.ErrInjected)
	}
	require.ErrorIs(t, plain.Do(context.Background(), fail), errDown)

	got := collect(t, reader)
	assert.Equal(t, point{"counter", 3}, got["breakergen.breaker.calls{breakergen.outcome=injected,circuitbreaker.name=chaos}"])
	assert.Equal(t, point{"counter", 0}, got["breakergen.breaker.calls{breakergen.outcome=failure,circuitbreaker.name=chaos}"])
	assert.Equal(t, point{"counter", 1}, got["breakergen.breaker.calls{breakergen.outcome=failure,circuitbreaker.name=plain}"])
	assert.NotContains(t, got, "breakergen.breaker.calls{breakergen.outcome=injected,circuitbreaker.name=plain}")
}
