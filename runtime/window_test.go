package runtime_test

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/breakergen/breakergen/runtime"
	"github.com/breakergen/breakergen/runtime/breakerimpl"
)

var errDown = errors.New("upstream down")

// calls makes one call through b per letter of script: 'o' succeeds, 'x'
// fails. It stops at the first rejection and returns how many calls it made.
func calls(t *testing.T, b *runtime.Breaker, script string) int {
	t.Helper()
	for i, c := range script {
		err := b.Do(context.Background(), func(context.Context) error {
			if c == 'x' {
				return errDown
			}
			return nil
		})
		if errors.Is(err, runtime.ErrOpen) {
			return i
		}
	}
	return len(script)
}

// timed makes one call through b that lasts d on clk and ends with err.
func timed(b *runtime.Breaker, clk *fakeClock, d time.Duration, err error) error {
	return b.Do(context.Background(), func(context.Context) error {
		clk.Advance(d)
		return err
	})
}

func TestWindowConfigDefaults(t *testing.T) {
	tests := []struct {
		name string
		in   runtime.Config
		want runtime.Config
	}{
		{"no window: threshold 5, window keys cleared",
			runtime.Config{FailureRate: 0.3, MinimumCalls: 7, SlowCall: time.Second, SlowRate: 0.2},
			runtime.Config{FailureThreshold: 5}},
		{"count window: threshold off, defaults",
			runtime.Config{WindowCalls: 100},
			runtime.Config{WindowCalls: 100, FailureRate: 0.5, MinimumCalls: 20}},
		{"count window smaller than the minimum",
			runtime.Config{WindowCalls: 12},
			runtime.Config{WindowCalls: 12, FailureRate: 0.5, MinimumCalls: 12}},
		{"minimum above the count window",
			runtime.Config{WindowCalls: 50, MinimumCalls: 80},
			runtime.Config{WindowCalls: 50, FailureRate: 0.5, MinimumCalls: 50}},
		{"count window below 10 is raised",
			runtime.Config{WindowCalls: 3},
			runtime.Config{WindowCalls: 10, FailureRate: 0.5, MinimumCalls: 10}},
		{"huge count window is capped",
			runtime.Config{WindowCalls: math.MaxInt32},
			runtime.Config{WindowCalls: 1 << 20, FailureRate: 0.5, MinimumCalls: 20}},
		{"time window below 1s is raised",
			runtime.Config{WindowPeriod: time.Millisecond},
			runtime.Config{WindowPeriod: time.Second, FailureRate: 0.5, MinimumCalls: 20}},
		{"both windows: the count wins",
			runtime.Config{WindowCalls: 100, WindowPeriod: time.Minute},
			runtime.Config{WindowCalls: 100, FailureRate: 0.5, MinimumCalls: 20}},
		{"negative window is none",
			runtime.Config{WindowCalls: -5, WindowPeriod: -time.Second, InFlight: -time.Second},
			runtime.Config{FailureThreshold: 5}},
		{"explicit threshold kept with a window",
			runtime.Config{WindowCalls: 100, FailureThreshold: 7},
			runtime.Config{WindowCalls: 100, FailureThreshold: 7, FailureRate: 0.5, MinimumCalls: 20}},
		{"rates: out of range clamped, NaN and negative default",
			runtime.Config{WindowPeriod: time.Minute, FailureRate: 2, SlowCall: time.Second, SlowRate: math.NaN()},
			runtime.Config{WindowPeriod: time.Minute, FailureRate: 1, MinimumCalls: 20, SlowCall: time.Second, SlowRate: 0.5}},
		{"negative rate defaults, slow rate without slow call cleared",
			runtime.Config{WindowCalls: 10, FailureRate: -0.2, SlowRate: 0.9},
			runtime.Config{WindowCalls: 10, FailureRate: 0.5, MinimumCalls: 10}},
		{"inflight alone",
			runtime.Config{InFlight: 30 * time.Second},
			runtime.Config{FailureThreshold: 5, InFlight: 30 * time.Second}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reg, _ := newTestRegistry(t, runtime.WithoutEnv())
			tt.in.Name = "w"
			got := reg.Breaker(tt.in).Config()
			tt.want.Name = "w"
			tt.want.ResetTimeout, tt.want.HalfOpenMax, tt.want.SuccessThreshold = 30*time.Second, 1, 1
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestCountWindowFailureRate(t *testing.T) {
	reg, _ := newTestRegistry(t)
	b := reg.Breaker(runtime.Config{Name: "w", WindowCalls: 10})
	// Nine failures in a row: below the minimum (10), and no threshold.
	require.Equal(t, 9, calls(t, b, "xxxxxxxxx"))
	st := b.Stats()
	assert.Equal(t, runtime.Closed, st.State, "no trip below the minimum")
	assert.Equal(t, 9, st.WindowCalls)
	assert.Equal(t, 9, st.WindowFailures)
	assert.Equal(t, 9, st.ConsecutiveFailures)
	assert.Equal(t, 0, st.FailureThreshold)
	// The tenth call reaches the minimum: 9 of 10 >= 50%.
	require.Equal(t, 1, calls(t, b, "o"))
	assert.Equal(t, runtime.Open, b.State())
	assert.Equal(t, "failure rate 90% (9 of the last 10 calls) >= 50%", reg.Events(1)[0].Reason)
	st = b.Stats()
	assert.Zero(t, st.WindowCalls, "the window is emptied at the transition")
	assert.Equal(t, "10 calls", st.Window)
}

func TestCountWindowSlides(t *testing.T) {
	reg, _ := newTestRegistry(t)
	b := reg.Breaker(runtime.Config{Name: "w", WindowCalls: 10, FailureRate: 0.4})
	// 3 failures in every 10 calls: under 40% whatever the window's position.
	for range 20 {
		require.Equal(t, 10, calls(t, b, "oxoooxooox"))
	}
	st := b.Stats()
	assert.Equal(t, runtime.Closed, st.State)
	assert.Equal(t, 10, st.WindowCalls)
	assert.Equal(t, 3, st.WindowFailures)
	assert.InDelta(t, 0.3, st.FailureRate, 1e-12)
	assert.Equal(t, 0.4, st.FailureRateThreshold)
	// One more failure pushes a success out: 4 of 10.
	require.Equal(t, 1, calls(t, b, "x"))
	assert.Equal(t, runtime.Open, b.State())
	assert.Equal(t, "failure rate 40% (4 of the last 10 calls) >= 40%", reg.Events(1)[0].Reason)
}

func TestWindowWithExplicitThreshold(t *testing.T) {
	reg, _ := newTestRegistry(t)
	b := reg.Breaker(runtime.Config{Name: "w", WindowCalls: 100, FailureThreshold: 3})
	require.Equal(t, 3, calls(t, b, "xxx"), "the threshold trips with a window too")
	assert.Equal(t, runtime.Open, b.State())
	assert.Equal(t, "upstream down", reg.Events(1)[0].Reason)
}

func TestWindowRidesOutBackgroundFailures(t *testing.T) {
	// One call in ten fails, in bursts of five: a consecutive breaker would
	// trip; a windowed one does not.
	reg, _ := newTestRegistry(t)
	b := reg.Breaker(runtime.Config{Name: "w", WindowCalls: 100})
	script := "xxxxx" + strings.Repeat("o", 45)
	for range 10 {
		require.Equal(t, 50, calls(t, b, script))
	}
	assert.Equal(t, runtime.Closed, b.State())
	// An outage: every call fails. It trips once half the window fails.
	n := calls(t, b, strings.Repeat("x", 100))
	assert.Equal(t, runtime.Open, b.State())
	assert.Equal(t, 45, n, "the window held 10 failures; 45 more, of which 5 push failures out, make 50 of 100")
}

func TestTimeWindow(t *testing.T) {
	reg, clk := newTestRegistry(t)
	b := reg.Breaker(runtime.Config{Name: "t", WindowPeriod: 10 * time.Second, MinimumCalls: 4})
	clk.Advance(500 * time.Millisecond)
	require.Equal(t, 2, calls(t, b, "xx")) // ended in the first bucket, at t0+0.5s
	clk.Advance(5 * time.Second)
	require.Equal(t, 1, calls(t, b, "o"))
	st := b.Stats()
	assert.Equal(t, "10s", st.Window)
	assert.Equal(t, 3, st.WindowCalls)

	// A call is forgotten between D and D + D/10 after it ended: those of
	// t0+0.5s are still there at t0+10.9s, and gone at t0+11s.
	clk.Advance(10900*time.Millisecond - 5500*time.Millisecond)
	assert.Equal(t, 3, b.Stats().WindowCalls)
	clk.Advance(100 * time.Millisecond)
	st = b.Stats()
	assert.Equal(t, 1, st.WindowCalls)
	assert.Zero(t, st.WindowFailures)

	// Two failures, then a success that brings the window to the minimum:
	// 2 of 4 is 50%.
	require.Equal(t, 3, calls(t, b, "xxo"))
	assert.Equal(t, runtime.Open, b.State())
	assert.Equal(t, "failure rate 50% (2 of 4 calls in 10s) >= 50%", reg.Events(1)[0].Reason)
}

func TestTimeWindowTrips(t *testing.T) {
	reg, clk := newTestRegistry(t)
	b := reg.Breaker(runtime.Config{Name: "t", WindowPeriod: time.Minute, MinimumCalls: 4, FailureRate: 0.6})
	require.Equal(t, 3, calls(t, b, "oxx"))
	clk.Advance(30 * time.Second)
	require.Equal(t, 1, calls(t, b, "x"))
	assert.Equal(t, runtime.Open, b.State())
	assert.Equal(t, "failure rate 75% (3 of 4 calls in 1m0s) >= 60%", reg.Events(1)[0].Reason)
}

func TestWindowEmptiedAtEveryTransition(t *testing.T) {
	reg, clk := newTestRegistry(t)
	b := reg.Breaker(runtime.Config{Name: "w", WindowCalls: 10, ResetTimeout: time.Second})
	require.Equal(t, 10, calls(t, b, "oooooxxxxx"))
	require.Equal(t, runtime.Open, b.State())
	clk.Advance(time.Second)
	require.Equal(t, runtime.HalfOpen, b.State())
	assert.Zero(t, b.Stats().WindowCalls, "probes are not window calls")
	require.Equal(t, 1, calls(t, b, "o"))
	require.Equal(t, runtime.Closed, b.State())
	assert.Zero(t, b.Stats().WindowCalls)
	require.Equal(t, 9, calls(t, b, "xxxxxxxxx"))
	b.Reset()
	assert.Zero(t, b.Stats().WindowCalls, "Reset empties the window")
	require.Equal(t, 9, calls(t, b, "xxxxxxxxx"))
	assert.Equal(t, runtime.Closed, b.State())
}

func TestWindowCountsOnlyCallsOfItsPeriod(t *testing.T) {
	reg, _ := newTestRegistry(t)
	b := reg.Breaker(runtime.Config{Name: "w", WindowCalls: 10})
	tok, err := b.Acquire(context.Background())
	require.NoError(t, err)
	b.Reset()
	b.Release(tok, errDown)
	st := b.Stats()
	assert.Zero(t, st.WindowCalls, "a call admitted before the reset does not count")
	assert.Equal(t, uint64(1), st.Failures, "but it is in the totals, as ever")
}

func TestWindowSkipsIgnoredRejectedAndInvalidCalls(t *testing.T) {
	errNotFound := errors.New("not found")
	reg, _ := newTestRegistry(t)
	rt := breakerimpl.NewRoute(reg, anyImpl, breakerimpl.RouteConfig{
		Breaker: runtime.Config{Name: "w", WindowCalls: 10},
		Exclude: []error{errNotFound},
	})
	b := rt.Breaker()
	ctx := context.Background()

	// A caller's cancel is ignored.
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	call, err := rt.Enter(canceled)
	require.NoError(t, err)
	callErr := context.Canceled
	call.Exit(canceled, &callErr)

	// An invalid answer is neither.
	call, err = rt.Enter(ctx)
	require.NoError(t, err)
	var none error
	valid := false
	call.ExitValid(ctx, &none, &valid)

	// Record's Ignored is neither.
	tok, err := b.Acquire(ctx)
	require.NoError(t, err)
	b.Record(tok, runtime.Ignored, nil)
	assert.Zero(t, b.Stats().WindowCalls)

	// An excluded error is a success.
	call, err = rt.Enter(ctx)
	require.NoError(t, err)
	callErr = errNotFound
	call.Exit(ctx, &callErr)
	st := b.Stats()
	assert.Equal(t, 1, st.WindowCalls)
	assert.Zero(t, st.WindowFailures)
	assert.Equal(t, uint64(3), st.Ignored)

	// Rejections are not calls.
	require.Equal(t, 9, calls(t, b, "xxxxxxxxx"))
	require.Equal(t, runtime.Open, b.State())
	_, err = rt.Enter(ctx)
	require.ErrorIs(t, err, runtime.ErrOpen)
	assert.Zero(t, b.Stats().WindowCalls)
}

func TestCleanCountWindowTakesTheFastPath(t *testing.T) {
	reg, _ := newTestRegistry(t)
	b := reg.Breaker(runtime.Config{Name: "w", WindowCalls: 10})
	assert.True(t, b.WindowFlagSet(), "an empty window is not clean")
	require.Equal(t, 9, calls(t, b, "ooooooooo"))
	assert.True(t, b.WindowFlagSet(), "a window not yet full is not clean")
	require.Equal(t, 1, calls(t, b, "o"))
	assert.False(t, b.WindowFlagSet(), "full of successes: clean")
	require.Equal(t, 1, calls(t, b, "x"))
	assert.True(t, b.WindowFlagSet(), "a failure makes it dirty")
	require.Equal(t, 9, calls(t, b, "ooooooooo"))
	assert.True(t, b.WindowFlagSet(), "the failure is still in the window")
	assert.Equal(t, 1, b.Stats().WindowFailures)
	require.Equal(t, 1, calls(t, b, "o"))
	assert.False(t, b.WindowFlagSet(), "ten successes pushed it out")
	st := b.Stats()
	assert.Equal(t, 10, st.WindowCalls)
	assert.Zero(t, st.WindowFailures)
}

// TestCountWindowSuccessAllocatesNothing: a success allocates nothing with a
// count window, clean (the fast path) or dirty.
func TestCountWindowSuccessAllocatesNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under -race: make allocs runs this test without it")
	}
	reg, _ := newTestRegistry(t)
	b := reg.Breaker(runtime.Config{Name: "w", WindowCalls: 10})
	require.Equal(t, 10, calls(t, b, "oooooooooo"))
	require.False(t, b.WindowFlagSet(), "full of successes: clean")
	ctx := context.Background()
	assert.Zero(t, testing.AllocsPerRun(100, func() {
		tok, _ := b.Acquire(ctx)
		b.Release(tok, nil)
	}), "a clean window's success allocates")
	assert.False(t, b.WindowFlagSet())
	dirty := reg.Breaker(runtime.Config{Name: "dirty", WindowCalls: 10, FailureRate: 1})
	calls(t, dirty, "x")
	assert.Zero(t, testing.AllocsPerRun(100, func() {
		tok, _ := dirty.Acquire(ctx)
		dirty.Release(tok, nil)
	}), "a dirty window's success allocates")
}

func TestSlowCalls(t *testing.T) {
	reg, clk := newTestRegistry(t)
	b := reg.Breaker(runtime.Config{Name: "s", WindowCalls: 10, MinimumCalls: 4, SlowCall: 2 * time.Second, FailureRate: 0.9})
	require.NoError(t, timed(b, clk, 3*time.Second, nil), "a slow success")
	require.NoError(t, timed(b, clk, 2*time.Second, nil), "exactly the limit is not slow")
	require.ErrorIs(t, timed(b, clk, 0, errDown), errDown)
	st := b.Stats()
	assert.Equal(t, 3, st.WindowCalls)
	assert.Equal(t, 1, st.WindowSlow)
	assert.Equal(t, 1, st.WindowFailures)
	assert.Equal(t, 0.5, st.SlowRateThreshold)
	assert.Equal(t, 2.0, st.SlowSeconds)
	require.ErrorIs(t, timed(b, clk, 5*time.Second, errDown), errDown, "a slow failure is slow too")
	assert.Equal(t, runtime.Open, b.State())
	assert.Equal(t, "slow calls 50% (2 of 4 over 2s) >= 50%", reg.Events(1)[0].Reason)
}

func TestSlowCallsInATimeWindow(t *testing.T) {
	reg, clk := newTestRegistry(t)
	b := reg.Breaker(runtime.Config{Name: "s", WindowPeriod: time.Minute, MinimumCalls: 5, SlowCall: time.Second, SlowRate: 0.8})
	for range 4 {
		require.NoError(t, timed(b, clk, 1500*time.Millisecond, nil))
	}
	require.NoError(t, timed(b, clk, 0, nil))
	assert.Equal(t, runtime.Open, b.State())
	assert.Equal(t, "slow calls 80% (4 of 5 over 1s) >= 80%", reg.Events(1)[0].Reason)
}

func TestInFlightAdmissionCountsAndIsRefused(t *testing.T) {
	reg, clk := newTestRegistry(t)
	b := reg.Breaker(runtime.Config{Name: "i", FailureThreshold: 1, InFlight: 30 * time.Second})
	ctx := context.Background()
	hung, err := b.Acquire(ctx)
	require.NoError(t, err)
	clk.Advance(30 * time.Second)
	other, err := b.Acquire(ctx)
	require.NoError(t, err, "at exactly the limit a call is not overdue")
	b.Release(other, nil)
	assert.Equal(t, 1, b.Stats().InFlight)
	clk.Advance(time.Second)
	_, err = b.Acquire(ctx)
	require.ErrorIs(t, err, runtime.ErrOpen, "the admission that finds the overdue call counts it first")
	assert.Equal(t, "call in flight 31s > inflight=30s", reg.Events(1)[0].Reason)
	st := b.Stats()
	assert.Equal(t, uint64(1), st.Failures)
	assert.Equal(t, 1, st.InFlight, "the hung call is still in flight")
	// Its later outcome is ignored.
	b.Release(hung, errDown)
	st = b.Stats()
	assert.Equal(t, uint64(1), st.Failures)
	assert.Zero(t, st.Ignored)
	assert.Zero(t, st.InFlight)
}

func TestInFlightLookAtTheStateCounts(t *testing.T) {
	for _, look := range []struct {
		name string
		f    func(*runtime.Registry, *runtime.Breaker) runtime.State
	}{
		{"State", func(_ *runtime.Registry, b *runtime.Breaker) runtime.State { return b.State() }},
		{"Stats", func(_ *runtime.Registry, b *runtime.Breaker) runtime.State { return b.Stats().State }},
		{"Health", func(r *runtime.Registry, _ *runtime.Breaker) runtime.State { return r.Health().Breakers[0].State }},
	} {
		t.Run(look.name, func(t *testing.T) {
			reg, clk := newTestRegistry(t)
			b := reg.Breaker(runtime.Config{Name: "i", InFlight: 30 * time.Second})
			for range 5 { // the default threshold
				_, err := b.Acquire(context.Background())
				require.NoError(t, err)
				clk.Advance(time.Second)
			}
			clk.Advance(25 * time.Second)
			assert.Equal(t, runtime.Closed, look.f(reg, b), "the first is 30s old")
			clk.Advance(5 * time.Second)
			assert.Equal(t, runtime.Open, look.f(reg, b), "all five are overdue: five failures")
			assert.Equal(t, "call in flight 35s > inflight=30s", reg.Events(1)[0].Reason)
		})
	}
}

func TestInFlightCallThatEndsLateIsAFailure(t *testing.T) {
	reg, clk := newTestRegistry(t)
	b := reg.Breaker(runtime.Config{Name: "i", FailureThreshold: 1, InFlight: 30 * time.Second})
	require.NoError(t, timed(b, clk, 45*time.Second, nil), "the caller still gets its answer")
	assert.Equal(t, runtime.Open, b.State())
	assert.Equal(t, "call in flight 45s > inflight=30s", reg.Events(1)[0].Reason)
}

func TestInFlightCountsInTheWindow(t *testing.T) {
	reg, clk := newTestRegistry(t)
	b := reg.Breaker(runtime.Config{Name: "i", WindowCalls: 10, MinimumCalls: 4, InFlight: 10 * time.Second})
	ctx := context.Background()
	require.Equal(t, 2, calls(t, b, "oo"))
	for range 2 {
		_, err := b.Acquire(ctx)
		require.NoError(t, err)
	}
	clk.Advance(11 * time.Second)
	_, err := b.Acquire(ctx)
	require.ErrorIs(t, err, runtime.ErrOpen, "two overdue calls: 2 of 4 failed")
	assert.Equal(t, "failure rate 50% (2 of the last 4 calls) >= 50%", reg.Events(1)[0].Reason)
}

func TestInFlightOfAnOlderPeriodIsNotCounted(t *testing.T) {
	reg, clk := newTestRegistry(t)
	b := reg.Breaker(runtime.Config{Name: "i", FailureThreshold: 1, InFlight: 10 * time.Second})
	old, err := b.Acquire(context.Background())
	require.NoError(t, err)
	b.Reset()
	clk.Advance(time.Minute)
	assert.Equal(t, runtime.Closed, b.State())
	b.Release(old, nil)
	assert.Equal(t, runtime.Closed, b.State())
	assert.Zero(t, b.Stats().InFlight)
}

func TestInFlightForgetsPastItsCapacity(t *testing.T) {
	reg, _ := newTestRegistry(t)
	b := reg.Breaker(runtime.Config{Name: "i", WindowCalls: 10, SlowCall: time.Second})
	ctx := context.Background()
	first, err := b.Acquire(ctx)
	require.NoError(t, err)
	var last runtime.Token
	for range runtime.MaxTracked {
		last, err = b.Acquire(ctx)
		require.NoError(t, err)
	}
	b.Release(first, errDown)
	assert.Zero(t, b.Stats().WindowCalls, "the oldest call was forgotten: its outcome is ignored")
	b.Release(last, errDown)
	assert.Equal(t, 1, b.Stats().WindowCalls)
}

func TestStatsJSONShowsTheWindow(t *testing.T) {
	reg, _ := newTestRegistry(t)
	reg.Breaker(runtime.Config{Name: "a-plain"})
	reg.Breaker(runtime.Config{Name: "b-window", WindowCalls: 100})
	reg.Breaker(runtime.Config{Name: "c-slow", WindowPeriod: time.Minute, SlowCall: 2 * time.Second, InFlight: time.Minute})
	reg.Breaker(runtime.Config{Name: "d-inflight", InFlight: time.Minute})
	h := reg.Health()
	var decoded struct {
		Breakers []map[string]any `json:"breakers"`
	}
	raw, err := json.Marshal(h)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(raw, &decoded))
	require.Len(t, decoded.Breakers, 4)
	windowKeys := []string{"window_calls", "window_failures", "window_slow", "failure_rate", "failure_rate_threshold"}
	slowKeys := []string{"slow_rate", "slow_rate_threshold"}

	plain := decoded.Breakers[0]
	for _, k := range append(append(windowKeys, slowKeys...), "window", "in_flight") {
		assert.NotContains(t, plain, k)
	}
	type bare runtime.Stats // Stats without its MarshalJSON
	want, err := json.Marshal(bare(h.Breakers[0]))
	require.NoError(t, err)
	got, err := json.Marshal(h.Breakers[0])
	require.NoError(t, err)
	assert.JSONEq(t, string(want), string(got), "a breaker without a window encodes as before")

	win := decoded.Breakers[1]
	assert.Equal(t, "100 calls", win["window"])
	for _, k := range windowKeys {
		assert.Contains(t, win, k)
	}
	assert.Equal(t, 0.0, win["window_calls"])
	assert.Equal(t, 0.5, win["failure_rate_threshold"])
	for _, k := range slowKeys { // SPEC §8 lists them with the window's
		assert.Equal(t, 0.0, win[k], "%s with a window and no slow", k)
	}
	assert.NotContains(t, win, "in_flight")

	slow := decoded.Breakers[2]
	for _, k := range append(windowKeys, slowKeys...) {
		assert.Contains(t, slow, k)
	}
	assert.Equal(t, 0.0, slow["in_flight"])
	assert.Equal(t, 2.0, slow["slow_seconds"])
	assert.Equal(t, 60.0, slow["inflight_seconds"])

	assert.Equal(t, 0.0, decoded.Breakers[3]["in_flight"])
	assert.NotContains(t, decoded.Breakers[3], "window_calls")

	// The JSON decodes back to the same Stats.
	var back runtime.Health
	require.NoError(t, json.Unmarshal(raw, &back))
	for i := range h.Breakers {
		assert.Equal(t, h.Breakers[i].WindowCalls, back.Breakers[i].WindowCalls)
		assert.Equal(t, h.Breakers[i].Window, back.Breakers[i].Window)
		assert.Equal(t, h.Breakers[i].FailureRateThreshold, back.Breakers[i].FailureRateThreshold)
		assert.Equal(t, h.Breakers[i].Name, back.Breakers[i].Name)
	}
}

