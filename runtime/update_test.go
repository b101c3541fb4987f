package runtime_test

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/breakergen/breakergen/runtime"
	"github.com/breakergen/breakergen/runtime/breakerimpl"
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

// TestUpdateSmallRateChange: a change of a rate finer than the reasons'
// tenth of a percent applies, and its event says it exactly.
func TestUpdateSmallRateChange(t *testing.T) {
	reg, _ := newTestRegistry(t)
	b := reg.Breaker(runtime.Config{Name: "w", WindowCalls: 10, FailureRate: 0.5, ResetJitter: 0.1})
	require.NoError(t, reg.Update(runtime.Config{Name: "w", FailureRate: 0.5004, ResetJitter: 0.1001}))
	assert.Equal(t, 0.5004, b.Config().FailureRate)
	assert.Equal(t, 0.1001, b.Config().ResetJitter)
	assert.Equal(t, "reconfigured: jitter 10%→10.01%, failrate 50%→50.04%", reg.Events(1)[0].Reason)
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
		{runtime.Config{Name: "eastmoney", ResetTimeout: 48 * time.Hour}, `Config 1 (Name "eastmoney"): ResetTimeout 48h0m0s is above 24h0m0s, the longest OPEN period (MaxCooldown)`},
		{runtime.Config{Name: "eastmoney", ResetMax: 25 * time.Hour}, `ResetMax 25h0m0s is above 24h0m0s, the longest OPEN period`},
		{runtime.Config{Name: "eastmony", FailureThreshold: 3}, `Config 1 (Name "eastmony"): the registry has no breaker called "eastmony"`},
		{runtime.Config{Name: "eastmoney", WindowCalls: 5}, `Config 1 (Name "eastmoney"): WindowCalls 5 is below 10`},
		{runtime.Config{Name: "eastmoney", WindowPeriod: time.Millisecond}, `WindowPeriod 1ms is below 1s`},
		{runtime.Config{Name: "eastmoney", WindowCalls: 50, WindowPeriod: time.Minute}, `WindowCalls 50 and WindowPeriod 1m0s are both set`},
		{runtime.Config{Name: "tdx", FailureRate: 0.3}, `Config 1 (Name "tdx"): FailureRate 0.3 needs a window`},
		{runtime.Config{Name: "tdx", SlowCall: time.Second}, `SlowCall 1s needs a window`},
		{runtime.Config{Name: "eastmoney", Off: runtime.SettingWindow, SlowCall: time.Second}, `SlowCall 1s needs a window`},
		{runtime.Config{Name: "tdx", Off: runtime.SettingThreshold}, `Off threshold needs a window`},
		{runtime.Config{Name: "tdx", Off: runtime.SettingConcurrency, Concurrency: 2}, `Off concurrency turns off what the same Config sets`},
		{runtime.Config{Name: "tdx", Off: 1 << 12}, `Off Setting(4096) names no setting`},
		{runtime.Config{Name: "tdx", Throttle: 0.5}, `Throttle 0.5 is below 1`},
		{runtime.Config{Name: "tdx", Fault: 0.1}, `Fault, Latency and LatencyRate cannot change live`},
		{runtime.Config{Name: "eastmoney", ResetTimeout: time.Minute, ResetMax: time.Second}, `ResetMax 1s is not above ResetTimeout 1m0s`},
		{runtime.Config{Name: "eastmoney", MinimumCalls: 500}, `MinimumCalls 500 is above the window's 100 calls`},
		{runtime.Config{Name: "eastmoney", WindowCalls: 20, MinimumCalls: 50}, `MinimumCalls 50 is above the window's 20 calls`},
		{runtime.Config{Name: "eastmoney", SlowRate: 0.3}, `SlowRate 0.3 needs SlowCall`},
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
		{"sina", 2, 2, `the registry has no limiter called "sina": a name left unlimited gets one only when its routes are made (ratelimit= in the annotation, WithRateLimit or BREAKER_SINA_RATELIMIT, then a restart)`},
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

// TestUpdateWindowShapeStartsFresh: SPEC §14, counts start fresh where a
// window's shape changes: a new window, empty, judged from the next call,
// and the consecutive failures (the threshold's shape did not change)
// kept; the one Event lists every key that changed.
func TestUpdateWindowShapeStartsFresh(t *testing.T) {
	reg, clk := newTestRegistry(t)
	b := reg.Breaker(runtime.Config{Name: "em", FailureThreshold: 10, WindowCalls: 100, MinimumCalls: 10, FailureRate: 0.5})
	ctx := context.Background()
	down := func(context.Context) error { return errors.New("down") }
	up := func(context.Context) error { return nil }
	for range 4 {
		require.NoError(t, b.Do(ctx, up))
	}
	for range 3 {
		require.Error(t, b.Do(ctx, down))
	}
	require.Equal(t, 7, b.Stats().WindowCalls)

	require.NoError(t, reg.Update(runtime.Config{Name: "em", WindowPeriod: time.Minute, MinimumCalls: 4}))
	st := b.Stats()
	assert.Equal(t, runtime.Closed, st.State)
	assert.Equal(t, "1m0s", st.Window)
	assert.Zero(t, st.WindowCalls, "a new window starts empty")
	assert.Equal(t, 3, st.ConsecutiveFailures, "the threshold's count is kept")
	assert.Equal(t, "reconfigured: window 100→1m0s, minimum 10→4", reg.Events(1)[0].Reason)

	for range 2 {
		require.NoError(t, b.Do(ctx, up))
	}
	require.Error(t, b.Do(ctx, down))
	clk.Advance(10 * time.Second)
	require.Error(t, b.Do(ctx, down))
	st = b.Stats()
	assert.Equal(t, runtime.Open, st.State, "2 of 4 calls in the new window failed")
	assert.Equal(t, "failure rate 50% (2 of 4 calls in 1m0s) >= 50%", reg.Events(1)[0].Reason)
}

// TestUpdateWindowOnAndOff: a breaker without a window gets one live and
// trips on its rate; Off: SettingWindow removes it, its rates with it, and
// the threshold it had turned off comes back as the default.
func TestUpdateWindowOnAndOff(t *testing.T) {
	reg, _ := newTestRegistry(t)
	b := reg.Breaker(runtime.Config{Name: "tdx", FailureThreshold: 3})
	ctx := context.Background()
	require.NoError(t, reg.Update(runtime.Config{Name: "tdx", WindowCalls: 10, MinimumCalls: 4, FailureRate: 0.5, Off: runtime.SettingThreshold}))
	assert.Equal(t, "reconfigured: threshold 3→none, window none→10, failrate none→50%, minimum none→4", reg.Events(1)[0].Reason)
	for i := range 4 {
		err := b.Do(ctx, func(context.Context) error {
			if i%2 == 1 {
				return errors.New("down")
			}
			return nil
		})
		if i < 3 {
			require.Equal(t, runtime.Closed, b.State(), "call %d", i)
		}
		_ = err
	}
	assert.Equal(t, runtime.Open, b.State(), "2 of 4 failed")
	b.Reset()

	require.NoError(t, reg.Update(runtime.Config{Name: "tdx", Off: runtime.SettingWindow}))
	cfg := b.Config()
	assert.Zero(t, cfg.WindowCalls)
	assert.Zero(t, cfg.FailureRate)
	assert.Equal(t, runtime.DefaultFailureThreshold, cfg.FailureThreshold)
	assert.Equal(t, "reconfigured: threshold none→5, window 10→none, failrate 50%→none, minimum 4→none", reg.Events(1)[0].Reason)
	st := b.Stats()
	assert.Empty(t, st.Window)
	for range 4 {
		require.Error(t, b.Do(ctx, func(context.Context) error { return errors.New("down") }))
	}
	assert.Equal(t, runtime.Closed, b.State(), "4 failures: below the threshold, no rate")
	require.Error(t, b.Do(ctx, func(context.Context) error { return errors.New("down") }))
	assert.Equal(t, runtime.Open, b.State())
}

// TestUpdatedTimeWindowCountsWithoutTheLock: a time window that Update
// puts in place (another period, or one where there was none) counts
// successes without its lock, through routes made before it, as a window
// made with the breaker does: the first success records itself and
// publishes the bucket, the others are counted on their P's counter; the
// counts stay exact, and the route still admits on its fast path.
func TestUpdatedTimeWindowCountsWithoutTheLock(t *testing.T) {
	defer runtime.ForgetCallStates()() // a budget or provenance record elsewhere sends every call off the fast path
	for _, created := range []runtime.Config{
		{Name: "reshaped", WindowPeriod: time.Minute},
		{Name: "made-live"},
	} {
		synctest.Test(t, func(t *testing.T) {
			reg := runtime.NewRegistry(runtime.WithoutEnv(), runtime.WithLogger(discardLogger()))
			rt := breakerimpl.NewRoute(reg, anyImpl, breakerimpl.RouteConfig{Breaker: created})
			b := rt.Breaker()
			require.NoError(t, reg.Update(runtime.Config{Name: created.Name, WindowPeriod: 2 * time.Minute}))
			ctx := context.Background()
			for range 10 {
				c, ok := rt.EnterFast()
				if !ok {
					var err error
					c, err = rt.Enter(ctx)
					require.NoError(t, err)
				}
				var err error
				c.Exit(ctx, &err)
			}
			st := b.Stats()
			assert.Equal(t, "2m0s", st.Window, created.Name)
			assert.Equal(t, 10, st.WindowCalls, created.Name)
			assert.Equal(t, 9, b.LockFreeSuccesses(), "%s: successes counted without the lock", created.Name)
			if created.WindowPeriod > 0 {
				_, ok := rt.EnterFast()
				assert.True(t, ok, "the route made before admits on its fast path")
			}
			require.Equal(t, 1, calls(t, b, "x"))
			assert.Equal(t, 1, b.Stats().WindowFailures)
		})
	}
}

// TestUpdateInFlightOnAndOff: in-flight timing turned on live times the
// calls admitted from then on (one admitted before is not timed, and its
// outcome counts in Stats, not towards tripping: its counts are gone);
// turned off, nothing is overdue any more.
func TestUpdateInFlightOnAndOff(t *testing.T) {
	reg, clk := newTestRegistry(t)
	b := reg.Breaker(runtime.Config{Name: "push2ex", FailureThreshold: 1})
	ctx := context.Background()
	before, err := b.Acquire(ctx)
	require.NoError(t, err)
	require.NoError(t, reg.Update(runtime.Config{Name: "push2ex", InFlight: 2 * time.Second}))
	assert.Equal(t, "reconfigured: inflight none→2s", reg.Events(1)[0].Reason)
	clk.Advance(3 * time.Second)
	assert.Equal(t, runtime.Closed, b.State(), "the call admitted before is not timed")
	b.Release(before, errors.New("late"))
	st := b.Stats()
	assert.Equal(t, uint64(1), st.Failures, "counted in Stats")
	assert.Equal(t, runtime.Closed, st.State, "not towards tripping")
	assert.Zero(t, st.ConsecutiveFailures)

	after, err := b.Acquire(ctx)
	require.NoError(t, err)
	assert.Equal(t, 1, b.Stats().InFlight)
	clk.Advance(3 * time.Second)
	assert.Equal(t, runtime.Open, b.State(), "the call admitted after is overdue")
	assert.Equal(t, "call in flight 3s > inflight=2s", reg.Events(1)[0].Reason)
	b.Release(after, nil)
	b.Reset()

	held, err := b.Acquire(ctx)
	require.NoError(t, err)
	require.NoError(t, reg.Update(runtime.Config{Name: "push2ex", Off: runtime.SettingInFlight}))
	clk.Advance(time.Hour)
	assert.Equal(t, runtime.Closed, b.State())
	b.Release(held, nil)
	st = b.Stats()
	assert.Zero(t, st.InFlight)
	assert.Zero(t, st.InFlightSeconds)
	assert.Zero(t, st.Failures)
}

// TestUpdateConcurrency: a bulkhead turned on live limits new calls; a
// lowered limit lets the calls holding a slot finish and admits anew only
// below it; a raised one hands its slots to the calls queued; turned off,
// nothing waits.
func TestUpdateConcurrency(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := newLoadRegistry()
		b := reg.Breaker(runtime.Config{Name: "slow"})
		refused, cancel := context.WithCancel(context.Background())
		cancel() // a call that finds no free slot is refused at once
		require.NoError(t, reg.Update(runtime.Config{Name: "slow", Concurrency: 2}))
		assert.Equal(t, "reconfigured: concurrency none→2", reg.Events(1)[0].Reason)
		release := make(chan struct{})
		first, second := hold(t, b, release), hold(t, b, release)
		require.ErrorIs(t, b.Do(refused, notCalled(t)), runtime.ErrBulkheadFull)

		require.NoError(t, reg.Update(runtime.Config{Name: "slow", Concurrency: 1}))
		st := b.Stats()
		assert.Equal(t, 1, st.Concurrency)
		assert.Equal(t, 2, st.InFlight, "the calls holding a slot keep it")
		close(release)
		require.NoError(t, <-first)
		require.NoError(t, <-second)

		release = make(chan struct{})
		third := hold(t, b, release)
		require.ErrorIs(t, b.Do(refused, notCalled(t)), runtime.ErrBulkheadFull, "one slot now")
		queued := make(chan error, 1)
		go func() { queued <- b.Do(context.Background(), func(context.Context) error { return nil }) }()
		synctest.Wait()
		require.NoError(t, reg.Update(runtime.Config{Name: "slow", Concurrency: 3}))
		synctest.Wait()
		select {
		case err := <-queued:
			require.NoError(t, err, "the raised limit's slot went to the call queued")
		default:
			t.Fatal("the queued call still waits")
		}

		require.NoError(t, reg.Update(runtime.Config{Name: "slow", Off: runtime.SettingConcurrency}))
		assert.Equal(t, "reconfigured: concurrency 3→none", reg.Events(1)[0].Reason)
		for range 5 {
			require.NoError(t, b.Do(refused, func(context.Context) error { return nil }))
		}
		st = b.Stats()
		assert.Zero(t, st.Concurrency)
		assert.Equal(t, uint64(2), st.BulkheadFull, "counted while it was on")
		close(release)
		require.NoError(t, <-third)

		require.NoError(t, reg.Update(runtime.Config{Name: "slow", Concurrency: 1}))
		release = make(chan struct{})
		fourth := hold(t, b, release)
		require.ErrorIs(t, b.Do(refused, notCalled(t)), runtime.ErrBulkheadFull, "on again: every slot it lent came back")
		close(release)
		require.NoError(t, <-fourth)
		assert.Zero(t, b.Stats().InFlight)
	})
}

