package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/breakergen/breakergen/runtime"
	"github.com/breakergen/breakergen/runtime/breakerimpl"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// step is one line of a breaker's script: an action at the fake clock's
// current instant and the state expected after it.
type step struct {
	do   string // "ok", "fail", "acquire", "release-ok", "release-fail", "advance", "reset"
	d    time.Duration
	slot int           // for acquire/release: which held token
	want runtime.State // state after the step
	err  error         // for ok/fail/acquire: the admission error expected (nil: admitted)
	at   time.Duration // with want, the event's offset from t0 (checked when evt != "")
	evt  string        // expected new event "FROM>TO", "" for none
}

func TestBreakerSteps(t *testing.T) {
	cfg := runtime.Config{Name: "tdx", FailureThreshold: 3, ResetTimeout: 10 * time.Second, HalfOpenMax: 2, SuccessThreshold: 2}
	tests := []struct {
		name  string
		cfg   runtime.Config
		steps []step
	}{
		{"success keeps closed", cfg, []step{
			{do: "ok", want: runtime.Closed},
			{do: "fail", want: runtime.Closed},
			{do: "ok", want: runtime.Closed},
			{do: "fail", want: runtime.Closed},
			{do: "fail", want: runtime.Closed}, // a success in between reset the count
		}},
		{"consecutive failures trip", cfg, []step{
			{do: "fail", want: runtime.Closed},
			{do: "fail", want: runtime.Closed},
			{do: "advance", d: time.Second, want: runtime.Closed},
			{do: "fail", want: runtime.Open, evt: "CLOSED>OPEN", at: time.Second},
			{do: "ok", want: runtime.Open, err: runtime.ErrOpen},
		}},
		{"reset then probes close it", cfg, []step{
			{do: "fail"}, {do: "fail"}, {do: "fail", want: runtime.Open, evt: "CLOSED>OPEN"},
			{do: "advance", d: 9 * time.Second, want: runtime.Open},
			{do: "advance", d: time.Second, want: runtime.HalfOpen, evt: "OPEN>HALF_OPEN", at: 10 * time.Second},
			{do: "acquire", slot: 0, want: runtime.HalfOpen},
			{do: "acquire", slot: 1, want: runtime.HalfOpen},
			{do: "acquire", slot: 2, want: runtime.HalfOpen, err: runtime.ErrOpen}, // quota of 2 in use
			{do: "release-ok", slot: 0, want: runtime.HalfOpen},
			{do: "release-ok", slot: 1, want: runtime.Closed, evt: "HALF_OPEN>CLOSED", at: 10 * time.Second},
		}},
		{"probe failure re-opens with a fresh window", cfg, []step{
			{do: "fail"}, {do: "fail"}, {do: "fail", want: runtime.Open, evt: "CLOSED>OPEN"},
			{do: "advance", d: 10 * time.Second, want: runtime.HalfOpen, evt: "OPEN>HALF_OPEN"},
			{do: "advance", d: 3 * time.Second, want: runtime.HalfOpen},
			{do: "fail", want: runtime.Open, evt: "HALF_OPEN>OPEN", at: 13 * time.Second},
			{do: "advance", d: 9 * time.Second, want: runtime.Open},
			{do: "advance", d: time.Second, want: runtime.HalfOpen, evt: "OPEN>HALF_OPEN", at: 23 * time.Second},
		}},
		{"success resets progress of a probe run", cfg, []step{
			{do: "fail"}, {do: "fail"}, {do: "fail", want: runtime.Open, evt: "CLOSED>OPEN"},
			{do: "advance", d: 10 * time.Second, want: runtime.HalfOpen, evt: "OPEN>HALF_OPEN"},
			{do: "ok", want: runtime.HalfOpen},
			{do: "ok", want: runtime.Closed, evt: "HALF_OPEN>CLOSED"},
			{do: "fail", want: runtime.Closed},
			{do: "fail", want: runtime.Closed},
		}},
		{"outcome from an older period is ignored", cfg, []step{
			{do: "acquire", slot: 0, want: runtime.Closed}, // a slow call, admitted while CLOSED
			{do: "fail"}, {do: "fail"}, {do: "fail", want: runtime.Open, evt: "CLOSED>OPEN"},
			{do: "advance", d: 10 * time.Second, want: runtime.HalfOpen, evt: "OPEN>HALF_OPEN"},
			{do: "release-ok", slot: 0, want: runtime.HalfOpen}, // cannot close it
			{do: "acquire", slot: 1, want: runtime.HalfOpen},
			{do: "release-fail", slot: 1, want: runtime.Open, evt: "HALF_OPEN>OPEN"},
		}},
		{"failure from an older period cannot count in a later CLOSED one", cfg, []step{
			{do: "acquire", slot: 0, want: runtime.Closed},
			{do: "fail"}, {do: "fail"}, {do: "fail", want: runtime.Open, evt: "CLOSED>OPEN"},
			{do: "advance", d: 10 * time.Second, want: runtime.HalfOpen, evt: "OPEN>HALF_OPEN"},
			{do: "ok"}, {do: "ok", want: runtime.Closed, evt: "HALF_OPEN>CLOSED"},
			{do: "release-fail", slot: 0, want: runtime.Closed},
			{do: "fail"}, {do: "fail", want: runtime.Closed}, // only 2 of 3 count
			{do: "fail", want: runtime.Open, evt: "CLOSED>OPEN"},
		}},
		{"reset closes and records nothing", cfg, []step{
			{do: "fail"}, {do: "fail"}, {do: "fail", want: runtime.Open, evt: "CLOSED>OPEN"},
			{do: "reset", want: runtime.Closed},
			{do: "fail"}, {do: "fail", want: runtime.Closed},
		}},
		{"defaults: five failures, 30s", runtime.Config{Name: "d"}, []step{
			{do: "fail"}, {do: "fail"}, {do: "fail"}, {do: "fail", want: runtime.Closed},
			{do: "fail", want: runtime.Open, evt: "CLOSED>OPEN"},
			{do: "advance", d: 29 * time.Second, want: runtime.Open},
			{do: "advance", d: time.Second, want: runtime.HalfOpen, evt: "OPEN>HALF_OPEN", at: 30 * time.Second},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := newFakeClock()
			reg := runtime.NewRegistry(runtime.WithClock(clk), runtime.WithLogger(discardLogger()))
			b := reg.Breaker(tt.cfg)
			held := map[int]runtime.Token{}
			nev := 0
			for i, s := range tt.steps {
				where := fmt.Sprintf("step %d (%s)", i, s.do)
				var err error
				switch s.do {
				case "ok", "fail":
					var callErr error
					if s.do == "fail" {
						callErr = errors.New("upstream 502")
					}
					err = b.Do(context.Background(), func(context.Context) error { return callErr })
					if errors.Is(err, runtime.ErrOpen) || s.err == nil {
						if s.err == nil && err != nil && !errors.Is(err, callErr) {
							t.Fatalf("%s: unexpected error %v", where, err)
						}
					}
					if s.err != nil {
						assert.ErrorIs(t, err, s.err, where)
					}
				case "acquire":
					var tok runtime.Token
					tok, err = b.Acquire(context.Background())
					if s.err != nil {
						assert.ErrorIs(t, err, s.err, where)
					} else {
						require.NoError(t, err, where)
						held[s.slot] = tok
					}
				case "release-ok":
					b.Release(held[s.slot], nil)
				case "release-fail":
					b.Release(held[s.slot], io.ErrUnexpectedEOF)
				case "advance":
					clk.Advance(s.d)
				case "reset":
					b.Reset()
				}
				if s.want != runtime.Closed || s.do != "ok" && s.do != "fail" || s.evt != "" {
					assert.Equal(t, s.want, b.State(), where)
				}
				evs := reg.Events(0)
				if s.evt == "" {
					assert.Len(t, evs, nev, "%s: no new event expected", where)
					continue
				}
				if assert.Len(t, evs, nev+1, "%s: one new event expected", where) {
					ev := evs[0]
					assert.Equal(t, s.evt, ev.From.String()+">"+ev.To.String(), where)
					assert.Equal(t, tt.cfg.Name, ev.Source, where)
					assert.NotEmpty(t, ev.Reason, where)
					if s.at != 0 {
						assert.Equal(t, t0.Add(s.at), ev.Time, where)
					}
				}
				nev = len(evs)
			}
		})
	}
}

