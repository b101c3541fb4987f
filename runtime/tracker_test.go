package runtime_test

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/breakergen/breakergen/runtime"
)

// TestSlowCallsBelowTheMinimumTripOnTheNextSuccess: a time window that
// holds slow calls but fewer than MinimumCalls does not count a fast
// success without its lock (which cannot trip): the success that brings
// the window to the minimum trips it on the slow rate.
func TestSlowCallsBelowTheMinimumTripOnTheNextSuccess(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := runtime.NewRegistry(runtime.WithoutEnv(), runtime.WithLogger(discardLogger()))
		b := reg.Breaker(runtime.Config{Name: "s", WindowPeriod: time.Minute, MinimumCalls: 3, SlowCall: time.Second, SlowRate: 0.5})
		ctx := context.Background()
		for range 2 {
			require.NoError(t, b.Do(ctx, func(context.Context) error { time.Sleep(2 * time.Second); return nil }))
		}
		require.Equal(t, runtime.Closed, b.State(), "2 calls: below the minimum")
		require.NoError(t, b.Do(ctx, func(context.Context) error { return nil }))
		assert.Equal(t, runtime.Open, b.State())
		require.NotEmpty(t, reg.Events(1))
		assert.Equal(t, "slow calls 66.7% (2 of 3 over 1s) >= 50%", reg.Events(1)[0].Reason)
	})
}

// TestSlowCountWindowTurnsCleanAndDirty: a count window with SlowCall
// skips recording a fast success only while it is clean (full, no failure,
// no slow call): a slow call is recorded and stays until N calls pushed
// it out, and the window's figures stay exact throughout.
func TestSlowCountWindowTurnsCleanAndDirty(t *testing.T) {
	reg, clk := newTestRegistry(t)
	b := reg.Breaker(runtime.Config{Name: "s", WindowCalls: 10, SlowCall: time.Second, SlowRate: 1, FailureRate: 1})
	ctx := context.Background()
	call := func(d time.Duration) {
		tok, err := b.Acquire(ctx)
		require.NoError(t, err)
		clk.Advance(d)
		b.Release(tok, nil)
	}
	for range 12 {
		call(0)
	}
	st := b.Stats()
	assert.Equal(t, 10, st.WindowCalls)
	assert.Zero(t, st.WindowSlow)
	call(2 * time.Second)
	assert.Equal(t, 1, b.Stats().WindowSlow, "a slow call on a clean window is recorded")
	for range 9 {
		call(0)
	}
	assert.Equal(t, 1, b.Stats().WindowSlow, "9 calls later it is still in the window")
	call(0)
	st = b.Stats()
	assert.Zero(t, st.WindowSlow, "the tenth pushed it out")
	assert.Equal(t, 10, st.WindowCalls)
	call(2 * time.Second)
	assert.Equal(t, 1, b.Stats().WindowSlow, "clean again, and dirty again")
}

// TestInFlightFoundAcrossPs: calls timed from many goroutines at once (so
// in the slots of several Ps) are each found once when they hang past
// InFlight, by whichever look comes first, and the calls that end in time
// are not.
func TestInFlightFoundAcrossPs(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := runtime.NewRegistry(runtime.WithoutEnv(), runtime.WithLogger(discardLogger()))
		b := reg.Breaker(runtime.Config{Name: "i", InFlight: time.Minute, FailureThreshold: 1 << 20})
		ctx := context.Background()
		const hung, quick = 40, 200
		release := make(chan struct{})
		var wg sync.WaitGroup
		for range hung {
			wg.Go(func() {
				_ = b.Do(ctx, func(context.Context) error { <-release; return nil })
			})
		}
		for range quick {
			wg.Go(func() {
				require.NoError(t, b.Do(ctx, func(context.Context) error { time.Sleep(time.Second); return nil }))
			})
		}
		synctest.Wait()
		assert.Equal(t, hung+quick, b.Stats().InFlight)
		time.Sleep(2 * time.Second)
		assert.Equal(t, hung, b.Stats().InFlight, "the quick calls ended")
		assert.Zero(t, b.Stats().Failures, "none in flight past a minute yet")
		time.Sleep(time.Minute)
		var looks sync.WaitGroup
		for range 8 { // looks at the state at once: each hung call counts once
			looks.Go(func() { b.State() })
		}
		looks.Wait()
		st := b.Stats()
		assert.Equal(t, uint64(hung), st.Failures)
		assert.Equal(t, runtime.Closed, st.State)
		close(release)
		wg.Wait()
		st = b.Stats()
		assert.Equal(t, uint64(hung), st.Failures, "their late successes are ignored")
		assert.Zero(t, st.InFlight)
	})
}