// TestUpdateThrottle: a throttle turned on live refuses as the SRE
// formula says from the calls counted since, a new K judges those counts
// at once, and turned off it refuses nothing.
func TestUpdateThrottle(t *testing.T) {
	reg, _ := newTestRegistry(t, runtime.WithRand(rand.New(&draws{vals: []float64{0.5}})))
	b := reg.Breaker(runtime.Config{Name: "flaky", FailureThreshold: 1000})
	for range 10 {
		require.ErrorIs(t, call(b, errBoom), errBoom, "no throttle yet")
	}
	require.NoError(t, reg.Update(runtime.Config{Name: "flaky", Throttle: 2}))
	assert.Equal(t, "reconfigured: throttle none→2", reg.Events(1)[0].Reason)
	require.NoError(t, call(b, nil), "the failures before it are not the throttle's: probability 0")
	requests, accepted := 1, 1
	for {
		p := sreProbability(requests, accepted, 2)
		assert.InDelta(t, p, b.Stats().ThrottleProbability, 1e-12)
		err := call(b, errBoom)
		requests++
		if p > 0.5 { // the draw
			require.ErrorIs(t, err, runtime.ErrThrottled, "at %v", p)
			break
		}
		require.ErrorIs(t, err, errBoom, "at %v", p)
	}
	assert.Equal(t, 7, requests, "(6 − 2·1)/7 > 0.5")

	require.NoError(t, reg.Update(runtime.Config{Name: "flaky", Throttle: 6}))
	assert.Equal(t, "reconfigured: throttle 2→6", reg.Events(1)[0].Reason)
	assert.InDelta(t, sreProbability(requests, accepted, 6), b.Stats().ThrottleProbability, 1e-12, "the new K over the counts kept")
	require.ErrorIs(t, call(b, errBoom), errBoom, "(7 − 6)/8 < the draw")

	require.NoError(t, reg.Update(runtime.Config{Name: "flaky", Off: runtime.SettingThrottle}))
	for range 20 {
		require.ErrorIs(t, call(b, errBoom), errBoom, "no throttle")
	}
	st := b.Stats()
	assert.Zero(t, st.ThrottleProbability)
	assert.Equal(t, uint64(1), st.Throttled, "the throttle is gone, its window with it, but its refusal stays in the total")
}

