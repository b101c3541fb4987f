package runtime_test

import (
	"context"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/breakergen/breakergen/runtime"
)

// injectRand is the seeded source of the injection tests; want replays
// the same stream to count the draws below p.
func injectRand() *rand.Rand { return rand.New(rand.NewPCG(26, 13)) }

func injectDraws(n int, p float64) int {
	r, k := injectRand(), 0
	for range n {
		if r.Float64() < p {
			k++
		}
	}
	return k
}

// TestInjectFaultExactCounts: with a seeded source, the calls that fail
// are exactly those whose draw falls below Fault; they match ErrInjected,
// the upstream is not called for them, and they count as failures and in
// Stats.Injected.
func TestInjectFaultExactCounts(t *testing.T) {
	reg := runtime.NewRegistry(runtime.WithoutEnv(), runtime.WithLogger(discardLogger()), runtime.WithRand(injectRand()),
		runtime.WithConfig(runtime.Config{Name: "x", Fault: 0.3}))
	b := reg.Breaker(runtime.Config{Name: "x", FailureThreshold: 1 << 20})
	const n = 1000
	upstream, injected := 0, 0
	for range n {
		err := b.Do(t.Context(), func(context.Context) error { upstream++; return nil })
		if err != nil {
			require.ErrorIs(t, err, runtime.ErrInjected)
			injected++
		}
	}
	want := injectDraws(n, 0.3)
	require.Positive(t, want)
	assert.Equal(t, want, injected)
	assert.Equal(t, n-want, upstream, "an injected fault does not call the upstream")
	st := b.Stats()
	assert.Equal(t, uint64(want), st.Injected)
	assert.Equal(t, uint64(want), st.Failures, "an injected fault is a failure")
	assert.Equal(t, 0.3, st.Fault)
}

// TestInjectOffByDefault: without the settings nothing is injected and no
// draw is taken from the registry's source.
func TestInjectOffByDefault(t *testing.T) {
	src := injectRand()
	reg := runtime.NewRegistry(runtime.WithoutEnv(), runtime.WithLogger(discardLogger()), runtime.WithRand(src))
	b := reg.Breaker(runtime.Config{Name: "x"})
	for range 100 {
		require.NoError(t, b.Do(t.Context(), func(context.Context) error { return nil }))
	}
	st := b.Stats()
	assert.Zero(t, st.Injected)
	assert.Zero(t, st.Fault)
	assert.Equal(t, injectRand().Float64(), src.Float64(), "no draw was made")
	raw, err := json.Marshal(st)
	require.NoError(t, err)
	assert.NotContains(t, string(raw), "injected")
	assert.NotContains(t, string(raw), "fault")
}

// TestInjectTripReason: a trip caused by injected faults says so.
func TestInjectTripReason(t *testing.T) {
	reg := runtime.NewRegistry(runtime.WithoutEnv(), runtime.WithLogger(discardLogger()),
		runtime.WithConfig(runtime.Config{Name: "x", Fault: 1}))
	b := reg.Breaker(runtime.Config{Name: "x", FailureThreshold: 2})
	for range 2 {
		require.ErrorIs(t, b.Do(t.Context(), func(context.Context) error { return nil }), runtime.ErrInjected)
	}
	require.Equal(t, runtime.Open, b.State())
	ev := reg.Events(1)
	require.Len(t, ev, 1)
	assert.Contains(t, ev[0].Reason, "injected fault")
	assert.Contains(t, runtime.Brief(&runtime.InjectedError{Breaker: "x", Fault: 1}), "injected")
}

// TestInjectEnv: BREAKER_<NAME>_FAULT and _LATENCY set injection; bad
// values are warned about and ignored.
func TestInjectEnv(t *testing.T) {
	restore := runtime.SetEnviron([]string{
		"BREAKER_X_FAULT=25%", "BREAKER_X_LATENCY=200ms@0.5",
		"BREAKER_Y_FAULT=1.5", "BREAKER_Y_LATENCY=fast",
	})
	defer restore()
	var log logBuffer
	reg := runtime.NewRegistry(runtime.WithLogger(log.logger()))
	x := reg.Breaker(runtime.Config{Name: "x"}).Config()
	assert.Equal(t, 0.25, x.Fault)
	assert.Equal(t, 200*time.Millisecond, x.Latency)
	assert.Equal(t, 0.5, x.LatencyRate)
	y := reg.Breaker(runtime.Config{Name: "y"}).Config()
	assert.Zero(t, y.Fault)
	assert.Zero(t, y.Latency)
	assert.Contains(t, log.String(), "BREAKER_Y_FAULT")
	assert.Contains(t, log.String(), "BREAKER_Y_LATENCY")
}

// TestInjectLatency: the delay runs on the registry's clock before the
// upstream is called, and a ctx that ends during it ends the call without
// calling the upstream.
func TestInjectLatency(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := newLoadRegistry(runtime.WithConfig(runtime.Config{Name: "x", Latency: time.Second}))
		b := reg.Breaker(runtime.Config{Name: "x"})
		start := time.Now()
		var at time.Duration
		require.NoError(t, b.Do(t.Context(), func(context.Context) error { at = time.Since(start); return nil }))
		assert.Equal(t, time.Second, at)

		ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
		defer cancel()
		called := false
		err := b.Do(ctx, func(context.Context) error { called = true; return nil })
		require.ErrorIs(t, err, context.DeadlineExceeded)
		assert.False(t, called)
		assert.Equal(t, uint64(1), b.Stats().Failures, "a deadline during the delay fails the call, as it would upstream")
		assert.Zero(t, b.Stats().Injected)
	})
}