func TestRejectionNamesBreakerAndNextProbe(t *testing.T) {
	reg, _ := newTestRegistry(t)
	b := reg.Breaker(runtime.Config{Name: "eastmoney", FailureThreshold: 1, ResetTimeout: 30 * time.Second})
	trip(t, b)
	called := false
	err := b.Do(context.Background(), func(context.Context) error { called = true; return nil })
	require.ErrorIs(t, err, runtime.ErrOpen)
	assert.False(t, called, "an OPEN breaker must not call the upstream")
	var oe *runtime.OpenError
	require.ErrorAs(t, err, &oe)
	assert.Equal(t, "eastmoney", oe.Name)
	assert.Equal(t, t0.Add(30*time.Second), oe.Until)
	assert.Contains(t, err.Error(), "eastmoney")
	assert.Contains(t, err.Error(), "2026-03-02T09:30:30Z")
	st := b.Stats()
	assert.Equal(t, t0, st.OpenedAt)
	assert.Equal(t, t0.Add(30*time.Second), st.NextProbe)
}

func TestLostProbeIsReclaimed(t *testing.T) {
	reg, clk := newTestRegistry(t)
	b := reg.Breaker(runtime.Config{Name: "lost", FailureThreshold: 1, ResetTimeout: 10 * time.Second})
	trip(t, b)
	clk.Advance(10 * time.Second)
	require.Equal(t, runtime.HalfOpen, b.State())

	_, err := b.Acquire(context.Background()) // a probe whose goroutine hangs for ever
	require.NoError(t, err)
	_, err = b.Acquire(context.Background())
	require.ErrorIs(t, err, runtime.ErrOpen, "the single probe slot is taken")

	clk.Advance(10*time.Second - time.Nanosecond)
	assert.Equal(t, runtime.HalfOpen, b.State(), "not reclaimed before the window")
	clk.Advance(time.Nanosecond)
	assert.Equal(t, runtime.Open, b.State(), "reclaimed as a failure: OPEN with a fresh window")
	ev := reg.Events(1)[0]
	assert.Equal(t, runtime.HalfOpen, ev.From)
	assert.Contains(t, ev.Reason, "reclaimed")

	clk.Advance(10 * time.Second)
	require.Equal(t, runtime.HalfOpen, b.State())
	require.NoError(t, b.Do(context.Background(), func(context.Context) error { return nil }))
	assert.Equal(t, runtime.Closed, b.State(), "a new probe gets the slot and recovers")
}