// TestUpdateEveryKeyInOneEvent: one Event per breaker, its reason every
// key that changed, in the words of the annotation keys.
func TestUpdateEveryKeyInOneEvent(t *testing.T) {
	reg, _ := newTestRegistry(t)
	reg.Breaker(runtime.Config{Name: "em", WindowCalls: 100})
	require.NoError(t, reg.Update(runtime.Config{Name: "em", WindowPeriod: time.Minute, SlowCall: 2 * time.Second,
		InFlight: 30 * time.Second, Concurrency: 4, Throttle: 2, ResetTimeout: time.Minute}))
	evs := reg.Events(0)
	require.Len(t, evs, 1)
	assert.Equal(t, "reconfigured: reset 30s→1m0s, window 100→1m0s, slow none→2s, slowrate none→50%, inflight none→30s, concurrency none→4, throttle none→2", evs[0].Reason)
	assert.Equal(t, runtime.Closed, evs[0].From)
	assert.Equal(t, runtime.Closed, evs[0].To)
}

// TestUpdateUnderLoad: Updates that change every shape (window, timing,
// bulkhead, throttle) race calls through the breaker; afterwards no slot
// is lost and no call is timed for good (run it under -race).
func TestUpdateUnderLoad(t *testing.T) {
	reg, _ := newTestRegistry(t, runtime.WithRand(rand.New(rand.NewPCG(1, 2))))
	b := reg.Breaker(runtime.Config{Name: "busy", FailureThreshold: 1 << 20, Concurrency: 8, WindowPeriod: time.Minute})
	shapes := []runtime.Config{
		{Name: "busy", WindowCalls: 50, InFlight: time.Hour},
		{Name: "busy", Off: runtime.SettingConcurrency | runtime.SettingInFlight, Throttle: 3},
		{Name: "busy", Concurrency: 2, SlowCall: time.Hour},
		{Name: "busy", Off: runtime.SettingWindow | runtime.SettingThrottle, Concurrency: 16},
		{Name: "busy", WindowPeriod: time.Minute, InFlight: time.Hour, Throttle: 2},
		{Name: "busy", Off: runtime.SettingInFlight | runtime.SettingThrottle, Concurrency: 4},
	}
	stop := make(chan struct{})
	updated := make(chan struct{})
	go func() {
		defer close(updated)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			assert.NoError(t, reg.Update(shapes[i%len(shapes)]))
		}
	}()
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 500 {
				err := b.Do(context.Background(), func(context.Context) error {
					if (i+g)%3 == 0 {
						return errors.New("down")
					}
					return nil
				})
				if err != nil && !errors.Is(err, runtime.ErrThrottled) && err.Error() != "down" {
					t.Errorf("call %d: %v", i, err)
				}
			}
		})
	}
	wg.Wait()
	close(stop)
	<-updated
	require.NoError(t, reg.Update(runtime.Config{Name: "busy", Concurrency: 1, InFlight: time.Hour, Off: runtime.SettingThrottle}))
	st := b.Stats()
	assert.Zero(t, st.InFlight, "every slot given back")
	tok, err := b.Acquire(context.Background())
	require.NoError(t, err, "the one slot is free")
	b.Release(tok, nil)
	require.NoError(t, reg.Update(runtime.Config{Name: "busy", Off: runtime.SettingConcurrency}))
	assert.Zero(t, b.Stats().InFlight, "no call timed for good")
}

