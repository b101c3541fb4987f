package runtime_test

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/breakergen/breakergen/runtime"
)

// TestResetBacksOff: SPEC §14's reset=30s..10m. Each failed probe doubles
// the next OPEN period up to the cap, the event says the period and why,
// and a close returns to the first value.
func TestResetBacksOff(t *testing.T) {
	reg, clk := newTestRegistry(t)
	b := reg.Breaker(runtime.Config{Name: "quotes", FailureThreshold: 1, ResetTimeout: 30 * time.Second, ResetMax: 10 * time.Minute})
	ctx := context.Background()
	down := errors.New("down")
	fail := func(context.Context) error { return down }
	require.ErrorIs(t, b.Do(ctx, fail), down)
	st := b.Stats()
	assert.Equal(t, 30*time.Second, st.NextProbe.Sub(st.OpenedAt), "the first period")

	var periods []time.Duration
	for range 7 {
		clk.Advance(st.NextProbe.Sub(clk.Now()))
		require.Equal(t, runtime.HalfOpen, b.State())
		require.ErrorIs(t, b.Do(ctx, fail), down)
		st = b.Stats()
		periods = append(periods, st.NextProbe.Sub(st.OpenedAt))
	}
	assert.Equal(t, []time.Duration{time.Minute, 2 * time.Minute, 4 * time.Minute, 8 * time.Minute,
		10 * time.Minute, 10 * time.Minute, 10 * time.Minute}, periods)
	assert.Equal(t, "probe failed, re-opened for 10m0s (7th in a row): down", reg.Events(1)[0].Reason)
	assert.Equal(t, "probe failed, re-opened for 4m0s (3rd in a row): down", reg.Events(0)[2*4].Reason)

	clk.Advance(st.NextProbe.Sub(clk.Now()))
	require.NoError(t, b.Do(ctx, func(context.Context) error { return nil }))
	require.Equal(t, runtime.Closed, b.State())
	require.ErrorIs(t, b.Do(ctx, fail), down)
	st = b.Stats()
	assert.Equal(t, 30*time.Second, st.NextProbe.Sub(st.OpenedAt), "a close returns to the first value")
	clk.Advance(30 * time.Second)
	require.ErrorIs(t, b.Do(ctx, fail), down)
	st = b.Stats()
	assert.Equal(t, time.Minute, st.NextProbe.Sub(st.OpenedAt), "and the doubling starts over")
}

// TestResetBackoffNeverOverflows: with a cap near the largest Duration,
// doubling the period stops at the cap rather than wrapping to a negative
// or zero period, which reopened the breaker for no time at all, so that
// it probed again at once. (The cap is cut to MaxCooldown, 24h, when the
// breaker is made: doubling stops there.)
func TestResetBackoffNeverOverflows(t *testing.T) {
	reg, clk := newTestRegistry(t)
	most := time.Duration(math.MaxInt64)
	b := reg.Breaker(runtime.Config{Name: "q", FailureThreshold: 1, ResetTimeout: time.Millisecond, ResetMax: most})
	ctx := context.Background()
	fail := func(context.Context) error { return errors.New("down") }
	require.Error(t, b.Do(ctx, fail))
	last := time.Millisecond
	for i := range 70 {
		st := b.Stats()
		clk.Advance(st.NextProbe.Sub(clk.Now()))
		require.Equal(t, runtime.HalfOpen, b.State(), "probe %d", i+2)
		require.Error(t, b.Do(ctx, fail))
		st = b.Stats()
		d := st.NextProbe.Sub(st.OpenedAt)
		require.GreaterOrEqual(t, d, last, "failed probe %d: the period went from %s to %s", i+1, last, d)
		last = d
	}
	assert.Equal(t, runtime.MaxCooldown, last, "70 doublings of 1ms reach the cap, cut to MaxCooldown")
	assert.Equal(t, runtime.Open, b.State())

	// With jitter, a draw of 0 keeps the period whole: near the largest
	// Duration its float64 rounds past it, and converting back wrapped.
	reg, clk = newTestRegistry(t, runtime.WithRand(rand.New(zeroSource{})))
	b = reg.Breaker(runtime.Config{Name: "j", FailureThreshold: 1, ResetTimeout: time.Millisecond, ResetMax: most, ResetJitter: 0.5})
	require.Error(t, b.Do(ctx, fail))
	last = time.Millisecond
	for i := range 70 {
		st := b.Stats()
		clk.Advance(st.NextProbe.Sub(clk.Now()))
		require.Error(t, b.Do(ctx, fail))
		st = b.Stats()
		d := st.NextProbe.Sub(st.OpenedAt)
		require.GreaterOrEqual(t, d, last, "jittered, failed probe %d: the period went from %s to %s", i+1, last, d)
		last = d
	}
}