func TestLostProbeReclaimedLazilyWithoutTimers(t *testing.T) {
	// A clock whose timers never fire: only reads of the state move it.
	clk := &stuckClock{now: t0}
	reg := runtime.NewRegistry(runtime.WithClock(clk), runtime.WithLogger(discardLogger()))
	b := reg.Breaker(runtime.Config{Name: "lazy", FailureThreshold: 1, ResetTimeout: time.Second})
	trip(t, b)
	clk.now = t0.Add(time.Second)
	require.Equal(t, runtime.HalfOpen, b.State())
	_, err := b.Acquire(context.Background())
	require.NoError(t, err)
	clk.now = t0.Add(2 * time.Second)
	assert.Equal(t, runtime.Open, b.State())
}

type stuckClock struct{ now time.Time }

func (c *stuckClock) Now() time.Time                                { return c.now }
func (c *stuckClock) AfterFunc(time.Duration, func()) runtime.Timer { return stoppedTimer{} }

type stoppedTimer struct{}

func (stoppedTimer) Stop() bool { return true }

func TestRouteTimeoutLengthensProbeHold(t *testing.T) {
	reg, clk := newTestRegistry(t)
	rt := breakerimpl.NewRoute(reg, anyImpl, breakerimpl.RouteConfig{Breaker: runtime.Config{Name: "slow", FailureThreshold: 1, ResetTimeout: 5 * time.Second}, Timeout: 20 * time.Second})
	trip(t, rt.Breaker())
	clk.Advance(5 * time.Second)
	_, err := rt.Enter(context.Background())
	require.NoError(t, err)
	clk.Advance(19 * time.Second)
	assert.Equal(t, runtime.HalfOpen, rt.Breaker().State(), "a probe may run for the route's timeout")
	clk.Advance(time.Second)
	assert.Equal(t, runtime.Open, rt.Breaker().State())
}

func TestOutcomeClasses(t *testing.T) {
	errNotFound := errors.New("not found")
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name     string
		ctx      context.Context
		err      error
		class    func(context.Context, error) runtime.Outcome
		failures uint64
		ignored  uint64
	}{
		{"nil is success", context.Background(), nil, nil, 0, 0},
		{"error is failure", context.Background(), io.EOF, nil, 1, 0},
		{"excluded error is success", context.Background(), fmt.Errorf("wrapped: %w", errNotFound), nil, 0, 0},
		{"caller cancel is ignored", canceled, context.Canceled, nil, 0, 1},
		{"cancel with live caller ctx is failure", context.Background(), context.Canceled, nil, 1, 0},
		{"deadline is failure", context.Background(), context.DeadlineExceeded, nil, 1, 0},
		{"classifier overrides", context.Background(), io.EOF, func(context.Context, error) runtime.Outcome { return runtime.Ignored }, 0, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var opts []runtime.Option
			if tt.class != nil {
				opts = append(opts, runtime.WithClassifier("c", tt.class))
			}
			reg, _ := newTestRegistry(t, opts...)
			rt := breakerimpl.NewRoute(reg, anyImpl, breakerimpl.RouteConfig{Breaker: runtime.Config{Name: "c", FailureThreshold: 1}, Exclude: []error{errNotFound}})
			call, err := rt.Enter(tt.ctx)
			require.NoError(t, err)
			callErr := tt.err
			call.Exit(tt.ctx, &callErr)
			st := rt.Breaker().Stats()
			assert.Equal(t, tt.failures, st.Failures)
			assert.Equal(t, tt.ignored, st.Ignored)
			want := runtime.Closed
			if tt.failures > 0 {
				want = runtime.Open
			}
			assert.Equal(t, want, st.State)
		})
	}
}

