package runtime_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/breakergen/breakergen/runtime"
)

// TestInFlightClockStartsWithTheSlot: a call waiting for a concurrency
// slot is not in flight for Config.InFlight: its clock starts when it
// holds its slot, so neither a look at the state while it waits nor its
// end counts the wait.
func TestInFlightClockStartsWithTheSlot(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newLoadRegistry().Breaker(runtime.Config{Name: "q", Concurrency: 1, InFlight: time.Second, FailureThreshold: 1})
		release := make(chan struct{})
		first := hold(t, b, release)
		second := make(chan error, 1)
		go func() {
			second <- b.Do(context.Background(), func(context.Context) error {
				time.Sleep(500 * time.Millisecond)
				return nil
			})
		}()
		synctest.Wait() // queued for the slot
		time.Sleep(900 * time.Millisecond)
		close(release)
		require.NoError(t, <-first, "the first call held its slot 0.9s < 1s")
		time.Sleep(300 * time.Millisecond)
		assert.Equal(t, runtime.Closed, b.State(), "1.2s after its admission, 0.3s with its slot: not overdue")
		require.NoError(t, <-second)
		st := b.Stats()
		assert.Zero(t, st.Failures, "the second call ran 0.5s with its slot")
		assert.Equal(t, runtime.Closed, st.State)
	})
}

// TestOverdueNeitherOutcomeIsJudgedAlike: a call that ran past InFlight
// and then ends with an outcome that counts as neither (a caller's
// cancel, a hedged race's loser, an invalid answer) is one failure,
// whether or not someone looked at the state before it ended (docs/window.md):
// the look counts it at once, its end counts it otherwise.
func TestOverdueNeitherOutcomeIsJudgedAlike(t *testing.T) {
	for _, look := range []bool{false, true} {
		reg, clk := newTestRegistry(t)
		b := reg.Breaker(runtime.Config{Name: "c", FailureThreshold: 10, InFlight: time.Second})
		ctx, cancel := context.WithCancel(context.Background())
		tok, err := b.Acquire(ctx)
		require.NoError(t, err)
		clk.Advance(2 * time.Second)
		if look {
			_ = b.State()
		}
		cancel()
		b.Release(tok, context.Canceled)
		st := b.Stats()
		assert.Equal(t, uint64(1), st.Failures, "looked %v: one failure", look)
		assert.Equal(t, 1, st.ConsecutiveFailures, "looked %v", look)
		assert.Zero(t, st.Ignored, "looked %v: not also ignored", look)
		assert.Zero(t, st.Canceled, "looked %v: Canceled is within Ignored", look)
	}
}