// TestWindowsUnderConcurrency runs many goroutines through breakers with
// each kind of window inside a synctest bubble: the figures stay within
// their bounds, and every timed call is accounted for at the end.
func TestWindowsUnderConcurrency(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := runtime.NewRegistry(runtime.WithoutEnv(), runtime.WithLogger(discardLogger()))
		cfgs := []runtime.Config{
			{Name: "count", WindowCalls: 50, FailureRate: 0.3},
			{Name: "time", WindowPeriod: time.Minute, FailureRate: 0.3},
			{Name: "timed", WindowCalls: 50, FailureRate: 0.3, SlowCall: time.Second, InFlight: time.Minute},
			{Name: "threshold", WindowCalls: 20, FailureThreshold: 3, FailureRate: 1},
		}
		var wg sync.WaitGroup
		for _, cfg := range cfgs {
			b := reg.Breaker(cfg)
			for g := range 8 {
				wg.Go(func() {
					rng := rand.New(rand.NewPCG(uint64(g), 14))
					for range 2000 {
						_ = b.Do(context.Background(), func(context.Context) error {
							if rng.IntN(10) == 0 {
								return errDown
							}
							return nil
						})
					}
				})
			}
		}
		wg.Wait()
		for _, cfg := range cfgs {
			b, _ := reg.Lookup(cfg.Name)
			st := b.Stats()
			assert.LessOrEqual(t, st.WindowFailures, st.WindowCalls, cfg.Name)
			if cfg.WindowCalls > 0 {
				assert.LessOrEqual(t, st.WindowCalls, cfg.WindowCalls, cfg.Name)
			}
			assert.Zero(t, st.InFlight, cfg.Name)
			if st.State == runtime.Closed && cfg.SlowCall == 0 && cfg.InFlight == 0 && st.WindowCalls == cfg.WindowCalls {
				assert.Equal(t, st.WindowFailures == 0, !b.WindowFlagSet(), "%s: the flag says whether the window is clean", cfg.Name)
			}
		}
	})
}