func TestPanicIsFailureFreesSlotAndIsReraised(t *testing.T) {
	reg, clk := newTestRegistry(t)
	rt := breakerimpl.NewRoute(reg, anyImpl, breakerimpl.RouteConfig{Breaker: runtime.Config{Name: "p", FailureThreshold: 1, ResetTimeout: time.Second}})
	b := rt.Breaker()
	trip(t, b)
	clk.Advance(time.Second)
	require.Equal(t, runtime.HalfOpen, b.State())

	guarded := func() (err error) {
		call, err := rt.Enter(context.Background())
		if err != nil {
			return err
		}
		defer call.Exit(context.Background(), &err)
		err = breakerimpl.PanicGuard
		panic("quote parser bug")
	}
	assert.PanicsWithValue(t, "quote parser bug", func() { _ = guarded() })
	assert.Equal(t, runtime.Open, b.State(), "the panicking probe re-opened the breaker")
	assert.Equal(t, "panic: quote parser bug", reg.Events(1)[0].Reason)
	assert.Equal(t, 0, b.Stats().ProbesInFlight)

	// Do behaves the same.
	clk.Advance(time.Second)
	assert.Panics(t, func() { _ = b.Do(context.Background(), func(context.Context) error { panic(42) }) })
	assert.Equal(t, runtime.Open, b.State())
	assert.Equal(t, "panic: 42", reg.Events(1)[0].Reason)
}

func TestHooksRunOutsideLocksInOrder(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	var reg *runtime.Registry
	reg, clk := newTestRegistry(t, runtime.OnStateChange(func(ev runtime.Event) {
		b, ok := reg.Lookup(ev.Source)
		require.True(t, ok)
		st := b.Stats() // calling back in must not deadlock
		mu.Lock()
		seen = append(seen, ev.From.String()+">"+ev.To.String()+"@"+st.State.String())
		mu.Unlock()
		if ev.To == runtime.HalfOpen {
			b.Reset() // a hook may even act on the breaker
		}
	}))
	b := reg.Breaker(runtime.Config{Name: "h", FailureThreshold: 1, ResetTimeout: time.Second})
	trip(t, b)
	clk.Advance(time.Second)
	assert.Equal(t, []string{"CLOSED>OPEN@OPEN", "OPEN>HALF_OPEN@HALF_OPEN"}, seen)
	assert.Equal(t, runtime.Closed, b.State())
	assert.Len(t, reg.Events(0), 2, "Reset records no event")
}

func TestTransitionLogLine(t *testing.T) {
	var logs logBuffer
	clk := newFakeClock()
	reg := runtime.NewRegistry(runtime.WithClock(clk), runtime.WithLogger(logs.logger()))
	b := reg.Breaker(runtime.Config{Name: "tdx", FailureThreshold: 1})
	_ = b.Do(context.Background(), func(context.Context) error { return errors.New("connection refused") })
	out := logs.String()
	assert.Equal(t, 1, strings.Count(out, "\n"), out)
	assert.Contains(t, out, `level=INFO msg="breaker[tdx] CLOSED → OPEN" breaker=tdx from=CLOSED to=OPEN reason="connection refused"`)
	b.Reset()
	assert.Contains(t, logs.String(), "reset")
}

func TestResetWithDefaultLogger(t *testing.T) {
	reg := runtime.NewRegistry(runtime.WithoutEnv())
	b := reg.Breaker(runtime.Config{Name: "nolog"})
	assert.NotPanics(t, b.Reset)
	assert.NotPanics(t, reg.ResetAll)
}

func TestResetClearsEveryCounter(t *testing.T) {
	reg, _ := newTestRegistry(t, runtime.WithCallCounts())
	b := reg.Breaker(runtime.Config{Name: "r", FailureThreshold: 2})
	_ = b.Do(context.Background(), func(context.Context) error { return nil })
	_ = b.Do(context.Background(), func(context.Context) error { return io.EOF })
	st := b.Stats()
	require.Equal(t, uint64(2), st.Calls)
	require.Equal(t, 1, st.ConsecutiveFailures)
	b.Reset() // CLOSED already: still clears
	st = b.Stats()
	assert.Equal(t, runtime.Stats{Name: "r", State: runtime.Closed, Status: runtime.LevelOK, Counted: true, FailureThreshold: 2, ResetSeconds: 30}, st)
	trip(t, b)
	reg.ResetAll()
	assert.Equal(t, runtime.Closed, b.State())
	assert.Equal(t, uint64(0), b.Stats().Failures)
	assert.Len(t, reg.Events(0), 1, "only the real trip is in the log")
}