// TestResetBackoffCooldownWinsWhenLonger: a Retry-After longer than the
// backed-off period wins; a shorter one does not shorten it.
func TestResetBackoffCooldownWinsWhenLonger(t *testing.T) {
	reg, clk := newTestRegistry(t)
	b := reg.Breaker(runtime.Config{Name: "q", FailureThreshold: 1, ResetTimeout: 30 * time.Second, ResetMax: 10 * time.Minute})
	ctx := context.Background()
	require.Error(t, b.Do(ctx, func(context.Context) error { return errors.New("down") }))
	clk.Advance(30 * time.Second)
	require.Error(t, b.Do(ctx, func(context.Context) error { return &retryAfterError{d: time.Hour} }))
	st := b.Stats()
	assert.Equal(t, time.Hour, st.NextProbe.Sub(st.OpenedAt))
	assert.Equal(t, "retry after 1h0m0s: runtime_test.retryAfterError: banned", reg.Events(1)[0].Reason)
	clk.Advance(time.Hour)
	require.Error(t, b.Do(ctx, func(context.Context) error { return &retryAfterError{d: time.Second} }))
	st = b.Stats()
	assert.Equal(t, 2*time.Minute, st.NextProbe.Sub(st.OpenedAt), "the 2nd failed probe in a row: 2m, longer than 1s")
}

// TestResetJitter: jitter=P% draws each OPEN period in [d·(1−P), d] from
// the registry's rand: pinned by WithRand, the same seed gives the same
// periods, and every period is in range.
func TestResetJitter(t *testing.T) {
	periods := func(seed uint64) []time.Duration {
		reg, clk := newTestRegistry(t, runtime.WithRand(rand.New(rand.NewPCG(seed, 1))))
		b := reg.Breaker(runtime.Config{Name: "j", FailureThreshold: 1, ResetTimeout: 10 * time.Second,
			ResetMax: 80 * time.Second, ResetJitter: 0.2})
		ctx := context.Background()
		var out []time.Duration
		for range 5 {
			require.Error(t, b.Do(ctx, func(context.Context) error { return errors.New("down") }))
			st := b.Stats()
			out = append(out, st.NextProbe.Sub(st.OpenedAt))
			clk.Advance(st.NextProbe.Sub(clk.Now()))
		}
		return out
	}
	a := periods(7)
	assert.Equal(t, a, periods(7), "the registry's rand decides")
	assert.NotEqual(t, a, periods(8))
	for i, d := range a {
		full := min(10*time.Second<<i, 80*time.Second)
		assert.LessOrEqual(t, d, full, "period %d", i)
		assert.GreaterOrEqual(t, d, time.Duration(float64(full)*0.8), "period %d", i)
	}
}

// TestResetJitterUnderAMillisecond: an OPEN period under a millisecond
// is drawn in its range too, never lengthened to the millisecond every
// longer period has at least.
func TestResetJitterUnderAMillisecond(t *testing.T) {
	reg, clk := newTestRegistry(t, runtime.WithRand(rand.New(rand.NewPCG(1, 1))))
	b := reg.Breaker(runtime.Config{Name: "j", FailureThreshold: 1, ResetTimeout: 500 * time.Microsecond, ResetJitter: 0.5})
	seen := map[time.Duration]bool{}
	for range 20 {
		require.Error(t, b.Do(context.Background(), func(context.Context) error { return errors.New("down") }))
		d := b.Stats().NextProbe.Sub(clk.Now())
		require.GreaterOrEqual(t, d, 250*time.Microsecond)
		require.LessOrEqual(t, d, 500*time.Microsecond)
		seen[d] = true
		b.Reset()
	}
	assert.Greater(t, len(seen), 1, "drawn, not fixed")
}

// TestResetMaxBelowResetIsNone: a cap not above the first value means no
// backing off, and a jitter out of range is clamped.
func TestResetMaxBelowResetIsNone(t *testing.T) {
	reg, _ := newTestRegistry(t)
	cfg := reg.Breaker(runtime.Config{Name: "n", ResetTimeout: time.Minute, ResetMax: time.Second, ResetJitter: 7}).Config()
	assert.Zero(t, cfg.ResetMax)
	assert.Equal(t, 1.0, cfg.ResetJitter)
}
