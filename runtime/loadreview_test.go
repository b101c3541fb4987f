package runtime_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/breakergen/breakergen/runtime"
)

// TestBulkheadRefusalAfterInFlightIsNoFailure: a call that waited for a
// slot longer than Config.InFlight and was then refused counts as neither
// success nor failure; only the call that held the slot that long fails.
func TestBulkheadRefusalAfterInFlightIsNoFailure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newLoadRegistry().Breaker(runtime.Config{Name: "inflight", Concurrency: 1, InFlight: time.Second})
		release := make(chan struct{})
		first := hold(t, b, release)

		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		err := b.Do(ctx, notCalled(t))
		require.ErrorIs(t, err, runtime.ErrBulkheadFull)

		close(release)
		require.NoError(t, <-first)
		st := b.Stats()
		assert.Equal(t, uint64(1), st.BulkheadFull)
		assert.Equal(t, uint64(1), st.Failures, "only the call that ran 2s > inflight=1s failed")
		assert.Equal(t, 1, st.ConsecutiveFailures)
	})
}

// TestLoadRefusalWithCallCounts: with WithCallCounts, a call the bulkhead
// or the throttle refused changes no breaker count: Calls stays the sum of
// Successes, Failures and Ignored.
func TestLoadRefusalWithCallCounts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := newLoadRegistry(runtime.WithCallCounts(), runtime.WithRand(rand.New(zeroSource{})))
		bulk := reg.Breaker(runtime.Config{Name: "bulk", Concurrency: 1})
		release := make(chan struct{})
		first := hold(t, bulk, release)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		require.ErrorIs(t, bulk.Do(ctx, notCalled(t)), runtime.ErrBulkheadFull)
		close(release)
		require.NoError(t, <-first)

		thr := reg.Breaker(runtime.Config{Name: "thr", Throttle: 1})
		require.Error(t, thr.Do(context.Background(), func(context.Context) error { return errors.New("down") }))
		require.ErrorIs(t, thr.Do(context.Background(), notCalled(t)), runtime.ErrThrottled)

		for _, st := range []runtime.Stats{bulk.Stats(), thr.Stats()} {
			assert.Equal(t, uint64(1), st.BulkheadFull+st.Throttled, st.Name)
			assert.Equal(t, uint64(1), st.Calls, "%s: the refused call is not counted", st.Name)
			assert.Equal(t, st.Calls, st.Successes+st.Failures+st.Ignored, "%s: outcomes add up", st.Name)
		}
	})
}

// zeroSource is a rand.Source whose every Float64 draw is 0: a throttle
// with any probability above zero refuses.
type zeroSource struct{}

func (zeroSource) Uint64() uint64 { return 0 }

// TestInFlightAgainstConcurrencyWithInFlightLimit: with both
// Config.Concurrency and Config.InFlight, Stats.InFlight is the calls
// holding a slot, shown against Concurrency (SPEC §9, docs/load.md), not
// the calls admitted and not ended, which include those queued for a slot.
func TestInFlightAgainstConcurrencyWithInFlightLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newLoadRegistry().Breaker(runtime.Config{Name: "both", Concurrency: 1, InFlight: time.Minute})
		release := make(chan struct{})
		first := hold(t, b, release)
		waited := make(chan error, 1)
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			waited <- b.Do(ctx, notCalled(t))
		}()
		synctest.Wait() // queued for the slot
		st := b.Stats()
		assert.Equal(t, 1, st.InFlight, "one call holds the one slot")
		assert.Equal(t, 1, st.Concurrency)
		assert.Equal(t, time.Minute.Seconds(), st.InFlightSeconds)
		require.ErrorIs(t, <-waited, runtime.ErrBulkheadFull)
		close(release)
		require.NoError(t, <-first)
	})
}