func TestCallCounts(t *testing.T) {
	reg, clk := newTestRegistry(t, runtime.WithCallCounts())
	b := reg.Breaker(runtime.Config{Name: "n", FailureThreshold: 2})
	for range 3 {
		_ = b.Do(context.Background(), func(context.Context) error { return nil })
	}
	clk.Advance(time.Second)
	_ = b.Do(context.Background(), func(context.Context) error { return io.EOF })
	_ = b.Do(context.Background(), func(context.Context) error { return io.EOF })
	_ = b.Do(context.Background(), func(context.Context) error { return nil }) // rejected
	st := b.Stats()
	assert.Equal(t, uint64(5), st.Calls)
	assert.Equal(t, uint64(3), st.Successes)
	assert.Equal(t, uint64(2), st.Failures)
	assert.Equal(t, uint64(1), st.Rejections)
	assert.Equal(t, uint64(1), st.StateChanges)
	assertTime(t, t0, st.LastSuccess)
	assertTime(t, t0.Add(time.Second), st.LastFailure)
}

// TestRejectionsCountedWithoutCallCounts: a registry that does not count
// every call still counts the calls its breakers refuse, OPEN and
// ISOLATED alike (SPEC §4: counting them costs the CLOSED success path
// nothing), in Stats and in the Health JSON; Reset clears them.
func TestRejectionsCountedWithoutCallCounts(t *testing.T) {
	reg, _ := newTestRegistry(t)
	b := reg.Breaker(runtime.Config{Name: "r", FailureThreshold: 1})
	m := breakerJSON(t, b)
	assert.EqualValues(t, 0, m["rejections"], "there at zero")
	trip(t, b)
	for range 5 {
		require.ErrorIs(t, b.Do(context.Background(), func(context.Context) error { return nil }), runtime.ErrOpen)
	}
	b.Isolate("maintenance")
	require.ErrorIs(t, b.Do(context.Background(), func(context.Context) error { return nil }), runtime.ErrOpen)
	_, err := b.Acquire(context.Background())
	require.ErrorIs(t, err, runtime.ErrOpen)
	st := b.Stats()
	assert.False(t, st.Counted)
	assert.Equal(t, uint64(7), st.Rejections)
	assert.Zero(t, st.Calls, "calls and successes still need call counting")
	assert.Zero(t, st.Successes)
	m = breakerJSON(t, b)
	assert.EqualValues(t, 7, m["rejections"])
	assert.NotContains(t, m, "calls")
	b.Reset()
	assert.Zero(t, b.Stats().Rejections)
}

func assertTime(t *testing.T, want, got time.Time, msg ...any) {
	t.Helper()
	assert.True(t, want.Equal(got), "want %s, got %s %v", want, got, fmt.Sprint(msg...))
}

func fmtErr(format string, args ...any) error { return fmt.Errorf(format, args...) }

// TestPeriodWrapKeepsLimiter: after 2^32 transitions the period counter
// wraps; it skips 0, so that no state word is 0 and EnterFast, which lets a
// call of a limited route through only when the word is 0, never skips the
// limiter.
func TestPeriodWrapKeepsLimiter(t *testing.T) {
	defer runtime.ForgetCallStates()()
	reg, _ := newTestRegistry(t)
	rt := breakerimpl.NewRoute(reg, anyImpl, breakerimpl.RouteConfig{Breaker: runtime.Config{Name: "wrap"}, Rate: 1, Burst: 1, MaxWait: time.Millisecond})
	b := rt.Breaker()
	b.SetPeriod(1<<32 - 1)
	b.Reset() // the next period would be 0
	require.Equal(t, runtime.Closed, b.State())
	_, ok := rt.EnterFast()
	assert.False(t, ok, "a limited route must wait for its token")
	ctx := context.Background()
	call, err := rt.Enter(ctx)
	require.NoError(t, err, "the burst's token")
	call.Exit(ctx, new(error))
	_, err = rt.Enter(ctx)
	assert.ErrorIs(t, err, runtime.ErrRateLimited, "the limiter still decides")
}

func TestRetryAfterOpensForThatLong(t *testing.T) {
	reg, clk := newTestRegistry(t)
	b := reg.Breaker(runtime.Config{Name: "eastmoney", FailureThreshold: 5, ResetTimeout: 30 * time.Second})
	err := b.Do(context.Background(), func(context.Context) error {
		return fmt.Errorf("search: %w", &coolingError{httpError{429, 90 * time.Second}})
	})
	require.Error(t, err)
	assert.Equal(t, runtime.Open, b.State(), "one 429 opens at once, whatever the threshold")
	ev := reg.Events(1)[0]
	assert.Equal(t, "retry after 1m30s: search: HTTP 429", ev.Reason)
	assert.Equal(t, t0.Add(90*time.Second), b.Stats().NextProbe)
	clk.Advance(89 * time.Second)
	assert.Equal(t, runtime.Open, b.State(), "the cooldown, not the reset window")
	clk.Advance(time.Second)
	assert.Equal(t, runtime.HalfOpen, b.State())

	// A failing probe with a RetryAfter re-opens for that long too, capped at 24h.
	err = b.Do(context.Background(), func(context.Context) error { return &coolingError{httpError{403, 1000 * time.Hour}} })
	require.Error(t, err)
	assert.Equal(t, runtime.Open, b.State())
	assert.Equal(t, clk.Now().Add(24*time.Hour), b.Stats().NextProbe)
}

