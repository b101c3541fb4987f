package prometheus_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

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

// gateClock is the real clock, except that its next read after arm blocks:
// it says so on entered and waits for release. An injected fault of a
// CLOSED breaker without a window reads the clock once, for its failure's
// instant, after it is counted in Stats.Injected and before it is in
// Failures: the gate holds it there while the test scrapes.
type gateClock struct {
	armed            atomic.Bool
	entered, release chan struct{}
}

func newGateClock() *gateClock {
	return &gateClock{entered: make(chan struct{}), release: make(chan struct{})}
}

func (c *gateClock) Now() time.Time {
	if c.armed.CompareAndSwap(true, false) {
		close(c.entered)
		<-c.release
	}
	return time.Now()
}

func (c *gateClock) AfterFunc(d time.Duration, f func()) runtime.Timer { return time.AfterFunc(d, f) }

// TestCollectorFailureNeverGoesBack: a scrape taken while an injected
// fault is being counted, when Failures − Injected dips, reports
// outcome="failure" as no less than the scrape before (a counter never
// goes back, nor wraps around below zero); a Reset is reported as the
// counter reset it is.
func TestCollectorFailureNeverGoesBack(t *testing.T) {
	const failure = `breakergen_breaker_calls_total{breaker="chaos",outcome="failure"}`
	const injected = `breakergen_breaker_calls_total{breaker="chaos",outcome="injected"}`
	for _, before := range []int{0, 1} {
		t.Run(fmt.Sprintf("%d real failures before", before), func(t *testing.T) {
			clock := newGateClock()
			reg := newRegistry(runtime.WithClock(clock), runtime.WithConfig(runtime.Config{Name: "chaos", Fault: 1}))
			chaos := reg.Breaker(runtime.Config{Name: "chaos", FailureThreshold: 100})
			c := prometheus.NewCollector(reg)
			for range before {
				tok, err := chaos.Acquire(context.Background()) // no injection: a real call
				require.NoError(t, err)
				chaos.Release(tok, errDown)
			}
			assert.Equal(t, float64(before), gather(t, c)[failure])

			clock.armed.Store(true)
			done := make(chan error)
			go func() { done <- chaos.Do(context.Background(), succeed) }()
			<-clock.entered
			got := gather(t, c)
			assert.Equal(t, float64(before), got[failure], "while the fault is being counted")
			close(clock.release)
			require.ErrorIs(t, <-done, runtime.ErrInjected)
			got = gather(t, c)
			assert.Equal(t, float64(before), got[failure])
			assert.Equal(t, 1.0, got[injected])

			require.ErrorIs(t, chaos.Do(context.Background(), succeed), runtime.ErrInjected)
			chaos.Reset()
			got = gather(t, c)
			assert.Zero(t, got[failure], "a reset is a counter reset")
			assert.Zero(t, got[injected])
		})
	}
}
