package breakerimpl_test

import (
	"context"
	"errors"
	"math/rand/v2"
	goruntime "runtime"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/breakergen/breakergen/runtime"
	"github.com/breakergen/breakergen/runtime/breakerimpl"
)

// zeroDraws is a rand.Source whose every Float64 draw is 0: a throttle
// with any probability above zero refuses.
type zeroDraws struct{}

func (zeroDraws) Uint64() uint64 { return 0 }

// highDraws is a rand.Source whose every Float64 draw is just below 1: a
// throttle never refuses.
type highDraws struct{}

func (highDraws) Uint64() uint64 { return ^uint64(0) }

// bubbleRegistry is a registry for tests inside a synctest bubble: the
// real clock, which the bubble fakes.
func bubbleRegistry(opts ...runtime.Option) *runtime.Registry {
	return runtime.NewRegistry(append([]runtime.Option{runtime.WithoutEnv(), runtime.WithLogger(discardLogger())}, opts...)...)
}

// enter is what a generated wrapper does on its way in.
func enter(rt *breakerimpl.Route, ctx context.Context) (breakerimpl.Call, error) {
	if call, ok := rt.EnterFast(); ok {
		return call, nil
	}
	return rt.Enter(ctx)
}

// holdRoute enters a call on rt and keeps it in flight until release is
// closed; it returns the call's error channel once the call is admitted.
func holdRoute(t *testing.T, rt *breakerimpl.Route, release <-chan struct{}) <-chan error {
	t.Helper()
	call, err := enter(rt, context.Background())
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() {
		done <- once(call, context.Background(), func() error {
			<-release
			return nil
		})
	}()
	return done
}

// TestEnterFastLoad: a breaker with a bulkhead or a throttle sends every
// call off the fast path, and does so from its state word alone.
func TestEnterFastLoad(t *testing.T) {
	defer breakerimpl.ForgetCallStates()()
	reg, _ := newTestRegistry(t)
	for _, cfg := range []runtime.Config{{Name: "c", Concurrency: 4}, {Name: "t", Throttle: 2}} {
		rt := breakerimpl.NewRoute(reg, anyImpl, breakerimpl.RouteConfig{Breaker: cfg})
		_, ok := rt.EnterFast()
		assert.False(t, ok, cfg.Name)
		call, err := rt.Enter(context.Background())
		require.NoError(t, err)
		require.NoError(t, once(call, context.Background(), func() error { return nil }))
	}
	plain := breakerimpl.NewRoute(reg, anyImpl, breakerimpl.RouteConfig{Breaker: runtime.Config{Name: "plain"}})
	_, ok := plain.EnterFast()
	assert.True(t, ok, "a breaker without load control keeps its fast path")
}