// TestRetryAfterTree: the first error of the tree, depth first, that has a
// RetryAfter method decides, through Unwrap() error and Unwrap() []error.
func TestRetryAfterTree(t *testing.T) {
	cool := func(d time.Duration) error { return &coolingError{httpError{429, d}} }
	plain := errors.New("plain")
	for _, tc := range []struct {
		name string
		err  error
		want time.Duration // 0: no cooldown, the breaker stays CLOSED
	}{
		{"plain", plain, 0},
		{"itself", cool(time.Minute), time.Minute},
		{"wrapped twice", fmt.Errorf("a: %w", fmt.Errorf("b: %w", cool(time.Minute))), time.Minute},
		{"second of a join", errors.Join(plain, fmt.Errorf("w: %w", cool(2*time.Minute))), 2 * time.Minute},
		{"nested joins", errors.Join(errors.Join(plain, plain), errors.Join(cool(3*time.Minute), cool(time.Hour))), 3 * time.Minute},
		{"the first one asks for nothing", errors.Join(cool(0), cool(time.Hour)), 0},
		{"multi-%w", fmt.Errorf("%w and %w", plain, cool(4*time.Minute)), 4 * time.Minute},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reg, clk := newTestRegistry(t)
			b := reg.Breaker(runtime.Config{Name: "tree", FailureThreshold: 5})
			_ = b.Do(context.Background(), func(context.Context) error { return tc.err })
			if tc.want == 0 {
				assert.Equal(t, runtime.Closed, b.State())
				return
			}
			require.Equal(t, runtime.Open, b.State())
			assert.Equal(t, clk.Now().Add(tc.want), b.Stats().NextProbe)
		})
	}
}

func TestRetryAfterLosesToExcludeAndClassifier(t *testing.T) {
	ban := &coolingError{httpError{403, time.Minute}}
	reg, _ := newTestRegistry(t, runtime.WithClassifier("classified", func(context.Context, error) runtime.Outcome { return runtime.Ignored }))
	rt := breakerimpl.NewRoute(reg, anyImpl, breakerimpl.RouteConfig{Breaker: runtime.Config{Name: "excluded"}, Exclude: []error{ban}})
	call, err := rt.Enter(context.Background())
	require.NoError(t, err)
	var callErr error = ban
	call.Exit(context.Background(), &callErr)
	assert.Equal(t, runtime.Closed, rt.Breaker().State())

	b := reg.Breaker(runtime.Config{Name: "classified"})
	_ = b.Do(context.Background(), func(context.Context) error { return ban })
	assert.Equal(t, runtime.Closed, b.State())
}

// TestOutcomeOutOfRangeIsIgnored: an Outcome that is none of the three,
// from a classifier or a Record caller, counts as Ignored, as Outcome
// says, rather than nowhere (or as an outcome the runtime keeps for
// itself).
func TestOutcomeOutOfRangeIsIgnored(t *testing.T) {
	for _, o := range []runtime.Outcome{3, 4, 9, 255} {
		bad := func(context.Context, error) runtime.Outcome { return o }
		reg, _ := newTestRegistry(t, runtime.WithClassifier("c", bad), runtime.WithCallCounts())
		b := reg.Breaker(runtime.Config{Name: "c", FailureThreshold: 1})
		_ = b.Do(context.Background(), func(context.Context) error { return errors.New("boom") })
		st := b.Stats()
		assert.Equal(t, uint64(1), st.Ignored, "classifier's %d", o)
		assert.Equal(t, runtime.Closed, b.State())

		r := reg.Breaker(runtime.Config{Name: "r"})
		tok, err := r.Acquire(context.Background())
		require.NoError(t, err)
		r.Record(tok, o, nil)
		assert.Equal(t, uint64(1), r.Stats().Ignored, "Record's %d", o)
	}
}