// TestSettingString: Setting bits read as the annotation keys they turn
// off.
func TestSettingString(t *testing.T) {
	assert.Equal(t, "none", runtime.Setting(0).String())
	assert.Equal(t, "window|concurrency", (runtime.SettingConcurrency | runtime.SettingWindow).String())
	assert.Equal(t, "reset..max|Setting(256)", (runtime.SettingBackoff | 1<<8).String())
}

// TestConcurrentUpdatesLoseNothing: two operators' Updates at once, one
// raising the threshold and one the reset, both hold: neither stores the
// other's field as it was before (each layered its own on the settings
// it read, and stored the whole).
func TestConcurrentUpdatesLoseNothing(t *testing.T) {
	for run := range 100 {
		reg := runtime.NewRegistry(runtime.WithoutEnv())
		b := reg.Breaker(runtime.Config{Name: "up", FailureThreshold: 3, ResetTimeout: time.Second})
		start := make(chan struct{})
		var wg sync.WaitGroup
		for _, c := range []runtime.Config{{Name: "up", FailureThreshold: 8}, {Name: "up", ResetTimeout: time.Minute}} {
			wg.Go(func() {
				<-start
				assert.NoError(t, reg.Update(c))
			})
		}
		close(start)
		wg.Wait()
		cfg := b.Config()
		require.Equal(t, 8, cfg.FailureThreshold, "run %d: %v", run, reg.Events(0))
		require.Equal(t, time.Minute, cfg.ResetTimeout, "run %d: %v", run, reg.Events(0))
	}
}

