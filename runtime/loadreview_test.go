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