// TestClassifierPanicEndsTheCall: a classifier that panics ends the call
// as a failure before the panic goes on: the bulkhead's one slot and the
// probe's are free for the next call, and the failure is counted.
func TestClassifierPanicEndsTheCall(t *testing.T) {
	boom := errors.New("boom")
	panicky := func(context.Context, error) runtime.Outcome { panic("classifier bug") }
	reg, clk := newTestRegistry(t, runtime.WithClassifier("one", panicky), runtime.WithClassifier("probe", panicky))
	callPanics := func(b *runtime.Breaker) {
		t.Helper()
		assert.PanicsWithValue(t, "classifier bug", func() {
			_ = b.Do(context.Background(), func(context.Context) error { return boom })
		})
	}

	b := reg.Breaker(runtime.Config{Name: "one", Concurrency: 1, FailureThreshold: 5})
	callPanics(b)
	st := b.Stats()
	assert.Equal(t, uint64(1), st.Failures)
	require.Zero(t, st.InFlight, "the call ended") // else the next call would wait for the slot for ever
	require.NoError(t, b.Do(context.Background(), func(context.Context) error { return nil }), "the bulkhead's slot is free")

	p := reg.Breaker(runtime.Config{Name: "probe", FailureThreshold: 1, ResetTimeout: time.Second})
	callPanics(p)
	require.Equal(t, runtime.Open, p.State(), "the panic is a failure")
	clk.Advance(time.Second)
	callPanics(p)
	assert.Equal(t, runtime.Open, p.State(), "the probe failed")
	assert.Zero(t, p.Stats().ProbesInFlight, "and its slot is free")
}

// panickyRetry is an error whose RetryAfter panics: the counting of a
// failure asks it, after the call's slot is freed.
type panickyRetry struct{}

func (panickyRetry) Error() string             { return "bad" }
func (panickyRetry) RetryAfter() time.Duration { panic("RetryAfter bug") }

// TestClassifierPanicGuardIsTheClassifiers: the guard of a panicking
// classifier covers the classifier alone. An error whose own method panics
// while the failure is counted (the call finished) is not finished twice:
// the bulkhead's slot is freed once, the failure counted once. And a
// recorded call's panicking classifier frees its slot too.
func TestClassifierPanicGuardIsTheClassifiers(t *testing.T) {
	fail := func(context.Context, error) runtime.Outcome { return runtime.Failure }
	reg, _ := newTestRegistry(t, runtime.WithClassifier("x", fail))
	b := reg.Breaker(runtime.Config{Name: "x", Concurrency: 1, FailureThreshold: 5})
	assert.Panics(t, func() {
		_ = b.Do(context.Background(), func(context.Context) error { return panickyRetry{} })
	})
	st := b.Stats()
	assert.Equal(t, uint64(1), st.Failures, "counted once")
	assert.Equal(t, 0, st.InFlight, "freed once")

	panicky := func(context.Context, error) runtime.Outcome { panic("classifier bug") }
	rec, _ := newTestRegistry(t, runtime.WithRecorder(io.Discard), runtime.WithClassifier("r", panicky))
	defer rec.Close()
	r := rec.Breaker(runtime.Config{Name: "r", Concurrency: 1, FailureThreshold: 5})
	assert.Panics(t, func() {
		_ = r.Do(context.Background(), func(context.Context) error { return errors.New("boom") })
	})
	require.Zero(t, r.Stats().InFlight, "the recorded call ended") // else the next call would wait for ever
	require.NoError(t, r.Do(context.Background(), func(context.Context) error { return nil }))
}

// TestProbeIDsRunOut: a HALF_OPEN period that has given out every probe id
// refuses further probes without keeping their slots, so the slot count
// does not leak and the breaker can still close.
func TestProbeIDsRunOut(t *testing.T) {
	reg, clk := newTestRegistry(t)
	b := reg.Breaker(runtime.Config{Name: "ids", FailureThreshold: 1, ResetTimeout: time.Second, HalfOpenMax: 1})
	trip(t, b)
	clk.Advance(time.Second)
	require.Equal(t, runtime.HalfOpen, b.State())

	b.SetProbeSeq(runtime.ProbeIDs)
	_, err := b.Acquire(context.Background())
	require.ErrorIs(t, err, runtime.ErrOpen, "no id left: refused")
	assert.Zero(t, b.Stats().ProbesInFlight, "the refused probe's slot is free")

	b.SetProbeSeq(0)
	tok, err := b.Acquire(context.Background())
	require.NoError(t, err, "the slot was given back, so a probe is admitted")
	b.Release(tok, nil)
	assert.Equal(t, runtime.Closed, b.State())
}

// armClock is stuckClock that, when a breaker arms the timer of an OPEN
// period (after the transition is decided, before the new state shows),
// notes the newest event of reg then.
type armClock struct {
	stuckClock
	reg  *runtime.Registry
	seen []runtime.Event
}

func (c *armClock) AfterFunc(d time.Duration, f func()) runtime.Timer {
	c.seen = c.reg.Events(1)
	return c.stuckClock.AfterFunc(d, f)
}

