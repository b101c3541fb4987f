package runtime_test

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/breakergen/breakergen/runtime"
)

// TestUpdateKeepsState: SPEC §14. A live breaker takes new settings and
// keeps its state and counts: the consecutive failures stay and meet the
// new threshold; one Event per breaker changed, From = To = its state,
// says what changed in the keys' words; the hooks see it.
func TestUpdateKeepsState(t *testing.T) {
	var hooks hookLog
	reg, _ := newTestRegistry(t, runtime.OnStateChange(hooks.hook))
	em := reg.Breaker(runtime.Config{Name: "eastmoney", FailureThreshold: 5})
	tdx := reg.Breaker(runtime.Config{Name: "tdx"})
	ctx := context.Background()
	down := errors.New("down")
	fail := func(context.Context) error { return down }
	for range 3 {
		require.ErrorIs(t, em.Do(ctx, fail), down)
	}

	require.NoError(t, reg.Update(
		runtime.Config{Name: "eastmoney", FailureThreshold: 4, ResetTimeout: time.Minute, ResetMax: 10 * time.Minute},
		runtime.Config{Name: "tdx"}, // nothing given: nothing changes, no event
	))
	cfg := em.Config()
	assert.Equal(t, 4, cfg.FailureThreshold)
	assert.Equal(t, time.Minute, cfg.ResetTimeout)
	assert.Equal(t, 10*time.Minute, cfg.ResetMax)
	assert.Equal(t, runtime.DefaultHalfOpenMax, cfg.HalfOpenMax, "a zero field keeps the value")
	assert.Equal(t, 3, em.Stats().ConsecutiveFailures, "counts kept")
	evs := reg.Events(0)
	require.Len(t, evs, 1)
	assert.Equal(t, runtime.Event{Time: evs[0].Time, Source: "eastmoney", From: runtime.Closed, To: runtime.Closed,
		Reason: "reconfigured: threshold 5→4, reset 30s→1m0s..10m0s"}, evs[0])
	assert.Equal(t, []string{"CLOSED→CLOSED reconfigured: threshold 5→4, reset 30s→1m0s..10m0s"}, hooks.moves())
	assert.Equal(t, uint64(0), em.Stats().StateChanges, "not a transition")
	_ = tdx

	require.ErrorIs(t, em.Do(ctx, fail), down)
	st := em.Stats()
	require.Equal(t, runtime.Open, st.State, "the 4th failure meets the new threshold")
	assert.Equal(t, time.Minute, st.NextProbe.Sub(st.OpenedAt), "the new reset")

	// OPEN keeps its window; the new reset applies from the next period.
	require.NoError(t, reg.Update(runtime.Config{Name: "eastmoney", ResetTimeout: 5 * time.Minute, ResetMax: time.Hour}))
	st2 := em.Stats()
	assert.Equal(t, st.NextProbe, st2.NextProbe)
	assert.Equal(t, runtime.Open, reg.Events(1)[0].To)
	assert.Equal(t, runtime.Open, reg.Events(1)[0].From)
}

// TestUpdateLoweredThresholdTripsAtTheNextFailure: a count already past
// the new threshold trips at the next failure.
func TestUpdateLoweredThresholdTripsAtTheNextFailure(t *testing.T) {
	reg, _ := newTestRegistry(t)
	b := reg.Breaker(runtime.Config{Name: "x", FailureThreshold: 10})
	ctx := context.Background()
	for range 5 {
		require.Error(t, b.Do(ctx, func(context.Context) error { return errors.New("down") }))
	}
	require.NoError(t, reg.Update(runtime.Config{Name: "x", FailureThreshold: 2}))
	assert.Equal(t, runtime.Closed, b.State(), "Update itself trips nothing")
	require.Error(t, b.Do(ctx, func(context.Context) error { return errors.New("down") }))
	assert.Equal(t, runtime.Open, b.State())
}

// TestUpdateWindowRates: a window's rates and minimum change live, its
// counts kept.
func TestUpdateWindowRates(t *testing.T) {
	reg, _ := newTestRegistry(t)
	b := reg.Breaker(runtime.Config{Name: "w", WindowCalls: 20, MinimumCalls: 20, FailureRate: 0.9})
	ctx := context.Background()
	for i := range 10 {
		_ = b.Do(ctx, func(context.Context) error {
			if i%2 == 0 {
				return errors.New("down")
			}
			return nil
		})
	}
	require.Equal(t, runtime.Closed, b.State())
	require.NoError(t, reg.Update(runtime.Config{Name: "w", MinimumCalls: 10, FailureRate: 0.5}))
	assert.Equal(t, 10, b.Stats().WindowCalls, "the window kept its calls")
	assert.Equal(t, "reconfigured: failrate 90%→50%, minimum 20→10", reg.Events(1)[0].Reason)
	require.Error(t, b.Do(ctx, func(context.Context) error { return errors.New("down") }))
	assert.Equal(t, runtime.Open, b.State(), "6 of 11 failed >= 50%")
}