// TestInFlightDueFollowsTheOldestCall: the check that spares every look a
// scan finds a hung call even after the calls around it, older and newer,
// have ended: a call admitted while another was in flight is found at its
// own deadline, not the first call's.
func TestInFlightDueFollowsTheOldestCall(t *testing.T) {
	reg, clk := newTestRegistry(t)
	b := reg.Breaker(runtime.Config{Name: "i", InFlight: 10 * time.Second, FailureThreshold: 1})
	ctx := context.Background()
	first, err := b.Acquire(ctx)
	require.NoError(t, err)
	clk.Advance(5 * time.Second)
	second, err := b.Acquire(ctx)
	require.NoError(t, err)
	clk.Advance(time.Second)
	b.Release(first, nil)
	assert.Equal(t, runtime.Closed, b.State(), "at 6s: none overdue")
	clk.Advance(5 * time.Second)
	assert.Equal(t, runtime.Closed, b.State(), "at 11s the first call's deadline has passed, but it ended")
	clk.Advance(5 * time.Second)
	assert.Equal(t, runtime.Open, b.State(), "at 16s the second call has run 11s")
	b.Release(second, nil)
	assert.Equal(t, uint64(1), b.Stats().Failures)
}

// TestInFlightLoweredLiveFindsTheCallAtOnce: a Registry.Update that lowers
// InFlight applies at the next look, not at the deadline the old setting
// gave the calls in flight.
func TestInFlightLoweredLiveFindsTheCallAtOnce(t *testing.T) {
	reg, clk := newTestRegistry(t)
	b := reg.Breaker(runtime.Config{Name: "i", InFlight: time.Minute, FailureThreshold: 1})
	tok, err := b.Acquire(context.Background())
	require.NoError(t, err)
	clk.Advance(20 * time.Second)
	require.Equal(t, runtime.Closed, b.State())
	require.NoError(t, reg.Update(runtime.Config{Name: "i", InFlight: 10 * time.Second, FailureThreshold: 1}))
	assert.Equal(t, runtime.Open, b.State(), "20s in flight > inflight=10s")
	assert.Equal(t, "call in flight 20s > inflight=10s", reg.Events(1)[0].Reason)
	b.Release(tok, nil)
}

// TestInFlightSlotsFreedFromAnyGoroutine: a timed call's slot is freed by
// its end whichever goroutine (and P) ends it, and taken again: rounds of
// 100 calls admitted by one goroutine (more than a P's own slots hold) and
// ended by others, one per round kept in flight, leave exactly the kept
// calls in flight, and only those are found overdue, once.
func TestInFlightSlotsFreedFromAnyGoroutine(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := runtime.NewRegistry(runtime.WithoutEnv(), runtime.WithLogger(discardLogger()))
		b := reg.Breaker(runtime.Config{Name: "i", InFlight: time.Minute, FailureThreshold: 1 << 20})
		ctx := context.Background()
		const rounds, calls = 50, 100
		var kept []runtime.Token
		for range rounds {
			toks := make([]runtime.Token, calls)
			for i := range toks {
				var err error
				toks[i], err = b.Acquire(ctx)
				require.NoError(t, err)
			}
			kept = append(kept, toks[calls/2])
			var wg sync.WaitGroup
			for i, tok := range toks {
				if i != calls/2 {
					wg.Go(func() { b.Release(tok, nil) })
				}
			}
			wg.Wait()
			time.Sleep(time.Millisecond)
		}
		assert.Equal(t, rounds, b.Stats().InFlight)
		time.Sleep(time.Minute)
		assert.Equal(t, runtime.Closed, b.State())
		st := b.Stats()
		assert.Equal(t, uint64(rounds), st.Failures, "each kept call found overdue once")
		assert.Equal(t, rounds, st.InFlight, "still in flight, counted")
		for _, tok := range kept {
			b.Release(tok, nil)
		}
		st = b.Stats()
		assert.Equal(t, uint64(rounds), st.Failures, "their late ends are ignored")
		assert.Zero(t, st.InFlight)
	})
}
