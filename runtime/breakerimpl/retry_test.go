package breakerimpl_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"testing/synctest"
	"time"

	"github.com/breakergen/breakergen/runtime"
	"github.com/breakergen/breakergen/runtime/breakerimpl"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// try is what the generator emits per guarded method for a route with tries.
func try(rt *breakerimpl.Route, ctx context.Context, upstream func() error) (err error) {
	retry := rt.Retry()
	for {
		call, ok := retry.EnterFast()
		if !ok {
			if call, err = retry.Enter(ctx, err); err != nil {
				return
			}
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

// TestRetryEnterFast: the inlined admission takes a plain CLOSED try only
// while the route's budget lasts, counts it like Enter, and leaves every
// other try to Enter.
func TestRetryEnterFast(t *testing.T) {
	defer breakerimpl.ForgetCallStates()()
	reg := runtime.NewRegistry(runtime.WithLogger(discardLogger()), runtime.WithoutEnv())
	rt := breakerimpl.NewRoute(reg, anyImpl, breakerimpl.RouteConfig{Breaker: runtime.Config{Name: "fast", FailureThreshold: 1}, Attempts: 3, Budget: 2})
	ctx := context.Background()
	retry := rt.Retry()
	for range 2 {
		call, ok := retry.EnterFast()
		require.True(t, ok, "a CLOSED try within the route's budget")
		var err error // a success
		call.Exit(ctx, &err)
	}
	assert.Equal(t, 2, retry.Tries())
	_, ok := retry.EnterFast()
	assert.False(t, ok, "the route's budget is spent")
	_, err := retry.Enter(ctx, errors.New("last"))
	assert.EqualError(t, err, "last", "Enter decides: the last upstream error")

	// OPEN: declined, and Enter rejects.
	assert.Error(t, try(rt, ctx, func() error { return &httpError{code: 403} })) // not retried
	require.Equal(t, runtime.Open, rt.Breaker().State())
	retry = rt.Retry()
	_, ok = retry.EnterFast()
	assert.False(t, ok, "an OPEN breaker")
	_, err = retry.Enter(ctx, nil)
	assert.ErrorIs(t, err, runtime.ErrOpen)
	assert.Zero(t, retry.Tries())

	// Once a budget or provenance record exists, every try looks in the ctx.
	rt.Breaker().Reset()
	_ = runtime.WithBudget(ctx, 1)
	retry = rt.Retry()
	_, ok = retry.EnterFast()
	assert.False(t, ok, "budgets in use")
	_, err = retry.Enter(runtime.WithBudget(ctx, 0), nil)
	assert.ErrorIs(t, err, runtime.ErrBudget)
}

func TestRetriedCallSuccessAllocatesNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under -race: make allocs runs this test without it")
	}
	reg := runtime.NewRegistry(runtime.WithLogger(discardLogger()), runtime.WithoutEnv())
	rt := breakerimpl.NewRoute(reg, anyImpl, breakerimpl.RouteConfig{Breaker: runtime.Config{Name: "em"}, Attempts: 2, Budget: 6})
	ctx := context.Background()
	ok := func() error { return nil }
	assert.Zero(t, testing.AllocsPerRun(1000, func() { _ = try(rt, ctx, ok) }))
}

type httpError struct {
	code int
}

func (e *httpError) Error() string { return fmt.Sprintf("HTTP %d", e.code) }

func (e *httpError) Retryable() bool { return e.code >= 500 }

// TestEnterOnceAsRetry: a chain's primary on a route of one try enters
// with EnterFast and EnterOnce (the generated shape, below), and that
// admits, refuses and counts tries as the first try of a Retry does, in
// each case: a CLOSED breaker, an OPEN one, a spent budget in the ctx, a
// try failed by fault injection (a try all the same), a rate limit.
func TestEnterOnceAsRetry(t *testing.T) {
	type admission struct {
		admitted bool
		tries    int
		err      error
	}
	viaRetry := func(rt *breakerimpl.Route, ctx context.Context) admission {
		var err error
		retry := rt.Retry()
		call, ok := retry.EnterFast()
		if !ok {
			if call, err = retry.Enter(ctx, nil); err != nil {
				return admission{false, retry.Tries(), err}
			}
		}
		call.Done(ctx, nil, false)
		return admission{true, retry.Tries(), nil}
	}
	viaOnce := func(rt *breakerimpl.Route, ctx context.Context) admission {
		var err error
		tries := 1
		call, ok := rt.EnterFast()
		if !ok {
			call, tries, err = rt.EnterOnce(ctx)
		}
		if err != nil {
			return admission{false, tries, err}
		}
		call.Done(ctx, nil, false)
		return admission{true, tries, nil}
	}
	cases := []struct {
		name string
		make func() (*breakerimpl.Route, context.Context)
		want admission
	}{
		{"closed", func() (*breakerimpl.Route, context.Context) {
			return breakerimpl.NewRoute(bubbleRegistry(), anyImpl, breakerimpl.RouteConfig{Breaker: runtime.Config{Name: "a"}}), context.Background()
		}, admission{true, 1, nil}},
		{"open", func() (*breakerimpl.Route, context.Context) {
			rt := breakerimpl.NewRoute(bubbleRegistry(), anyImpl, breakerimpl.RouteConfig{Breaker: runtime.Config{Name: "a"}})
			rt.Breaker().Isolate("test")
			return rt, context.Background()
		}, admission{false, 0, runtime.ErrOpen}},
		{"budget spent", func() (*breakerimpl.Route, context.Context) {
			return breakerimpl.NewRoute(bubbleRegistry(), anyImpl, breakerimpl.RouteConfig{Breaker: runtime.Config{Name: "a"}}),
				runtime.WithBudget(context.Background(), 0)
		}, admission{false, 0, runtime.ErrBudget}},
		{"injected", func() (*breakerimpl.Route, context.Context) {
			reg := bubbleRegistry(runtime.WithRand(rand.New(zeroDraws{})))
			return breakerimpl.NewRoute(reg, anyImpl, breakerimpl.RouteConfig{Breaker: runtime.Config{Name: "a", Fault: 1}}), context.Background()
		}, admission{false, 1, runtime.ErrInjected}},
		{"rate limited", func() (*breakerimpl.Route, context.Context) {
			rt := breakerimpl.NewRoute(bubbleRegistry(), anyImpl, breakerimpl.RouteConfig{Breaker: runtime.Config{Name: "a"}, Rate: 0.001, Burst: 1, MaxWait: time.Millisecond})
			require.NoError(t, try(rt, context.Background(), func() error { return nil }), "the one token")
			return rt, context.Background()
		}, admission{false, 0, runtime.ErrRateLimited}},
	}
	for _, c := range cases {
		synctest.Test(t, func(t *testing.T) {
			for _, enter := range []struct {
				name string
				do   func(*breakerimpl.Route, context.Context) admission
			}{{"Retry", viaRetry}, {"EnterOnce", viaOnce}} {
				got := enter.do(c.make())
				assert.Equal(t, c.want.admitted, got.admitted, "%s, %s: admitted", c.name, enter.name)
				assert.Equal(t, c.want.tries, got.tries, "%s, %s: tries", c.name, enter.name)
				if c.want.err == nil {
					assert.NoError(t, got.err, "%s, %s", c.name, enter.name)
				} else {
					assert.ErrorIs(t, got.err, c.want.err, "%s, %s", c.name, enter.name)
				}
			}
		})
	}
}
