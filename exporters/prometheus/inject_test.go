package prometheus_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/breakergen/breakergen/exporters/prometheus"
	"github.com/breakergen/breakergen/runtime"
)

// TestCollectorInjectedOutcome: an injected fault counts as injected, not
// as failure (the outcomes are disjoint), and a breaker without fault
// injection has no injected series.
func TestCollectorInjectedOutcome(t *testing.T) {
	reg := newRegistry(runtime.WithConfig(runtime.Config{Name: "chaos", Fault: 1}))
	chaos := reg.Breaker(runtime.Config{Name: "chaos", FailureThreshold: 100})
	plain := reg.Breaker(runtime.Config{Name: "plain", FailureThreshold: 100})
	for range 3 {
		require.ErrorIs(t, chaos.Do(context.Background(), succeed), runtime.ErrInjected)
	}
	require.ErrorIs(t, chaos.Do(context.Background(), fail), runtime.ErrInjected)
	require.ErrorIs(t, plain.Do(context.Background(), fail), errDown)

	got := gather(t, prometheus.NewCollector(reg))
	assert.Equal(t, 4.0, got[`breakergen_breaker_calls_total{breaker="chaos",outcome="injected"}`])
	assert.Equal(t, 0.0, got[`breakergen_breaker_calls_total{breaker="chaos",outcome="failure"}`])
	assert.Equal(t, 1.0, got[`breakergen_breaker_calls_total{breaker="plain",outcome="failure"}`])
	_, has := got[`breakergen_breaker_calls_total{breaker="plain",outcome="injected"}`]
	assert.False(t, has, "no injected series without fault injection")
}