// TestWindowsInASynctestBubble: with the real clock (which a bubble fakes),
// a time window forgets, slow calls are timed and a hung call is found.
func TestWindowsInASynctestBubble(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := runtime.NewRegistry(runtime.WithoutEnv(), runtime.WithLogger(discardLogger()))
		b := reg.Breaker(runtime.Config{Name: "t", WindowPeriod: 10 * time.Second, MinimumCalls: 3, SlowCall: time.Second, SlowRate: 1, InFlight: time.Minute})
		ctx := context.Background()
		require.NoError(t, b.Do(ctx, func(context.Context) error { time.Sleep(2 * time.Second); return nil }))
		st := b.Stats()
		assert.Equal(t, 1, st.WindowCalls)
		assert.Equal(t, 1, st.WindowSlow)
		time.Sleep(11 * time.Second)
		assert.Zero(t, b.Stats().WindowCalls, "forgotten after D + D/10")

		release := make(chan struct{})
		done := make(chan error)
		go func() {
			done <- b.Do(ctx, func(context.Context) error { <-release; return nil })
		}()
		synctest.Wait()
		assert.Equal(t, 1, b.Stats().InFlight)
		time.Sleep(time.Minute + time.Second)
		require.Equal(t, 2, calls(t, b, "xx"), "the hung call counts as the first failure")
		assert.Equal(t, runtime.Open, b.State(), "3 of 3 failed")
		assert.Equal(t, "failure rate 100% (3 of 3 calls in 10s) >= 50%", reg.Events(1)[0].Reason)
		close(release)
		require.NoError(t, <-done)
		assert.Equal(t, uint64(3), b.Stats().Failures, "the hung call's success was ignored")
	})
}

