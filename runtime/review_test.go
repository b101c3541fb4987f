package runtime_test

import (
	"context"
	"math"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/breakergen/breakergen/runtime"
)

// TestBulkheadRefusalAfterALongWaitIsNotAFailure: a CLOSED call that is
// timed (InFlight) and waits for a bulkhead slot longer than InFlight, then
// is refused, counts as neither success nor failure, like every refusal.
func TestBulkheadRefusalAfterALongWaitIsNotAFailure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newLoadRegistry().Breaker(runtime.Config{Name: "r", FailureThreshold: 1, Concurrency: 1, InFlight: time.Second})
		old, err := b.Acquire(context.Background())
		require.NoError(t, err)
		b.Reset() // the slot stays taken; the holder's period is over, so it is never overdue

		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_, err = b.Acquire(ctx)
		require.ErrorIs(t, err, runtime.ErrBulkheadFull)

		st := b.Stats()
		assert.Zero(t, st.Failures, "a refusal is not a failure")
		assert.Equal(t, runtime.Closed, st.State)
		assert.Equal(t, uint64(1), st.BulkheadFull)
		b.Release(old, nil)
	})
}

// TestHugeHalfOpenMax: a HalfOpenMax far above any real number of probes
// (from code or from the environment) is taken as it is, without the
// breaker reserving room for that many probes up front (which panicked or
// ran out of memory).
func TestHugeHalfOpenMax(t *testing.T) {
	for _, n := range []int{math.MaxInt / 2, math.MaxInt} { // far above any probe count, on 32-bit machines too
		reg, clk := newTestRegistry(t)
		b := reg.Breaker(runtime.Config{Name: "h", FailureThreshold: 1, HalfOpenMax: n})
		assert.Equal(t, n, b.Config().HalfOpenMax)
		trip(t, b)
		clk.Advance(runtime.DefaultResetTimeout)
		for range 3 {
			_, err := b.Acquire(context.Background())
			require.NoError(t, err)
		}
		assert.Equal(t, 3, b.Stats().ProbesInFlight)
	}
}

// TestCanceledCallFoundOverdueStaysOutOfCanceled: a call already counted
// as an overdue failure (InFlight) whose caller then gives up is not also
// counted in Canceled; Canceled stays within Ignored, as Stats says.
func TestCanceledCallFoundOverdueStaysOutOfCanceled(t *testing.T) {
	reg, clk := newTestRegistry(t)
	b := reg.Breaker(runtime.Config{Name: "c", FailureThreshold: 10, InFlight: time.Second})
	ctx, cancel := context.WithCancel(context.Background())
	tok, err := b.Acquire(ctx)
	require.NoError(t, err)
	clk.Advance(2 * time.Second)
	require.Equal(t, uint64(1), b.Stats().Failures, "found overdue")
	cancel()
	b.Release(tok, context.Canceled)
	st := b.Stats()
	assert.Equal(t, uint64(1), st.Failures)
	assert.Zero(t, st.Ignored, "its outcome is ignored: it was counted already")
	assert.Zero(t, st.Canceled, "Canceled is within Ignored")
}

// TestCanceledProbeReclaimedStaysOutOfCanceled: the same for a probe whose
// slot was reclaimed as a failure before its caller gave up.
func TestCanceledProbeReclaimedStaysOutOfCanceled(t *testing.T) {
	reg, clk := newTestRegistry(t)
	b := reg.Breaker(runtime.Config{Name: "p", FailureThreshold: 1, ResetTimeout: time.Second})
	trip(t, b)
	clk.Advance(time.Second)
	ctx, cancel := context.WithCancel(context.Background())
	tok, err := b.Acquire(ctx)
	require.NoError(t, err)
	clk.Advance(time.Second) // the probe's slot is reclaimed: a failure
	before := b.Stats()
	cancel()
	b.Release(tok, context.Canceled)
	st := b.Stats()
	assert.Equal(t, before.Failures, st.Failures)
	assert.Equal(t, before.Ignored, st.Ignored)
	assert.Zero(t, st.Canceled, "Canceled is within Ignored")
}

// TestSameConfigWithNaNThrottleIsTheSameBreaker: asking again for a
// breaker with the very Config that made it logs no "other settings"
// warning, also when its Throttle is NaN (which means none).
func TestSameConfigWithNaNThrottleIsTheSameBreaker(t *testing.T) {
	var logs logBuffer
	reg, _ := newTestRegistry(t, runtime.WithLogger(logs.logger()))
	cfg := runtime.Config{Name: "n", Throttle: math.NaN()}
	b := reg.Breaker(cfg)
	require.Same(t, b, reg.Breaker(cfg))
	assert.NotContains(t, logs.String(), "already exists with other settings")
	assert.Zero(t, b.Config().Throttle, "NaN is no throttle")
}

// TestOverdueCallsAreSlowByTheirOwnAge: calls found in flight past
// InFlight at one look are each slow or not by their own age, not by the
// oldest one's.
func TestOverdueCallsAreSlowByTheirOwnAge(t *testing.T) {
	reg, clk := newTestRegistry(t)
	b := reg.Breaker(runtime.Config{Name: "s", WindowCalls: 10, MinimumCalls: 10, InFlight: 10 * time.Second, SlowCall: 20 * time.Second})
	ctx := context.Background()
	_, err := b.Acquire(ctx) // will be 25s old
	require.NoError(t, err)
	clk.Advance(6 * time.Second)
	_, err = b.Acquire(ctx) // will be 19s old
	require.NoError(t, err)
	clk.Advance(19 * time.Second)
	st := b.Stats()
	assert.Equal(t, 2, st.WindowCalls)
	assert.Equal(t, 2, st.WindowFailures)
	assert.Equal(t, 1, st.WindowSlow, "only the 25s one is past SlowCall")
}

// lateClock is a fake clock that also keeps every timer function, so that
// a test can run one that was stopped: a timer whose goroutine had started
// when Stop was called.
type lateClock struct {
	*fakeClock
	mu  sync.Mutex
	fns []func()
}

func (c *lateClock) AfterFunc(d time.Duration, f func()) runtime.Timer {
	c.mu.Lock()
	c.fns = append(c.fns, f)
	c.mu.Unlock()
	return c.fakeClock.AfterFunc(d, f)
}

func (c *lateClock) last() func() {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.fns[len(c.fns)-1]
}

// TestStaleOpenTimerDoesNotAskTheFleet: the OPEN timer of a period that
// has ended (here replaced by a peer's longer window) firing late does not
// ask the fleet for a probe: redisstate's Probe takes the fleet's probe
// lease, which this process would then hold without probing, keeping the
// peers from probing for a whole probe window.
func TestStaleOpenTimerDoesNotAskTheFleet(t *testing.T) {
	clk := &lateClock{fakeClock: newFakeClock()}
	reg := runtime.NewRegistry(runtime.WithClock(clk), runtime.WithoutEnv(), runtime.WithLogger(discardLogger()))
	s := &fakeSharer{allow: true}
	stop, err := reg.Share(s)
	require.NoError(t, err)
	defer stop()
	b := reg.Breaker(runtime.Config{Name: "f", FailureThreshold: 1, ResetTimeout: time.Second})
	trip(t, b)
	stale := clk.last() // the first OPEN period's timer
	require.True(t, b.PeerOpen("peer", "down", time.Minute))
	stale() // it had started as PeerOpen stopped it
	_, probes := s.snapshot()
	assert.Zero(t, probes, "no probe asked for a period that has ended")
	assert.Equal(t, runtime.Open, b.State())
}
