package breakerimpl_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/breakergen/breakergen/runtime"
	"github.com/breakergen/breakergen/runtime/breakerimpl"
)

// slowRefusingFleet is a Sharer whose limiter wait blocks until release
// is closed, then refuses: a fleet limiter that waited and found no token.
type slowRefusingFleet struct{ entered, release chan struct{} }

func (*slowRefusingFleet) Created(*runtime.Breaker)                                  {}
func (*slowRefusingFleet) Transition(*runtime.Breaker, runtime.Event, time.Duration) {}
func (*slowRefusingFleet) Probe(*runtime.Breaker) (bool, time.Duration)              { return true, 0 }
func (*slowRefusingFleet) Health() runtime.FleetHealth                               { return runtime.FleetHealth{} }

func (f *slowRefusingFleet) Wait(context.Context, *runtime.Limiter, time.Duration) (bool, error) {
	close(f.entered)
	<-f.release
	return true, runtime.ErrRateLimited
}

// TestLimiterRefusalOfACallFoundOverdue: a call counted as an overdue
// failure (InFlight) while it waited for the limiter, then refused by it,
// is not counted in RateLimited too: RateLimited is within Ignored, and
// the call's outcome was the failure.
func TestLimiterRefusalOfACallFoundOverdue(t *testing.T) {
	reg, clk := newTestRegistry(t)
	fleet := &slowRefusingFleet{entered: make(chan struct{}), release: make(chan struct{})}
	stop, err := reg.Share(fleet)
	require.NoError(t, err)
	defer stop()
	rt := breakerimpl.NewRoute(reg, anyImpl, breakerimpl.RouteConfig{
		Breaker: runtime.Config{Name: "lim", FailureThreshold: 10, InFlight: time.Second},
		Rate:    1, Burst: 1,
	})
	refused := make(chan error, 1)
	go func() {
		_, err := rt.Enter(context.Background())
		refused <- err
	}()
	<-fleet.entered
	clk.Advance(2 * time.Second)
	require.Equal(t, uint64(1), rt.Breaker().Stats().Failures, "found overdue while it waited")
	close(fleet.release)
	require.ErrorIs(t, <-refused, runtime.ErrRateLimited)
	st := rt.Breaker().Stats()
	assert.Equal(t, uint64(1), st.Failures)
	assert.Zero(t, st.Ignored)
	assert.Zero(t, st.RateLimited, "RateLimited is within Ignored")
}