// TestInjectedErrorIs: the error matches ErrInjected and not ErrOpen.
func TestInjectedErrorIs(t *testing.T) {
	var err error = &runtime.InjectedError{Breaker: "x", Fault: 0.3}
	assert.ErrorIs(t, err, runtime.ErrInjected)
	assert.False(t, errors.Is(err, runtime.ErrOpen))
	assert.True(t, strings.Contains(err.Error(), "30%"), err.Error())
}

// gateClock is a fake clock whose next read after arm blocks: it says so
// on entered and waits for release. An injected fault of a CLOSED breaker
// without a window reads the clock once, for its failure's instant, after
// it is counted in Stats.Injected and before it is in Failures: the gate
// holds it there.
type gateClock struct {
	*fakeClock
	armed            atomic.Bool
	entered, release chan struct{}
}

func newGateClock() *gateClock {
	return &gateClock{fakeClock: newFakeClock(), entered: make(chan struct{}), release: make(chan struct{})}
}

func (c *gateClock) arm() { c.armed.Store(true) }

func (c *gateClock) Now() time.Time {
	if c.armed.CompareAndSwap(true, false) {
		close(c.entered)
		<-c.release
	}
	return c.fakeClock.Now()
}

// TestInjectStatsWhileCounted: a snapshot taken while an injected fault
// is being counted never has more injected faults than failures (the
// exporters subtract one from the other), and its Failures − Injected,
// the failures that were not injected, never runs ahead of them: a fault
// shows in Injected before it shows in Failures, so a monotone counter of
// the difference has no spurious increase to keep.
func TestInjectStatsWhileCounted(t *testing.T) {
	t.Run("fault between its counts", func(t *testing.T) {
		clock := newGateClock()
		reg := runtime.NewRegistry(runtime.WithoutEnv(), runtime.WithLogger(discardLogger()), runtime.WithClock(clock),
			runtime.WithConfig(runtime.Config{Name: "x", Fault: 1}))
		b := reg.Breaker(runtime.Config{Name: "x", FailureThreshold: 100})
		clock.arm()
		done := make(chan error)
		go func() { done <- b.Do(context.Background(), func(context.Context) error { return nil }) }()
		<-clock.entered
		st := b.Stats()
		assert.LessOrEqual(t, st.Injected, st.Failures, "no more injected faults than failures")
		assert.Zero(t, st.Failures-st.Injected, "no failure that was not injected")
		close(clock.release)
		require.ErrorIs(t, <-done, runtime.ErrInjected)
		st = b.Stats()
		assert.Equal(t, [2]uint64{1, 1}, [2]uint64{st.Failures, st.Injected})
	})
	t.Run("hook of the trip it causes", func(t *testing.T) {
		// One real failure, then an injected fault trips the breaker: the
		// hook runs while the fault is being counted, in its goroutine.
		seen := make(chan runtime.Stats, 1)
		var b *runtime.Breaker
		reg := runtime.NewRegistry(runtime.WithoutEnv(), runtime.WithLogger(discardLogger()),
			runtime.WithConfig(runtime.Config{Name: "x", Fault: 1}),
			runtime.OnStateChange(func(ev runtime.Event) {
				if ev.To == runtime.Open {
					seen <- b.Stats()
				}
			}))
		b = reg.Breaker(runtime.Config{Name: "x", FailureThreshold: 2})
		tok, err := b.Acquire(context.Background()) // no injection: a real call
		require.NoError(t, err)
		b.Release(tok, errors.New("down"))
		require.ErrorIs(t, b.Do(context.Background(), func(context.Context) error { return nil }), runtime.ErrInjected)
		require.Equal(t, runtime.Open, b.State())
		st := <-seen
		assert.LessOrEqual(t, st.Injected, st.Failures)
		assert.LessOrEqual(t, st.Failures-st.Injected, uint64(1), "one failure was not injected: Failures %d, Injected %d", st.Failures, st.Injected)
		st = b.Stats()
		assert.Equal(t, [2]uint64{2, 1}, [2]uint64{st.Failures, st.Injected})
	})
}

// TestInjectLatencyRateOverLowerLatency: WithConfig's LatencyRate alone
// changes the rate of the environment's latency, as any field a higher
// layer gives wins (SPEC §5); it was dropped without a word, and every
// call was delayed. A WithConfig Latency alone is every call's, as
// before.
func TestInjectLatencyRateOverLowerLatency(t *testing.T) {
	restore := runtime.SetEnviron([]string{"BREAKER_ALPHA_LATENCY=20ms", "BREAKER_BETA_LATENCY=20ms@0.5"})
	defer restore()
	reg := runtime.NewRegistry(runtime.WithLogger(discardLogger()),
		runtime.WithConfig(runtime.Config{Name: "alpha", LatencyRate: 0.25}),
		runtime.WithConfig(runtime.Config{Name: "beta", Latency: 30 * time.Millisecond}))
	alpha := reg.Breaker(runtime.Config{Name: "alpha"}).Config()
	assert.Equal(t, 20*time.Millisecond, alpha.Latency, "the environment's latency")
	assert.Equal(t, 0.25, alpha.LatencyRate, "WithConfig's rate")
	beta := reg.Breaker(runtime.Config{Name: "beta"}).Config()
	assert.Equal(t, 30*time.Millisecond, beta.Latency)
	assert.Equal(t, 1.0, beta.LatencyRate, "a latency given alone is every call's")
}
