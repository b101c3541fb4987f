package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/breakergen/breakergen/runtime"
	"github.com/breakergen/breakergen/runtime/breakerimpl"
)

// httpError is an upstream's answer the way a client would type it.
type httpError struct {
	code       int
	retryAfter time.Duration
}

func (e *httpError) Error() string { return fmt.Sprintf("HTTP %d", e.code) }

func (e *httpError) Retryable() bool { return e.code >= 500 }

type coolingError struct{ httpError }

func (e *coolingError) RetryAfter() time.Duration { return e.retryAfter }

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

func TestRetryable(t *testing.T) {
	done, cancel := context.WithCancel(context.Background())
	cancel()
	live := context.Background()
	tests := []struct {
		ctx  context.Context
		err  error
		want bool
	}{
		{live, nil, false},
		{live, errors.New("reset by peer"), true},
		{live, &httpError{code: 502}, true},
		{live, fmt.Errorf("quote: %w", &httpError{code: 404}), false},
		{live, errors.Join(errors.New("x"), &httpError{code: 400}), false},
		{live, &coolingError{httpError{code: 503}}, false}, // has RetryAfter: cool down instead
		{live, runtime.ErrRateLimited, false},
		{live, context.DeadlineExceeded, true}, // the route's own per-try timeout
		{done, context.Canceled, false},
		{done, errors.New("anything once the caller gave up"), false},
	}
	for i, tt := range tests {
		assert.Equal(t, tt.want, runtime.Retryable(tt.ctx, tt.err), "case %d: %v", i, tt.err)
	}
}

// try is what the generator emits per guarded method for a route with tries.
func try(rt *breakerimpl.Route, ctx context.Context, upstream func() error) (err error) {
	retry := rt.Retry()
	for {
		var call breakerimpl.Call
		if call, err = retry.Enter(ctx, err); err != nil {
			return
		}
		err = once(call, ctx, upstream)
		if !retry.Again(ctx, err) {
			return
		}
	}
}

func once(call breakerimpl.Call, ctx context.Context, upstream func() error) (err error) {
	defer call.Exit(ctx, &err)
	err = breakerimpl.PanicGuard
	return upstream()
}

func TestRetryTriesEachThroughTheBreakerWithBackoff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := runtime.NewRegistry(runtime.WithLogger(discardLogger()), runtime.WithoutEnv())
		rt := breakerimpl.NewRoute(reg, anyImpl, breakerimpl.RouteConfig{Breaker: runtime.Config{Name: "em", FailureThreshold: 3}, Attempts: 3, Backoff: 2 * time.Second})
		start := time.Now()
		var at []time.Duration
		err := try(rt, context.Background(), func() error {
			at = append(at, time.Since(start))
			return &httpError{code: 502}
		})
		assert.EqualError(t, err, "HTTP 502", "the last upstream error")
		assert.Equal(t, []time.Duration{0, 2 * time.Second, 4 * time.Second}, at)
		assert.Equal(t, runtime.Open, rt.Breaker().State(), "each try counted by the breaker: 3 tries tripped it")
		assert.Equal(t, uint64(3), rt.Breaker().Stats().Failures)

		// Open now: no try at all, the rejection comes back.
		err = try(rt, context.Background(), func() error { t.Fatal("called while open"); return nil })
		assert.ErrorIs(t, err, runtime.ErrOpen)
	})
}

func TestRetryStopsOnNonRetryableAndRejection(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := runtime.NewRegistry(runtime.WithLogger(discardLogger()), runtime.WithoutEnv())
		rt := breakerimpl.NewRoute(reg, anyImpl, breakerimpl.RouteConfig{Breaker: runtime.Config{Name: "em", FailureThreshold: 2}, Attempts: 5, Backoff: time.Second})
		n := 0
		err := try(rt, context.Background(), func() error { n++; return &httpError{code: 403} })
		assert.Equal(t, 1, n, "a 403 is tried once")
		assert.EqualError(t, err, "HTTP 403")

		n = 0
		err = try(rt, context.Background(), func() error { n++; return &httpError{code: 503} })
		assert.Equal(t, 1, n, "the breaker tripped after the first try (2 failures in a row) and rejected the second")
		assert.EqualError(t, err, "HTTP 503", "the last upstream error, not the rejection")
	})
}

func TestRetryBackoffHonoursDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := runtime.NewRegistry(runtime.WithLogger(discardLogger()), runtime.WithoutEnv())
		rt := breakerimpl.NewRoute(reg, anyImpl, breakerimpl.RouteConfig{Breaker: runtime.Config{Name: "em"}, Attempts: 4, Backoff: 3 * time.Second})
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		start := time.Now()
		n := 0
		err := try(rt, ctx, func() error { n++; return errors.New("flaky") })
		assert.Equal(t, 2, n, "a third try would start after the deadline")
		assert.Equal(t, 3*time.Second, time.Since(start), "no wait past the deadline is started")
		assert.EqualError(t, err, "flaky")
	})
}

func TestRetryJitterBounds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := runtime.NewRegistry(runtime.WithLogger(discardLogger()), runtime.WithoutEnv())
		rt := breakerimpl.NewRoute(reg, anyImpl, breakerimpl.RouteConfig{Breaker: runtime.Config{Name: "em", FailureThreshold: 1000}, Attempts: 6,
			Backoff: 100 * time.Millisecond, BackoffMax: 500 * time.Millisecond})
		for range 20 {
			var at []time.Time
			_ = try(rt, context.Background(), func() error { at = append(at, time.Now()); return errors.New("flaky") })
			require.Len(t, at, 6)
			for i := 1; i < len(at); i++ {
				ceil := min(500*time.Millisecond, 100*time.Millisecond<<(i-1))
				gap := at[i].Sub(at[i-1])
				assert.True(t, gap >= 0 && gap <= ceil, "wait %d = %v, want within [0, %v]", i, gap, ceil)
			}
		}
	})
}

func TestBudgetSharedAcrossCalls(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := runtime.NewRegistry(runtime.WithLogger(discardLogger()), runtime.WithoutEnv())
		rt := breakerimpl.NewRoute(reg, anyImpl, breakerimpl.RouteConfig{Breaker: runtime.Config{Name: "em", FailureThreshold: 100}, Attempts: 4, Backoff: time.Millisecond})
		ctx := runtime.WithBudget(context.Background(), 6)
		n := 0
		flaky := func() error { n++; return errors.New("flaky") }
		_ = try(rt, ctx, flaky)
		assert.Equal(t, 4, n)
		_ = try(rt, ctx, flaky)
		assert.Equal(t, 6, n, "the second call had 2 tries left")
		err := try(rt, ctx, flaky)
		assert.ErrorIs(t, err, runtime.ErrBudget, "no try left: ErrBudget")
		assert.Equal(t, 6, n)
		left, ok := runtime.BudgetLeft(ctx)
		assert.True(t, ok)
		assert.Zero(t, left)

		// Nested budgets are all spent; the smaller wins.
		outer := runtime.WithBudget(context.Background(), 3)
		inner := runtime.WithBudget(outer, 10)
		n = 0
		_ = try(rt, inner, flaky)
		assert.Equal(t, 3, n)
		left, _ = runtime.BudgetLeft(inner)
		assert.Zero(t, left)

		// The route's own budget.
		rb := breakerimpl.NewRoute(reg, anyImpl, breakerimpl.RouteConfig{Breaker: runtime.Config{Name: "rb", FailureThreshold: 100}, Attempts: 5, Budget: 2, Backoff: time.Millisecond})
		n = 0
		_ = try(rb, context.Background(), flaky)
		assert.Equal(t, 2, n)

		// WithBudget(ctx, 0) refuses every call, plain routes included.
		plain := breakerimpl.NewRoute(reg, anyImpl, breakerimpl.RouteConfig{Breaker: runtime.Config{Name: "plain"}})
		_, err = plain.Enter(runtime.WithBudget(context.Background(), 0))
		assert.ErrorIs(t, err, runtime.ErrBudget)
	})
}