// TestHookMayUpdate: a hook that calls Update on the event of an Update
// runs, and its change holds: Update delivers its events once it has let
// go of what makes Updates one at a time.
func TestHookMayUpdate(t *testing.T) {
	var reg *runtime.Registry
	var once sync.Once
	reg = runtime.NewRegistry(runtime.WithoutEnv(), runtime.OnStateChange(func(ev runtime.Event) {
		once.Do(func() { assert.NoError(t, reg.Update(runtime.Config{Name: "up", HalfOpenMax: 2})) })
	}))
	b := reg.Breaker(runtime.Config{Name: "up", FailureThreshold: 3})
	require.NoError(t, reg.Update(runtime.Config{Name: "up", FailureThreshold: 4}))
	require.Eventually(t, func() bool { return b.Config().HalfOpenMax == 2 }, 5*time.Second, time.Millisecond)
	assert.Equal(t, 4, b.Config().FailureThreshold)
}

// TestUpdateResetPastTheBackoffCap: a ResetTimeout at or past the
// breaker's backoff cap would turn backoff off without a word: an error
// that says how to say so; with Off: SettingBackoff, or a ResetMax above
// it, the change holds.
func TestUpdateResetPastTheBackoffCap(t *testing.T) {
	reg := runtime.NewRegistry(runtime.WithoutEnv())
	b := reg.Breaker(runtime.Config{Name: "up", ResetTimeout: time.Second, ResetMax: 10 * time.Minute})
	for _, d := range []time.Duration{10 * time.Minute, 20 * time.Minute} {
		err := reg.Update(runtime.Config{Name: "up", ResetTimeout: d})
		require.ErrorContains(t, err, "is not below the backoff's cap ResetMax 10m0s")
		assert.Equal(t, 10*time.Minute, b.Config().ResetMax, "nothing changed")
		assert.Equal(t, time.Second, b.Config().ResetTimeout)
	}
	require.NoError(t, reg.Update(runtime.Config{Name: "up", ResetTimeout: 20 * time.Minute, ResetMax: time.Hour}))
	assert.Equal(t, time.Hour, b.Config().ResetMax)
	require.NoError(t, reg.Update(runtime.Config{Name: "up", ResetTimeout: 2 * time.Hour, Off: runtime.SettingBackoff}))
	assert.Zero(t, b.Config().ResetMax, "backoff off, as asked")
	require.NoError(t, reg.Update(runtime.Config{Name: "up", ResetTimeout: 3 * time.Hour}), "no cap left to pass")
}

// TestUpdateLowersSuccessesWhileHalfOpen: successes lowered while a
// breaker is HALF_OPEN with wins already made closes it at the next win,
// and the Event's reason keeps SPEC §4's form "(n/m)" with n at most m
// (it read "2/1").
func TestUpdateLowersSuccessesWhileHalfOpen(t *testing.T) {
	reg, clk := newTestRegistry(t)
	b := reg.Breaker(runtime.Config{Name: "h", FailureThreshold: 1, ResetTimeout: time.Second, SuccessThreshold: 3})
	ok := func(context.Context) error { return nil }
	require.Error(t, b.Do(context.Background(), func(context.Context) error { return errors.New("down") }))
	clk.Advance(time.Second)
	require.NoError(t, b.Do(context.Background(), ok))
	require.Equal(t, runtime.HalfOpen, b.State())
	require.NoError(t, reg.Update(runtime.Config{Name: "h", SuccessThreshold: 1}))
	require.NoError(t, b.Do(context.Background(), ok))
	require.Equal(t, runtime.Closed, b.State())
	assert.Equal(t, "half-open probe succeeded (1/1)", reg.Events(1)[0].Reason, "SPEC §4's form, never more wins than needed")
}