// TestUpdateIsStrictAndAllOrNothing: every Config is checked before any
// applies; each error names the Config and the field.
func TestUpdateIsStrictAndAllOrNothing(t *testing.T) {
	reg, _ := newTestRegistry(t)
	b := reg.Breaker(runtime.Config{Name: "eastmoney", FailureThreshold: 5, WindowCalls: 100})
	reg.Breaker(runtime.Config{Name: "tdx", Concurrency: 4})
	good := runtime.Config{Name: "eastmoney", FailureThreshold: 3}
	for _, c := range []struct {
		bad  runtime.Config
		want string
	}{
		{runtime.Config{Name: "eastmoney", FailureThreshold: -1}, `Config 1 (Name "eastmoney"): FailureThreshold -1 is negative`},
		{runtime.Config{Name: "eastmoney", ResetTimeout: -time.Second}, `Config 1 (Name "eastmoney"): ResetTimeout -1s is negative`},
		{runtime.Config{Name: "eastmoney", FailureRate: math.NaN()}, `Config 1 (Name "eastmoney"): FailureRate NaN is not a number`},
		{runtime.Config{Name: "eastmoney", FailureRate: 50}, `Config 1 (Name "eastmoney"): FailureRate 50 is above 1`},
		{runtime.Config{Name: "eastmoney", ResetJitter: -0.2}, `ResetJitter -0.2 is negative`},
		{runtime.Config{Name: "eastmony", FailureThreshold: 3}, `Config 1 (Name "eastmony"): the registry has no breaker called "eastmony"`},
		{runtime.Config{Name: "eastmoney", WindowCalls: 50}, `WindowCalls/WindowPeriod 50 calls cannot change live (the breaker has 100 calls)`},
		{runtime.Config{Name: "eastmoney", SlowCall: time.Second}, `SlowCall cannot be turned on or off live`},
		{runtime.Config{Name: "tdx", Concurrency: 8}, `Config 1 (Name "tdx"): field Concurrency 8 cannot change live (the breaker has 4)`},
		{runtime.Config{Name: "eastmoney", ResetTimeout: time.Minute, ResetMax: time.Second}, `ResetMax 1s is not above ResetTimeout 1m0s`},
	} {
		err := reg.Update(good, c.bad)
		require.Error(t, err, c.want)
		assert.Contains(t, err.Error(), c.want)
		assert.Contains(t, err.Error(), "breaker: Update: ")
		assert.Equal(t, 5, b.Config().FailureThreshold, "nothing applied: %s", c.want)
	}
	assert.Empty(t, reg.Events(0))
	require.NoError(t, reg.Update(good, runtime.Config{Name: "eastmoney", HalfOpenMax: 2}), "two of one name apply in order")
	assert.Equal(t, 3, b.Config().FailureThreshold)
	assert.Equal(t, 2, b.Config().HalfOpenMax)
	assert.Equal(t, "reconfigured: threshold 5→3, halfopen 1→2", reg.Events(1)[0].Reason, "one event for the breaker")
}

// TestUpdateRateLimit: a limiter's rate changes live, strictly, with an
// event on the breaker of its name.
func TestUpdateRateLimit(t *testing.T) {
	reg, clk := newTestRegistry(t)
	reg.Breaker(runtime.Config{Name: "tencent"})
	l := reg.Limiter("tencent", 1, 1)
	require.True(t, l.Allow())
	require.False(t, l.Allow())
	require.NoError(t, reg.UpdateRateLimit("tencent", 10, 5))
	rate, burst := l.Rate()
	assert.Equal(t, 10.0, rate)
	assert.Equal(t, 5, burst)
	clk.Advance(time.Second)
	n := 0
	for l.Allow() {
		n++
	}
	assert.Equal(t, 5, n, "the new burst, refilled at the new rate")
	assert.Equal(t, "reconfigured: ratelimit 1/1→10/5", reg.Events(1)[0].Reason)

	for _, c := range []struct {
		name  string
		rate  float64
		burst int
		want  string
	}{
		{"tencent", 0, 1, `breaker: UpdateRateLimit("tencent"): rate 0 is not a positive number`},
		{"tencent", math.NaN(), 1, "rate NaN"},
		{"tencent", math.Inf(1), 1, "rate +Inf"},
		{"tencent", 2, 0, "burst 0 is below 1"},
		{"sina", 2, 2, `the registry has no limiter called "sina"`},
	} {
		assert.ErrorContains(t, reg.UpdateRateLimit(c.name, c.rate, c.burst), c.want)
	}
	rate, _ = l.Rate()
	assert.Equal(t, 10.0, rate)
}

// TestUpdateShorterResetReclaimsTheLaterProbeFirst: a probe admitted after
// an Update shortened the reset window has the earliest deadline, and its
// slot is reclaimed then, not at the earlier probe's (found by
// TestOperatorsMatchModel).
func TestUpdateShorterResetReclaimsTheLaterProbeFirst(t *testing.T) {
	reg, clk := newTestRegistry(t)
	b := reg.Breaker(runtime.Config{Name: "p", FailureThreshold: 1, ResetTimeout: 4 * time.Second, HalfOpenMax: 2})
	ctx := context.Background()
	require.Error(t, b.Do(ctx, func(context.Context) error { return errors.New("down") }))
	clk.Advance(4 * time.Second)
	_, err := b.Acquire(ctx) // deadline in 4s
	require.NoError(t, err)
	require.NoError(t, reg.Update(runtime.Config{Name: "p", ResetTimeout: 2 * time.Second}))
	_, err = b.Acquire(ctx) // deadline in 2s
	require.NoError(t, err)
	clk.Advance(3 * time.Second)
	st := b.Stats()
	assert.Equal(t, runtime.Open, st.State)
	assert.Equal(t, t0.Add(6*time.Second), st.OpenedAt, "reclaimed by the timer at the later probe's deadline")
	assert.Equal(t, "probe not released within 2s, slot reclaimed as a failure", reg.Events(1)[0].Reason)
}