// TestRouteLoadOrder: breaker, limiter, throttle, slot. A limiter refusal
// reaches neither the throttle nor the bulkhead; a throttle or bulkhead
// refusal gives the limiter's token back.
func TestRouteLoadOrder(t *testing.T) {
	reg, _ := newTestRegistry(t, runtime.WithRand(rand.New(zeroDraws{})))
	ctx := context.Background()

	t.Run("limiter before throttle and slot", func(t *testing.T) {
		rt := breakerimpl.NewRoute(reg, anyImpl, breakerimpl.RouteConfig{
			Breaker: runtime.Config{Name: "lim", Concurrency: 2, Throttle: 1, FailureThreshold: 100},
			Rate:    1, Burst: 1, MaxWait: time.Millisecond,
		})
		release := make(chan struct{})
		held := holdRoute(t, rt, release) // the one token, one slot
		_, err := rt.Enter(ctx)
		require.ErrorIs(t, err, runtime.ErrRateLimited)
		st := rt.Breaker().Stats()
		assert.Equal(t, uint64(1), st.RateLimited)
		assert.Equal(t, 1, st.InFlight, "the refused call took no slot")
		assert.Zero(t, st.Throttled)
		assert.Equal(t, 0.5, st.ThrottleProbability, "R 1 (the held call), A 0: the refused call is no request")
		close(release)
		require.NoError(t, <-held)
	})

	t.Run("slot refusal refunds the token", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			rt := breakerimpl.NewRoute(bubbleRegistry(), anyImpl, breakerimpl.RouteConfig{
				Breaker: runtime.Config{Name: "full", Concurrency: 1},
				Rate:    1, Burst: 2, MaxWait: 10 * time.Millisecond,
			})
			release := make(chan struct{})
			held := holdRoute(t, rt, release) // token 1 of 2, the slot
			_, err := rt.Enter(ctx)
			require.ErrorIs(t, err, runtime.ErrBulkheadFull)
			assert.True(t, rt.Limiter().Allow(), "token 2 came back")
			assert.False(t, rt.Limiter().Allow(), "0.01 tokens refilled in the 10ms wait")
			close(release)
			require.NoError(t, <-held)
		})
	})

	t.Run("throttle refusal refunds the token and takes no slot", func(t *testing.T) {
		rt := breakerimpl.NewRoute(reg, anyImpl, breakerimpl.RouteConfig{
			Breaker: runtime.Config{Name: "thr", Concurrency: 1, Throttle: 1, FailureThreshold: 100},
			Rate:    1, Burst: 2,
		})
		call, err := rt.Enter(ctx)
		require.NoError(t, err)
		require.Error(t, once(call, ctx, func() error { return errUpstream })) // R 1, A 0
		_, err = rt.Enter(ctx)
		require.ErrorIs(t, err, runtime.ErrThrottled)
		st := rt.Breaker().Stats()
		assert.Zero(t, st.InFlight)
		assert.Zero(t, st.BulkheadFull)
		assert.Equal(t, uint64(1), st.Throttled)
		assert.True(t, rt.Limiter().Allow(), "the token came back")
	})

	t.Run("breaker rejection before everything", func(t *testing.T) {
		rt := breakerimpl.NewRoute(reg, anyImpl, breakerimpl.RouteConfig{
			Breaker: runtime.Config{Name: "open", Concurrency: 1, Throttle: 1, FailureThreshold: 1},
			Rate:    1, Burst: 1,
		})
		trip(t, rt.Breaker()) // takes the token
		_, err := rt.Enter(ctx)
		require.ErrorIs(t, err, runtime.ErrOpen)
		st := rt.Breaker().Stats()
		assert.Zero(t, st.InFlight)
		assert.Zero(t, st.Throttled)
		assert.Zero(t, st.BulkheadFull)
	})
}

// TestRouteSlotMaxWait: a route's maxwait bounds the wait for a slot (an
// ErrBulkheadFull that matches no ctx error), the ctx deadline does when
// it comes first (matching both), and a slot freed within the wait
// admits the call.
func TestRouteSlotMaxWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := bubbleRegistry()
		rt := breakerimpl.NewRoute(reg, anyImpl, breakerimpl.RouteConfig{
			Breaker: runtime.Config{Name: "slow", Concurrency: 1},
			MaxWait: 100 * time.Millisecond,
		})
		release := make(chan struct{})
		held := holdRoute(t, rt, release)

		start := time.Now()
		_, err := rt.Enter(context.Background())
		require.ErrorIs(t, err, runtime.ErrBulkheadFull)
		assert.NotErrorIs(t, err, context.DeadlineExceeded)
		assert.Equal(t, 100*time.Millisecond, time.Since(start), "maxwait")

		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
		defer cancel()
		start = time.Now()
		_, err = rt.Enter(ctx)
		require.ErrorIs(t, err, runtime.ErrBulkheadFull)
		require.ErrorIs(t, err, context.DeadlineExceeded)
		assert.Equal(t, 30*time.Millisecond, time.Since(start), "the deadline came first")

		go func() {
			time.Sleep(60 * time.Millisecond)
			close(release)
		}()
		start = time.Now()
		call, err := rt.Enter(context.Background())
		require.NoError(t, err, "the slot came free within maxwait")
		assert.Equal(t, 60*time.Millisecond, time.Since(start))
		require.NoError(t, <-held)
		require.NoError(t, once(call, context.Background(), func() error { return nil }))

		st := rt.Breaker().Stats()
		assert.Equal(t, uint64(2), st.BulkheadFull)
		assert.Zero(t, st.Failures)
		assert.Zero(t, st.Ignored)
		assert.Zero(t, st.InFlight)
	})
}