func TestRunTimeSettings(t *testing.T) {
	var logs logBuffer
	restore := runtime.SetEnviron([]string{
		"BREAKER_EASTMONEY_THRESHOLD=4",
		"BREAKER_EASTMONEY_RESET=120", // seconds, as the origin story writes it
		"BREAKER_TDX_RESET=2m",
		"BREAKER_A_B_HALFOPEN=3", // a-b and a_b share variables
		"BREAKER_TENCENT_RATELIMIT=2/4",
		"BREAKER_TDX_THRESHOLD=many", // malformed: warned, ignored
		"BREAKER_TDX_COLOUR=blue",    // unknown key: warned
		"PATH=/usr/bin",
	})
	defer restore()
	reg := runtime.NewRegistry(runtime.WithLogger(logs.logger()),
		runtime.WithConfig(runtime.Config{Name: "eastmoney", ResetTimeout: time.Minute}),
		runtime.WithRateLimit("push2ex", 1, 1))

	em := reg.Breaker(runtime.Config{Name: "eastmoney", FailureThreshold: 5, ResetTimeout: 30 * time.Second})
	assert.Equal(t, 4, em.Config().FailureThreshold, "environment over annotation")
	assert.Equal(t, time.Minute, em.Config().ResetTimeout, "WithConfig over environment")
	tdx := reg.Breaker(runtime.Config{Name: "tdx", FailureThreshold: 5})
	assert.Equal(t, 2*time.Minute, tdx.Config().ResetTimeout)
	assert.Equal(t, 5, tdx.Config().FailureThreshold, "a malformed value keeps the lower layer")
	assert.Equal(t, 3, reg.Breaker(runtime.Config{Name: "a-b"}).Config().HalfOpenMax)

	tencent := breakerimpl.NewRoute(reg, anyImpl, breakerimpl.RouteConfig{Breaker: runtime.Config{Name: "tencent"}, Rate: 10, Burst: 10})
	rate, burst := tencent.Limiter().Rate()
	assert.Equal(t, 2.0, rate)
	assert.Equal(t, 4, burst)
	push := breakerimpl.NewRoute(reg, anyImpl, breakerimpl.RouteConfig{Breaker: runtime.Config{Name: "push2ex"}})
	require.NotNil(t, push.Limiter(), "an override may limit a name the annotations left unlimited")

	out := logs.String()
	assert.Contains(t, out, "BREAKER_TDX_THRESHOLD")
	assert.Contains(t, out, "BREAKER_TDX_COLOUR")
	assert.Equal(t, 2, strings.Count(out, "level=WARN"), out)

	quiet := runtime.NewRegistry(runtime.WithoutEnv(), runtime.WithLogger(discardLogger()))
	assert.Equal(t, 5, quiet.Breaker(runtime.Config{Name: "eastmoney"}).Config().FailureThreshold)
}

func TestParseRateLimit(t *testing.T) {
	r, b, err := runtime.ParseRateLimit("1.5/3")
	require.NoError(t, err)
	assert.Equal(t, 1.5, r)
	assert.Equal(t, 3, b)
	for _, bad := range []string{"", "1.5", "0/3", "-1/3", "x/3", "1/0", "1/x", "NaN/2"} {
		_, _, err := runtime.ParseRateLimit(bad)
		assert.Error(t, err, bad)
	}
}

func TestRouteExcluded(t *testing.T) {
	reg, _ := newTestRegistry(t)
	notFound := errors.New("not found")
	rt := breakerimpl.NewRoute(reg, anyImpl, breakerimpl.RouteConfig{Breaker: runtime.Config{Name: "x"}, Exclude: []error{notFound}})
	assert.True(t, rt.Excluded(fmt.Errorf("quote: %w", notFound)))
	assert.False(t, rt.Excluded(nil))
	assert.False(t, rt.Excluded(errors.New("down")))
}

func TestRetriedCallSuccessAllocatesNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under -race")
	}
	reg := runtime.NewRegistry(runtime.WithLogger(discardLogger()), runtime.WithoutEnv())
	rt := breakerimpl.NewRoute(reg, anyImpl, breakerimpl.RouteConfig{Breaker: runtime.Config{Name: "em"}, Attempts: 2, Budget: 6})
	ctx := context.Background()
	ok := func() error { return nil }
	assert.Zero(t, testing.AllocsPerRun(1000, func() { _ = try(rt, ctx, ok) }))
}