// TestEventBeforeState: a transition's Event is in Registry.Events before
// its new state shows (State reads it without a lock): a reader who sees
// a breaker OPEN, or a fleet peer's mode, finds the Event too. The OPEN
// period's timer is armed just before the state is stored; the Event is
// there already.
func TestEventBeforeState(t *testing.T) {
	clk := &armClock{stuckClock: stuckClock{now: t0}}
	reg := runtime.NewRegistry(runtime.WithoutEnv(), runtime.WithClock(clk))
	clk.reg = reg
	b := reg.Breaker(runtime.Config{Name: "ev", FailureThreshold: 1, ResetTimeout: time.Minute})
	_ = b.Do(context.Background(), func(context.Context) error { return errors.New("boom") })
	require.Equal(t, runtime.Open, b.State())
	require.Len(t, clk.seen, 1, "no event yet when the OPEN period was armed")
	assert.Equal(t, runtime.Open, clk.seen[0].To)
}

// pausingClock runs pause (once armed) when a breaker arms its OPEN
// period's timer: inside the transition, after it is decided and before
// the new state is stored.
type pausingClock struct {
	stuckClock
	armed atomic.Bool
	pause func()
}

func (c *pausingClock) AfterFunc(d time.Duration, f func()) runtime.Timer {
	if c.armed.CompareAndSwap(true, false) {
		c.pause()
	}
	return c.stuckClock.AfterFunc(d, f)
}

// TestHookSeesItsEventsState: a hook that reads the breaker of its Event
// finds the Event's new state, even when a goroutine already delivering
// events (here a's caller, held in a's slow hook) is the one to run it:
// the Event is queued for the hooks only once the state is stored.
func TestHookSeesItsEventsState(t *testing.T) {
	clk := &pausingClock{stuckClock: stuckClock{now: t0}}
	inA, release := make(chan struct{}), make(chan struct{})
	hookB := make(chan runtime.State, 1)
	var b *runtime.Breaker
	var bOnce sync.Once
	reg := runtime.NewRegistry(runtime.WithoutEnv(), runtime.WithClock(clk), runtime.OnStateChange(func(ev runtime.Event) {
		switch ev.Source {
		case "a":
			close(inA)
			<-release // a slow hook: the delivering goroutine is busy
		case "b":
			bOnce.Do(func() { hookB <- b.State() })
		}
	}))
	a := reg.Breaker(runtime.Config{Name: "a", FailureThreshold: 1, ResetTimeout: time.Minute})
	b = reg.Breaker(runtime.Config{Name: "b", FailureThreshold: 1, ResetTimeout: time.Minute})
	fail := func(context.Context) error { return errors.New("boom") }

	aDone := make(chan struct{})
	go func() { // trips a, then delivers a's Event and what comes after
		defer close(aDone)
		_ = a.Do(context.Background(), fail)
	}()
	<-inA
	seen := make(chan runtime.State, 1)
	clk.pause = func() {
		close(release) // a's hook returns; its goroutine delivers on
		select {
		case s := <-hookB: // it delivered b's Event before b's state was stored
			seen <- s
		case <-aDone: // it found nothing more to deliver
		}
	}
	clk.armed.Store(true)
	_ = b.Do(context.Background(), fail)
	<-aDone
	var got runtime.State
	select {
	case got = <-seen:
	default:
		got = <-hookB // delivered by b's own caller, after the store
	}
	assert.Equal(t, runtime.Open, got, "the state b's hook read for its CLOSED→OPEN Event")
}

// TestHooksInRecordOrderAcrossBreakers: the hooks see the transitions of
// every breaker in the order Registry.Events has them. Here a's trip is
// recorded, and b trips whole (recorded, stored, flushed) while a's state
// is still being stored: b's Event waits for a's, which was recorded first.
func TestHooksInRecordOrderAcrossBreakers(t *testing.T) {
	clk := &pausingClock{stuckClock: stuckClock{now: t0}}
	var hooked []string
	reg := runtime.NewRegistry(runtime.WithoutEnv(), runtime.WithClock(clk), runtime.OnStateChange(func(ev runtime.Event) {
		hooked = append(hooked, ev.Source) // one goroutine here: a's caller
	}))
	a := reg.Breaker(runtime.Config{Name: "a", FailureThreshold: 1, ResetTimeout: time.Minute})
	b := reg.Breaker(runtime.Config{Name: "b", FailureThreshold: 1, ResetTimeout: time.Minute})
	fail := func(context.Context) error { return errors.New("boom") }
	clk.pause = func() { _ = b.Do(context.Background(), fail) } // inside a's transition
	clk.armed.Store(true)
	_ = a.Do(context.Background(), fail)
	require.Equal(t, runtime.Open, b.State())

	var logged []string
	for _, ev := range slices.Backward(reg.Events(0)) {
		logged = append(logged, ev.Source)
	}
	require.Equal(t, []string{"a", "b"}, logged, "the log's order")
	assert.Equal(t, logged, hooked, "the hooks' order")
}