// TestCleanCountWindowRouteEntersFast: through the generated wrappers'
// protocol, a clean count window admits on EnterFast and a dirty one
// declines it.
func TestCleanCountWindowRouteEntersFast(t *testing.T) {
	defer runtime.ForgetCallStates()() // a budget or provenance record elsewhere sends every call off the fast path
	reg, _ := newTestRegistry(t)
	rt := breakerimpl.NewRoute(reg, anyImpl, breakerimpl.RouteConfig{Breaker: runtime.Config{Name: "w", WindowCalls: 10}})
	ctx := context.Background()
	call := func(callErr error) {
		c, ok := rt.EnterFast()
		if !ok {
			var err error
			c, err = rt.Enter(ctx)
			require.NoError(t, err)
		}
		c.Exit(ctx, &callErr)
	}
	_, ok := rt.EnterFast()
	assert.False(t, ok, "an empty window records every call")
	for range 10 {
		call(nil)
	}
	_, ok = rt.EnterFast()
	assert.True(t, ok, "a clean window takes the fast path")
	call(errDown)
	_, ok = rt.EnterFast()
	assert.False(t, ok, "a failure dirties it")
	assert.Equal(t, 1, rt.Breaker().Stats().WindowFailures)
}

// TestTimeWindowCountsConcurrentSuccessesExactly: successes that a time
// window counts without a lock, from many goroutines at once, are each
// counted once, and a transition forgets them.
func TestTimeWindowCountsConcurrentSuccessesExactly(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := runtime.NewRegistry(runtime.WithoutEnv(), runtime.WithLogger(discardLogger()))
		b := reg.Breaker(runtime.Config{Name: "t", WindowPeriod: time.Minute, MinimumCalls: 5})
		ctx := context.Background()
		const workers, each = 8, 500
		var wg sync.WaitGroup
		for range workers {
			wg.Go(func() {
				for range each {
					tok, err := b.Acquire(ctx)
					if err == nil {
						b.Release(tok, nil)
					}
				}
			})
		}
		wg.Wait()
		assert.Equal(t, workers*each, b.Stats().WindowCalls)
		time.Sleep(30 * time.Second)
		require.Equal(t, 1, calls(t, b, "x"))
		st := b.Stats()
		assert.Equal(t, workers*each+1, st.WindowCalls, "the failure beside the successes")
		assert.Equal(t, 1, st.WindowFailures)
		b.Reset()
		assert.Zero(t, b.Stats().WindowCalls, "emptied by the reset")
		time.Sleep(time.Minute)
		assert.Zero(t, b.Stats().WindowCalls)
	})
}