// TestRouteLoadBudget: a refused call costs no budget: the budget is
// spent only once the call has its slot.
func TestRouteLoadBudget(t *testing.T) {
	reg, _ := newTestRegistry(t, runtime.WithRand(rand.New(zeroDraws{})))
	rt := breakerimpl.NewRoute(reg, anyImpl, breakerimpl.RouteConfig{
		Breaker: runtime.Config{Name: "b", Concurrency: 1},
	})
	release := make(chan struct{})
	held := holdRoute(t, rt, release)
	done, cancel := context.WithCancel(runtime.WithBudget(context.Background(), 1))
	cancel()
	_, err := rt.Enter(done)
	require.ErrorIs(t, err, runtime.ErrBulkheadFull)
	left, _ := runtime.BudgetLeft(done)
	assert.Equal(t, 1, left, "a bulkhead refusal")
	close(release)
	require.NoError(t, <-held)

	rt = breakerimpl.NewRoute(reg, anyImpl, breakerimpl.RouteConfig{
		Breaker: runtime.Config{Name: "t", Throttle: 1, FailureThreshold: 100},
	})
	ctx := runtime.WithBudget(context.Background(), 1)
	call, err := rt.Enter(context.Background())
	require.NoError(t, err)
	require.Error(t, once(call, ctx, func() error { return errUpstream })) // now p > 0
	_, err = rt.Enter(ctx)
	require.ErrorIs(t, err, runtime.ErrThrottled)
	left, _ = runtime.BudgetLeft(ctx)
	assert.Equal(t, 1, left, "a throttle refusal")
}

// TestRouteLoadNotRetried: a try the throttle refuses ends the retries;
// the call returns the last upstream error.
func TestRouteLoadNotRetried(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := breakerimpl.NewRoute(bubbleRegistry(runtime.WithRand(rand.New(zeroDraws{}))), anyImpl, breakerimpl.RouteConfig{
			Breaker:  runtime.Config{Name: "r", Throttle: 1, FailureThreshold: 100},
			Attempts: 3, Backoff: time.Millisecond,
		})
		calls := 0
		err := try(rt, context.Background(), func() error { calls++; return errUpstream })
		assert.ErrorIs(t, err, errUpstream, "the last upstream error, not the refusal")
		assert.Equal(t, 1, calls, "the second try was throttled")
		assert.Equal(t, uint64(1), rt.Breaker().Stats().Throttled)

		// With no try made, the refusal itself.
		err = try(rt, context.Background(), func() error { t.Error("called"); return nil })
		assert.ErrorIs(t, err, runtime.ErrThrottled)
	})
}

// panicker is an upstream that panics or exits its goroutine.
type panicker struct{ goexit bool }

func (p panicker) Quote(context.Context, string) (int, error) {
	if p.goexit {
		goruntime.Goexit()
	}
	panic("upstream panicked")
}

// TestRouteSlotFreedOnEveryExit: the generated wrapper's exits all give
// the slot back: success, failure, excluded error, invalid answer, panic
// and Goexit.
func TestRouteSlotFreedOnEveryExit(t *testing.T) {
	errNotFound := errors.New("not found")
	reg, _ := newTestRegistry(t, runtime.WithRand(rand.New(highDraws{})))
	cfg := breakerimpl.RouteConfig{Breaker: runtime.Config{Name: "one", Concurrency: 1, Throttle: 1, FailureThreshold: 100},
		Exclude: []error{errNotFound}}
	rt := breakerimpl.NewRoute(reg, anyImpl, cfg)
	ctx := context.Background()
	inFlight := func() int { return rt.Breaker().Stats().InFlight }

	for _, err := range []error{nil, errUpstream, errNotFound} {
		call, e := rt.Enter(ctx)
		require.NoError(t, e)
		assert.Equal(t, 1, inFlight())
		_ = once(call, ctx, func() error { return err })
		assert.Zero(t, inFlight(), "after %v", err)
	}
	assert.Equal(t, 1/4.0, rt.Breaker().Stats().ThrottleProbability, "R 3, A 2: the excluded error was accepted")

	call, err := rt.Enter(ctx)
	require.NoError(t, err)
	func() {
		var err error
		valid := false
		defer call.ExitValid(ctx, &err, &valid)
	}()
	assert.Zero(t, inFlight(), "after an invalid answer")

	for _, p := range []panicker{{}, {goexit: true}} {
		w := &guarded{next: p, route: rt}
		finished := make(chan struct{})
		go func() {
			defer close(finished)
			defer func() { _ = recover() }()
			_, _ = w.Quote(ctx, "600519")
		}()
		<-finished
		assert.Zero(t, inFlight(), "after goexit=%v", p.goexit)
	}
	st := rt.Breaker().Stats()
	assert.Equal(t, uint64(2), st.Failures, "errUpstream and the panic")
}

