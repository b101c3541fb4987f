package breakerimpl_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/breakergen/breakergen/runtime"
	"github.com/breakergen/breakergen/runtime/breakerimpl"
)

// TestRouteMaxWaitBoundsTokenAndSlotTogether: maxwait bounds the whole
// wait of a call, the token's and the slot's together: a call that waited
// 0.5s of its 1s for a token waits at most 0.5s more for a slot.
func TestRouteMaxWaitBoundsTokenAndSlotTogether(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := bubbleRegistry()
		rt := breakerimpl.NewRoute(reg, anyImpl, breakerimpl.RouteConfig{
			Breaker: runtime.Config{Name: "both", Concurrency: 1},
			Rate:    2, Burst: 1, MaxWait: time.Second,
		})
		release := make(chan struct{})
		held := holdRoute(t, rt, release) // takes the one token and the one slot
		go func() {
			time.Sleep(1200 * time.Millisecond)
			close(release)
		}()
		start := time.Now()
		_, err := rt.Enter(context.Background())
		require.ErrorIs(t, err, runtime.ErrBulkheadFull, "the slot freed at 1.2s, past the whole wait's 1s")
		assert.Equal(t, time.Second, time.Since(start), "0.5s for the token, then 0.5s for the slot")
		require.NoError(t, <-held)
	})
}
