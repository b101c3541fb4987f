package otel_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

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

// gateClock is the real clock, except that its next read after arm blocks:
// it says so on entered and waits for release. An injected fault of a
// CLOSED breaker without a window reads the clock once, for its failure's
// instant, after it is counted in Stats.Injected and before it is in
// Failures: the gate holds it there while the test collects.
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

// TestRegisterFailureNeverGoesBack: a collection taken while an injected
// fault is being counted, when Failures − Injected dips, observes
// outcome=failure as no less than the collection before (a counter never
// goes back, nor below zero); a Reset is observed as the counter reset it
// is.
func TestRegisterFailureNeverGoesBack(t *testing.T) {
	const failure = "breakergen.breaker.calls{breakergen.outcome=failure,circuitbreaker.name=chaos}"
	const injected = "breakergen.breaker.calls{breakergen.outcome=injected,circuitbreaker.name=chaos}"
	for _, before := range []int{0, 1} {
		t.Run(fmt.Sprintf("%d real failures before", before), func(t *testing.T) {
			clock := newGateClock()
			reg := newRegistry(runtime.WithClock(clock), runtime.WithConfig(runtime.Config{Name: "chaos", Fault: 1}))
			m, reader := newMeter()
			_, err := otel.Register(reg, m)
			require.NoError(t, err)
			chaos := reg.Breaker(runtime.Config{Name: "chaos", FailureThreshold: 100})
			for range before {
				tok, err := chaos.Acquire(context.Background()) // no injection: a real call
				require.NoError(t, err)
				chaos.Release(tok, errDown)
			}
			assert.Equal(t, point{"counter", float64(before)}, collect(t, reader)[failure])

			clock.armed.Store(true)
			done := make(chan error)
			go func() { done <- chaos.Do(context.Background(), succeed) }()
			<-clock.entered
			got := collect(t, reader)
			assert.Equal(t, point{"counter", float64(before)}, got[failure], "while the fault is being counted")
			close(clock.release)
			require.ErrorIs(t, <-done, runtime.ErrInjected)
			got = collect(t, reader)
			assert.Equal(t, point{"counter", float64(before)}, got[failure])
			assert.Equal(t, point{"counter", 1}, got[injected])

			require.ErrorIs(t, chaos.Do(context.Background(), succeed), runtime.ErrInjected)
			chaos.Reset()
			got = collect(t, reader)
			assert.Equal(t, point{"counter", 0}, got[failure], "a reset is a counter reset")
			assert.Equal(t, point{"counter", 0}, got[injected])
		})
	}
}