// TestRouteSlotsConcurrent: many goroutines through a generated-shape
// wrapper never have more than Concurrency calls in the upstream at once;
// with maxwait some are refused, and every refusal is counted.
func TestRouteSlotsConcurrent(t *testing.T) {
	const limit, goroutines, calls = 4, 24, 40
	reg := runtime.NewRegistry(runtime.WithoutEnv(), runtime.WithLogger(discardLogger()))
	rt := breakerimpl.NewRoute(reg, anyImpl, breakerimpl.RouteConfig{
		Breaker: runtime.Config{Name: "busy", Concurrency: limit},
		MaxWait: time.Microsecond,
	})
	up := &counting{}
	w := &guarded{next: up, route: rt}
	var refused atomic.Int64
	var wg sync.WaitGroup
	for range goroutines {
		wg.Go(func() {
			for range calls {
				_, err := w.Quote(context.Background(), "600519")
				if errors.Is(err, runtime.ErrBulkheadFull) {
					refused.Add(1)
				} else {
					assert.NoError(t, err)
				}
			}
		})
	}
	wg.Wait()
	assert.LessOrEqual(t, up.most.Load(), int64(limit))
	assert.Equal(t, int64(goroutines*calls), up.made.Load()+refused.Load())
	st := rt.Breaker().Stats()
	assert.Equal(t, uint64(refused.Load()), st.BulkheadFull)
	assert.Zero(t, st.InFlight)
	assert.Zero(t, st.Failures)
}

// counting is an upstream that counts the calls in it at once.
type counting struct{ now, most, made atomic.Int64 }

func (c *counting) Quote(context.Context, string) (int, error) {
	n := c.now.Add(1)
	for m := c.most.Load(); n > m && !c.most.CompareAndSwap(m, n); m = c.most.Load() {
	}
	goruntime.Gosched()
	c.made.Add(1)
	c.now.Add(-1)
	return 1, nil
}

// TestRouteLoadAllocs: the success path with a slot or a throttle and the
// throttle's refusal allocate nothing.
func TestRouteLoadAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under -race: make allocs runs this test without it")
	}
	ctx := context.Background()
	for _, cfg := range []runtime.Config{{Name: "c", Concurrency: 8}, {Name: "t", Throttle: 2}} {
		w, _ := newGuarded(t, nil, breakerimpl.RouteConfig{Breaker: cfg})
		assert.Zero(t, testing.AllocsPerRun(1000, func() { _, _ = w.Quote(ctx, "600519") }), cfg.Name)
	}
	w, _ := newGuarded(t, errUpstream, breakerimpl.RouteConfig{Breaker: runtime.Config{Name: "r", Throttle: 1, FailureThreshold: 1 << 30}},
		runtime.WithRand(rand.New(zeroDraws{})))
	_, _ = w.Quote(ctx, "600519") // p > 0 from now on: every call is refused
	_, err := w.Quote(ctx, "600519")
	require.ErrorIs(t, err, runtime.ErrThrottled)
	assert.Zero(t, testing.AllocsPerRun(1000, func() { _, _ = w.Quote(ctx, "600519") }), "throttle refusal")
}
