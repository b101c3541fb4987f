package breakerimpl_test

import (
	"context"
	"fmt"
	goruntime "runtime"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/breakergen/breakergen/runtime"
	"github.com/breakergen/breakergen/runtime/breakerimpl"
)

// source is a fake upstream source of a hedged chain: it answers v or err after
// delay, or ends with ctx, recording when it was asked and how it ended.
type source struct {
	name  string
	delay time.Duration
	v     int
	err   error
	// lateErr, if set, is what it returns when its ctx ends, instead of
	// ctx.Err().
	lateErr error
	// panicAt, if not 0, is the call (from 1) that panics.
	panicAt int

	mu       sync.Mutex
	asked    []time.Duration // since the test's start
	returned int
	canceled int
	cause    error
}

func (u *source) get(ctx context.Context, start time.Time) (int, error) {
	u.mu.Lock()
	u.asked = append(u.asked, time.Since(start))
	n := len(u.asked)
	u.mu.Unlock()
	if n == u.panicAt {
		panic("upstream client bug")
	}
	defer func() {
		u.mu.Lock()
		u.returned++
		u.mu.Unlock()
	}()
	select {
	case <-time.After(u.delay):
		u.mu.Lock()
		defer u.mu.Unlock()
		return u.v, u.err
	case <-ctx.Done():
		u.mu.Lock()
		u.canceled++
		u.cause = context.Cause(ctx)
		u.mu.Unlock()
		if u.lateErr != nil {
			return 0, u.lateErr
		}
		return 0, ctx.Err()
	}
}

func (u *source) askedAt() []time.Duration {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]time.Duration(nil), u.asked...)
}

// hedgedChain is a chain's routes and sources, for its call method.
type hedgedChain struct {
	reg       *runtime.Registry
	primary   *breakerimpl.Route
	routes    []*breakerimpl.Route
	sources   []*source
	fallbacks []runtime.Fallback[*source]
	valid     func(int) bool // nil: no valid func
	start     time.Time
}

func newHedgedChain(t *testing.T, cfg breakerimpl.RouteConfig, sources ...*source) *hedgedChain {
	t.Helper()
	reg := runtime.NewRegistry(runtime.WithLogger(discardLogger()), runtime.WithoutEnv(), runtime.WithCallCounts())
	return newHedgedChainOn(reg, cfg, sources...)
}

func newHedgedChainOn(reg *runtime.Registry, cfg breakerimpl.RouteConfig, sources ...*source) *hedgedChain {
	h := &hedgedChain{reg: reg, sources: sources, start: time.Now()}
	if cfg.Breaker.Name == "" {
		cfg.Breaker.Name = sources[0].name
	}
	h.primary = breakerimpl.NewRoute(reg, sources[0], cfg)
	for _, u := range sources[1:] {
		h.fallbacks = append(h.fallbacks, runtime.Fallback[*source]{Name: u.name, Impl: u})
		h.routes = append(h.routes, breakerimpl.NewRoute(reg, u, breakerimpl.RouteConfig{
			Breaker: runtime.Config{Name: breakerimpl.FallbackName(u.name)},
		}))
	}
	return h
}

// call is what the generator emits for a hedged chain method: the race,
// then the chain's error (no stale cache here).
func (h *hedgedChain) call(ctx context.Context) (int, error) {
	var run breakerimpl.Chain
	if run.Start(ctx, h.primary) {
		defer run.Done()
	}
	var v int
	var err error
	if h.valid == nil {
		v, err = breakerimpl.Race(&run, h.sources[0], h.fallbacks, h.routes,
			func(ctx context.Context, call breakerimpl.Call, impl *source) (int, error) {
				return h.try(ctx, call, impl)
			})
	} else {
		v, err = breakerimpl.RaceValid(&run, h.sources[0], h.fallbacks, h.routes,
			func(ctx context.Context, call breakerimpl.Call, impl *source) (int, bool, error) {
				return h.tryValid(ctx, call, impl)
			})
	}
	if run.Won() {
		return v, err
	}
	return 0, run.Err()
}

func (h *hedgedChain) try(ctx context.Context, call breakerimpl.Call, impl *source) (_ int, err error) {
	defer call.Exit(ctx, &err)
	err = breakerimpl.PanicGuard
	return impl.get(ctx, h.start)
}

func (h *hedgedChain) tryValid(ctx context.Context, call breakerimpl.Call, impl *source) (v int, valid bool, err error) {
	valid = true
	defer call.ExitValid(ctx, &err, &valid)
	err = breakerimpl.PanicGuard
	v, err = impl.get(ctx, h.start)
	valid = err != nil || h.valid(v)
	return
}

// provCall makes one call with a provenance record and reports how long it
// took.
func (h *hedgedChain) provCall(ctx context.Context) (int, *runtime.Provenance, time.Duration, error) {
	ctx, p := runtime.WithProvenance(ctx)
	begin := time.Now()
	v, err := h.call(ctx)
	return v, p, time.Since(begin), err
}

func stats(h *hedgedChain, name string) runtime.Stats {
	b, ok := h.reg.Lookup(name)
	if !ok {
		return runtime.Stats{}
	}
	return b.Stats()
}

const d = 100 * time.Millisecond // the tests' hedge delay

func TestHedgeBackupAnswersAtTheDelay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		em := &source{name: "eastmoney", delay: time.Hour, v: 1}
		sina := &source{name: "sina", delay: 0, v: 2}
		h := newHedgedChain(t, breakerimpl.RouteConfig{Hedge: d}, em, sina)

		v, p, took, err := h.provCall(context.Background())
		require.NoError(t, err)
		assert.Equal(t, 2, v, "the backup's answer")
		assert.Equal(t, d, took, "asked at the hedge delay, answered at once")
		assert.Equal(t, []time.Duration{d}, sina.askedAt())
		assert.Equal(t, "fallback:sina", p.Source)
		assert.True(t, p.Hedged)
		assert.Equal(t, []runtime.Skip{{Source: "eastmoney", Why: "slow"}}, p.Skipped)
		assert.Equal(t, 2, p.Tries, "both tries spent")
		assert.Equal(t, "fallback:sina hedged (eastmoney slow)", p.String())

		// The loser's ctx was cancelled, and that is not its failure.
		synctest.Wait()
		assert.Equal(t, 1, em.canceled)
		st := stats(h, "eastmoney")
		assert.Zero(t, st.Failures)
		assert.Equal(t, uint64(1), st.Ignored)
		assert.Equal(t, runtime.Closed, st.State)
	})
}

func TestHedgePrimaryBeforeTheDelayAsksNobodyElse(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		em := &source{name: "eastmoney", delay: d / 2, v: 1}
		sina := &source{name: "sina", v: 2}
		h := newHedgedChain(t, breakerimpl.RouteConfig{Hedge: d}, em, sina)

		v, p, took, err := h.provCall(context.Background())
		require.NoError(t, err)
		assert.Equal(t, 1, v)
		assert.Equal(t, d/2, took)
		assert.Empty(t, sina.askedAt())
		assert.Equal(t, "live", p.String())
		assert.False(t, p.Hedged)
		assert.Equal(t, 1, p.Tries)
	})
}

func TestHedgePrimaryRetriesInItsGoroutine(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		em := &source{name: "eastmoney", delay: d / 4, err: errUpstream}
		sina := &source{name: "sina", delay: time.Hour, v: 2}
		h := newHedgedChain(t, breakerimpl.RouteConfig{Hedge: d, Attempts: 2, Backoff: d / 4}, em, sina)
		go func() {
			time.Sleep(d / 3) // after the first try failed
			em.mu.Lock()
			em.err, em.v = nil, 1
			em.mu.Unlock()
		}()

		v, p, took, err := h.provCall(context.Background())
		require.NoError(t, err)
		assert.Equal(t, 1, v, "the second try answered")
		assert.Equal(t, 3*d/4, took, "two tries of d/4 and a backoff of d/4")
		assert.Equal(t, "live", p.String())
		assert.Equal(t, 2, p.Tries)
		assert.Empty(t, sina.askedAt(), "answered before the hedge delay")
	})
}

func TestHedgePrimaryCanStillWinTheRace(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		em := &source{name: "eastmoney", delay: 3 * d / 2, v: 1}
		sina := &source{name: "sina", delay: time.Hour, v: 2}
		h := newHedgedChain(t, breakerimpl.RouteConfig{Hedge: d}, em, sina)

		v, p, took, err := h.provCall(context.Background())
		require.NoError(t, err)
		assert.Equal(t, 1, v)
		assert.Equal(t, 3*d/2, took)
		assert.Equal(t, "eastmoney", p.Source)
		assert.True(t, p.Hedged)
		assert.Equal(t, "eastmoney hedged (fallback:sina slow)", p.String())
		synctest.Wait()
		assert.Equal(t, 1, sina.canceled)
		assert.Zero(t, stats(h, "fallback:sina").Failures)
	})
}

func TestHedgeFirstValidAnswerWins(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		em := &source{name: "eastmoney", delay: time.Hour, v: 1}
		sina := &source{name: "sina", delay: d / 10, v: -1}          // invalid
		tdx := &source{name: "tdx", delay: d / 10, err: errUpstream} // fails
		qq := &source{name: "qq", delay: d / 10, v: 4}
		h := newHedgedChain(t, breakerimpl.RouteConfig{Hedge: d, Hedges: 1}, em, sina, tdx, qq)
		h.valid = func(v int) bool { return v > 0 }

		v, p, took, err := h.provCall(context.Background())
		require.NoError(t, err)
		assert.Equal(t, 4, v, "neither the invalid answer nor the failure stopped the race")
		// sina is asked at d and answers invalid; the primary is still in
		// flight, so tdx waits for the next hedge at 2d, fails, and qq
		// is the third extra source at 3d.
		assert.Equal(t, []time.Duration{d}, sina.askedAt())
		assert.Equal(t, []time.Duration{2 * d}, tdx.askedAt())
		assert.Equal(t, []time.Duration{3 * d}, qq.askedAt())
		assert.Equal(t, 3*d+d/10, took)
		assert.Equal(t, "fallback:qq hedged (fallback:sina invalid, fallback:tdx error, eastmoney slow)", p.String())
		assert.Equal(t, 4, p.Tries)
	})
}

func TestHedgesAskTheKthExtraSourceAtKTimesTheDelay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		em := &source{name: "eastmoney", delay: time.Hour}
		sina := &source{name: "sina", delay: time.Hour}
		tdx := &source{name: "tdx", delay: d / 2, v: 3}
		qq := &source{name: "qq", v: 4}
		h := newHedgedChain(t, breakerimpl.RouteConfig{Hedge: d, Hedges: 2}, em, sina, tdx, qq)

		v, p, took, err := h.provCall(context.Background())
		require.NoError(t, err)
		assert.Equal(t, 3, v)
		assert.Equal(t, []time.Duration{d}, sina.askedAt())
		assert.Equal(t, []time.Duration{2 * d}, tdx.askedAt())
		assert.Equal(t, 2*d+d/2, took, "tdx answered before qq's turn at 3d")
		assert.Empty(t, qq.askedAt())
		assert.Equal(t, "fallback:tdx hedged (eastmoney slow, fallback:sina slow)", p.String())
		synctest.Wait()
		assert.Equal(t, 1, em.canceled)
		assert.Equal(t, 1, sina.canceled)
	})
}

func TestHedgesBoundTheExtraSourcesInFlight(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		em := &source{name: "eastmoney", delay: 10 * d, v: 1}
		sina := &source{name: "sina", delay: time.Hour}
		tdx := &source{name: "tdx", v: 3}
		h := newHedgedChain(t, breakerimpl.RouteConfig{Hedge: d}, em, sina, tdx)

		v, _, took, err := h.provCall(context.Background())
		require.NoError(t, err)
		assert.Equal(t, 1, v, "with hedges=1 and two sources in flight, tdx is never asked")
		assert.Equal(t, 10*d, took)
		assert.Empty(t, tdx.askedAt())
	})
}

func TestHedgeGoesOnInOrderWhenTheSourcesInFlightFail(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		em := &source{name: "eastmoney", delay: 3 * d / 2, err: errUpstream}
		sina := &source{name: "sina", delay: 3 * d / 4, err: errUpstream}
		tdx := &source{name: "tdx", v: 3}
		h := newHedgedChain(t, breakerimpl.RouteConfig{Hedge: d}, em, sina, tdx)

		v, p, took, err := h.provCall(context.Background())
		require.NoError(t, err)
		assert.Equal(t, 3, v)
		// em fails at 1.5d (sina, asked at d, still in flight), sina
		// fails at 1.75d, before the next hedge: tdx is asked in order.
		assert.Equal(t, []time.Duration{7 * d / 4}, tdx.askedAt())
		assert.Equal(t, 7*d/4, took)
		assert.True(t, p.Hedged)
		assert.Equal(t, "fallback:tdx hedged (eastmoney error, fallback:sina error)", p.String())
		answers := h.reg.ChainAnswers()
		assert.Contains(t, answers, runtime.ChainAnswer{Source: "fallback:tdx", Kind: "fallback", Count: 1},
			"asked in order, not as a hedge")
	})
}

func TestHedgeNoAnswer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		em := &source{name: "eastmoney", delay: 2 * d, err: errUpstream}
		sina := &source{name: "sina", delay: d / 2, err: errUpstream}
		h := newHedgedChain(t, breakerimpl.RouteConfig{Hedge: d}, em, sina)

		_, p, took, err := h.provCall(context.Background())
		var ce *runtime.ChainError
		require.ErrorAs(t, err, &ce)
		assert.ErrorIs(t, err, errUpstream)
		assert.Equal(t, 2*d, took)
		assert.Equal(t, "none (fallback:sina error, eastmoney error)", p.String())
		assert.Equal(t, 2, p.Tries)
		assert.Equal(t, uint64(1), stats(h, "eastmoney").Failures, "a real failure still counts")
	})
}

func TestHedgeLoserErrorIsNotAFailure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// The loser answers its cancellation with an error of its own,
		// not ctx.Err(): still not its failure.
		em := &source{name: "eastmoney", delay: time.Hour, lateErr: errUpstream}
		sina := &source{name: "sina", v: 2}
		h := newHedgedChain(t, breakerimpl.RouteConfig{Breaker: runtime.Config{FailureThreshold: 1}, Hedge: d}, em, sina)
		for range 3 {
			_, err := h.call(context.Background())
			require.NoError(t, err)
			synctest.Wait()
		}
		assert.Equal(t, 3, em.canceled)
		st := stats(h, "eastmoney")
		assert.Zero(t, st.Failures)
		assert.Equal(t, runtime.Closed, st.State, "threshold 1 and no trip")
	})
}

// TestHedgeLoserPastItsTimeoutFails: a loser that ignores the race's
// cancellation (go-redis does) and runs to its route's own timeout has
// failed, as it would have without the race: a dead primary trips, where
// before every call waited for it and counted nothing. One that ends at
// the cancellation, timeout or not, is still let off.
func TestHedgeLoserPastItsTimeoutFails(t *testing.T) {
	for _, ignores := range []bool{true, false} {
		t.Run(fmt.Sprintf("ignores cancellation %v", ignores), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				em, sina := &source{name: "eastmoney"}, &source{name: "sina", v: 2}
				h := newHedgedChain(t, breakerimpl.RouteConfig{
					Breaker: runtime.Config{FailureThreshold: 1}, Hedge: d, Timeout: 5 * d,
				}, em, sina)
				get := func(ctx context.Context, impl *source) (int, error) {
					if impl == sina {
						return sina.v, nil
					}
					dl, _ := ctx.Deadline()
					if ignores {
						<-time.After(time.Until(dl)) // deaf to the cancellation, as go-redis is
						return 0, context.DeadlineExceeded
					}
					<-ctx.Done()
					return 0, ctx.Err()
				}
				var run breakerimpl.Chain
				if run.Start(context.Background(), h.primary) {
					defer run.Done()
				}
				v, err := breakerimpl.Race(&run, em, h.fallbacks, h.routes,
					func(ctx context.Context, call breakerimpl.Call, impl *source) (_ int, err error) {
						defer call.Exit(ctx, &err)
						ctx, cancel := breakerimpl.WithTimeout(ctx, h.primary.Timeout())
						defer cancel()
						err = breakerimpl.PanicGuard
						return get(ctx, impl)
					})
				require.True(t, run.Won())
				require.NoError(t, err)
				assert.Equal(t, 2, v)
				st := stats(h, "eastmoney")
				if ignores {
					assert.Equal(t, uint64(1), st.Failures, "ran to its own timeout")
					assert.Equal(t, runtime.Open, st.State)
				} else {
					assert.Zero(t, st.Failures, "ended at the cancellation")
					assert.Equal(t, runtime.Closed, st.State)
				}
			})
		})
	}
}

// TestHedgeLoserPastTheCallersDeadlineFails: a primary that loses the
// race, ignores the cancellation and runs to the caller's deadline (the
// route has no timeout) has failed, as it would have without the race.
func TestHedgeLoserPastTheCallersDeadlineFails(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		em, sina := &source{name: "eastmoney"}, &source{name: "sina", v: 2}
		h := newHedgedChain(t, breakerimpl.RouteConfig{Breaker: runtime.Config{FailureThreshold: 1}, Hedge: d}, em, sina)
		ctx, cancel := context.WithTimeout(context.Background(), 5*d)
		defer cancel()
		var run breakerimpl.Chain
		if run.Start(ctx, h.primary) {
			defer run.Done()
		}
		v, err := breakerimpl.Race(&run, em, h.fallbacks, h.routes,
			func(ctx context.Context, call breakerimpl.Call, impl *source) (_ int, err error) {
				defer call.Exit(ctx, &err)
				err = breakerimpl.PanicGuard
				if impl == sina {
					return sina.v, nil
				}
				dl, _ := ctx.Deadline()
				<-time.After(time.Until(dl)) // deaf to the cancellation
				return 0, context.DeadlineExceeded
			})
		require.True(t, run.Won())
		require.NoError(t, err)
		assert.Equal(t, 2, v)
		assert.Equal(t, uint64(1), stats(h, "eastmoney").Failures, "ran to the caller's deadline")
	})
}

// TestHedgeHeldFallbackPastItsTimeoutIsLetOff: in a race whose sources all
// run on a raceCtx (RaceHooks.Held), a fallback that loses and runs to
// its own timeout is let off, as every source but the primary is
// (docs/hedge.md).
func TestHedgeHeldFallbackPastItsTimeoutIsLetOff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		em, sina := &source{name: "eastmoney"}, &source{name: "sina"}
		h := newHedgedChain(t, breakerimpl.RouteConfig{Breaker: runtime.Config{FailureThreshold: 1}, Hedge: d, Timeout: 5 * d}, em, sina)
		var run breakerimpl.Chain
		if run.Start(context.Background(), h.primary) {
			defer run.Done()
		}
		v, err := breakerimpl.RaceArgsWith(&run, em, h.fallbacks, h.routes, 0,
			func(ctx context.Context, call breakerimpl.Call, impl *source, _ int) (_ int, err error) {
				defer call.Exit(ctx, &err)
				ctx, cancel := breakerimpl.WithTimeout(ctx, 5*d)
				defer cancel()
				err = breakerimpl.PanicGuard
				if impl == em {
					<-time.After(2 * d) // answers after the fallback was asked
					return 1, nil
				}
				dl, _ := ctx.Deadline()
				<-time.After(time.Until(dl)) // deaf to the cancellation
				return 0, context.DeadlineExceeded
			}, breakerimpl.RaceHooks[int, int]{Held: true})
		require.True(t, run.Won())
		require.NoError(t, err)
		assert.Equal(t, 1, v)
		st := stats(h, breakerimpl.FallbackName("sina"))
		assert.Zero(t, st.Failures, "a fallback that lost is let off")
		assert.Equal(t, uint64(1), st.Ignored)
	})
}

func TestHedgeCallersCancelIsNotALoss(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		em := &source{name: "eastmoney", delay: time.Hour, lateErr: errUpstream}
		sina := &source{name: "sina", delay: time.Hour}
		h := newHedgedChain(t, breakerimpl.RouteConfig{Hedge: d}, em, sina)
		ctx, cancel := context.WithTimeout(context.Background(), 3*d/2)
		defer cancel()
		_, err := h.call(ctx)
		assert.ErrorIs(t, err, context.DeadlineExceeded)
		assert.Equal(t, context.DeadlineExceeded, em.cause)
		assert.Equal(t, uint64(1), stats(h, "eastmoney").Failures,
			"an error after the caller's own deadline is the source's, as without hedge")
	})
}

func TestHedgeSpendsBudgetPerTry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		em := &source{name: "eastmoney", delay: time.Hour}
		sina := &source{name: "sina", delay: time.Hour}
		tdx := &source{name: "tdx", v: 3}
		h := newHedgedChain(t, breakerimpl.RouteConfig{Hedge: d, Hedges: 2}, em, sina, tdx)

		ctx := runtime.WithBudget(context.Background(), 5)
		v, p, _, err := h.provCall(ctx)
		require.NoError(t, err)
		assert.Equal(t, 3, v)
		left, _ := runtime.BudgetLeft(ctx)
		assert.Equal(t, 2, left, "three sources asked, three tries spent")
		assert.Equal(t, 3, p.Tries)

		// A budget of 2: the second hedge is refused, and the call waits
		// for the two in flight.
		ctx, cancel := context.WithTimeout(runtime.WithBudget(context.Background(), 2), time.Second)
		defer cancel()
		_, p, took, err := h.provCall(ctx)
		assert.ErrorIs(t, err, context.DeadlineExceeded)
		assert.Equal(t, time.Second, took)
		assert.Empty(t, tdx.askedAt()[1:], "tdx not asked again")
		assert.Contains(t, p.Skipped, runtime.Skip{Source: "fallback:tdx", Why: "budget", Err: runtime.ErrBudget})
	})
}

func TestHedgeRouteBudget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		em := &source{name: "eastmoney", delay: time.Hour}
		sina := &source{name: "sina", v: 2}
		h := newHedgedChain(t, breakerimpl.RouteConfig{Hedge: d, Budget: 1}, em, sina)
		ctx, cancel := context.WithTimeout(context.Background(), 2*d)
		defer cancel()
		_, p, _, err := h.provCall(ctx)
		assert.ErrorIs(t, err, context.DeadlineExceeded)
		assert.Empty(t, sina.askedAt(), "the route's budget of 1 went to the primary")
		assert.Equal(t, runtime.Skip{Source: "fallback:sina", Why: "budget", Err: runtime.ErrBudget}, p.Skipped[0])
	})
}

// TestHedgeOpenPrimary: an OPEN primary is passed over, and the fallback
// answers. Without call counting the race sees the OPEN state word and
// starts no goroutine for the primary, so the fallback is the race's first
// racer: it must still be asked as a fallback, not as the primary.
func TestHedgeOpenPrimary(t *testing.T) {
	for _, counted := range []bool{true, false} {
		t.Run(fmt.Sprintf("counted=%v", counted), func(t *testing.T) { hedgeOpenPrimary(t, counted) })
	}
}

func hedgeOpenPrimary(t *testing.T, counted bool) {
	synctest.Test(t, func(t *testing.T) {
		em := &source{name: "eastmoney", v: 1}
		sina := &source{name: "sina", delay: d / 2, v: 2}
		opts := []runtime.Option{runtime.WithLogger(discardLogger()), runtime.WithoutEnv()}
		if counted {
			opts = append(opts, runtime.WithCallCounts())
		}
		h := newHedgedChainOn(runtime.NewRegistry(opts...), breakerimpl.RouteConfig{Hedge: d}, em, sina)
		trip(t, h.primary.Breaker())

		v, p, took, err := h.provCall(context.Background())
		require.NoError(t, err)
		assert.Equal(t, 2, v)
		assert.Equal(t, d/2, took, "the fallback was asked at once")
		assert.Equal(t, "fallback:sina (eastmoney open)", p.String())
		assert.Equal(t, 1, p.Tries, "the rejection cost nothing")
		assert.Equal(t, uint64(1), h.primary.Breaker().Stats().Rejections, "the primary's refusal is counted")
		assert.Empty(t, em.askedAt())
		assert.Equal(t, []runtime.ChainAnswer{{Source: "fallback:sina", Kind: "fallback", Count: 1}},
			h.reg.ChainAnswers(), "counted as the fallback's answer")
	})
}

func TestHedgeSkipsAnOpenBackup(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		em := &source{name: "eastmoney", delay: time.Hour}
		sina := &source{name: "sina", v: 2}
		tdx := &source{name: "tdx", v: 3}
		h := newHedgedChain(t, breakerimpl.RouteConfig{Hedge: d}, em, sina, tdx)
		trip(t, h.routes[0].Breaker())

		v, p, took, err := h.provCall(context.Background())
		require.NoError(t, err)
		assert.Equal(t, 3, v, "the next source whose breaker admits a call")
		assert.Equal(t, d, took)
		assert.Equal(t, "fallback:tdx hedged (fallback:sina open, eastmoney slow)", p.String())
	})
}

func TestHedgeReRaisesASourcesPanic(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		em := &source{name: "eastmoney"}
		h := newHedgedChain(t, breakerimpl.RouteConfig{Hedge: d}, em, &source{name: "sina", delay: time.Hour})
		var run breakerimpl.Chain
		run.Start(context.Background(), h.primary)
		assert.PanicsWithValue(t, "boom", func() {
			_, _ = breakerimpl.Race(&run, em, h.fallbacks, h.routes,
				func(ctx context.Context, call breakerimpl.Call, impl *source) (_ int, err error) {
					defer call.Exit(ctx, &err)
					err = breakerimpl.PanicGuard
					if impl == em {
						panic("boom")
					}
					return impl.get(ctx, h.start)
				})
		})
		synctest.Wait()
		assert.Equal(t, uint64(1), stats(h, "eastmoney").Failures, "a panic is a failure")
	})
}

func TestHedgeSourceGoexitIsAnError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		em := &source{name: "eastmoney", err: errUpstream}
		sina := &source{name: "sina"}
		h := newHedgedChain(t, breakerimpl.RouteConfig{Hedge: d}, em, sina, &source{name: "tdx", v: 3})
		var run breakerimpl.Chain
		run.Start(context.Background(), h.primary)
		v, err := breakerimpl.Race(&run, em, h.fallbacks, h.routes,
			func(ctx context.Context, call breakerimpl.Call, impl *source) (_ int, err error) {
				defer call.Exit(ctx, &err)
				err = breakerimpl.PanicGuard
				if impl == sina {
					goruntime.Goexit() // as t.FailNow in a mock would
				}
				return impl.get(ctx, h.start)
			})
		require.NoError(t, err)
		assert.Equal(t, 3, v, "the race went on to the next source instead of waiting")
		st := stats(h, "fallback:sina")
		assert.Zero(t, st.Failures)
		assert.Equal(t, uint64(1), st.Ignored)
	})
}

// TestHedgePrimaryGoexitEndsTheCaller: the primary runs on the caller's
// goroutine, so its Goexit ends that goroutine, as in a chain without
// hedge; the race stops its timer and leaves no goroutine behind.
func TestHedgePrimaryGoexitEndsTheCaller(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		em := &source{name: "eastmoney"}
		sina := &source{name: "sina", v: 2}
		h := newHedgedChain(t, breakerimpl.RouteConfig{Hedge: d}, em, sina)
		returned := make(chan bool, 1)
		go func() {
			ok := false
			defer func() { returned <- ok }()
			var run breakerimpl.Chain
			run.Start(context.Background(), h.primary)
			_, _ = breakerimpl.Race(&run, em, h.fallbacks, h.routes,
				func(ctx context.Context, call breakerimpl.Call, impl *source) (_ int, err error) {
					defer call.Exit(ctx, &err)
					err = breakerimpl.PanicGuard
					goruntime.Goexit()
					return 0, nil
				})
			ok = true
		}()
		assert.False(t, <-returned, "Race did not return")
		time.Sleep(2 * d)
		synctest.Wait()
		assert.Empty(t, sina.askedAt(), "nobody was asked after the caller ended")
		assert.Equal(t, uint64(1), stats(h, "eastmoney").Ignored)
	})
}

// TestHedgeLeavesNoGoroutine: every goroutine a hedged call starts ends
// with its upstream call, which the cancellation ends: synctest.Test fails
// when a goroutine of the bubble is left blocked, and once the bubble has
// settled every upstream call that began has returned.
func TestHedgeLeavesNoGoroutine(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		em := &source{name: "eastmoney", delay: time.Hour}
		sina := &source{name: "sina", delay: time.Hour}
		tdx := &source{name: "tdx", v: 3}
		h := newHedgedChain(t, breakerimpl.RouteConfig{Hedge: d, Hedges: 2}, em, sina, tdx)
		for range 10 {
			_, err := h.call(context.Background())
			require.NoError(t, err)
		}
		synctest.Wait()
		for _, u := range h.sources {
			u.mu.Lock()
			assert.Equal(t, 10, len(u.asked), u.name)
			assert.Equal(t, 10, u.returned, "%s: every call that began has returned", u.name)
			u.mu.Unlock()
		}
		assert.Equal(t, 10, em.canceled)
		assert.Equal(t, 10, sina.canceled)
	})
}

func TestChainAnswers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		em := &source{name: "eastmoney", v: 1}
		sina := &source{name: "sina", v: 2}
		h := newHedgedChain(t, breakerimpl.RouteConfig{Breaker: runtime.Config{FailureThreshold: 100}, Hedge: d}, em, sina)
		call := func() {
			_, _ = h.call(context.Background())
			synctest.Wait() // the losers have returned
		}
		call() // live
		em.delay = time.Hour
		call() // hedged
		em.delay, em.err = 0, errUpstream
		call() // fallback
		sina.err = errUpstream
		call() // none
		synctest.Wait()
		assert.Equal(t, []runtime.ChainAnswer{
			{Source: "eastmoney", Kind: "live", Count: 1},
			{Source: "eastmoney", Kind: "none", Count: 1},
			{Source: "fallback:sina", Kind: "fallback", Count: 1},
			{Source: "fallback:sina", Kind: "hedged", Count: 1},
		}, h.reg.ChainAnswers())
	})
}

// TestChainWithoutHedgeAllocatesNothing: a chain route without hedge runs
// its primary on the caller's goroutine (a goroutine would allocate), and
// counting live answers adds no allocation either.
func TestChainWithoutHedgeAllocatesNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under -race: make allocs runs this test without it")
	}
	for _, counted := range []bool{false, true} {
		opts := []runtime.Option{runtime.WithLogger(discardLogger()), runtime.WithoutEnv()}
		if counted {
			opts = append(opts, runtime.WithCallCounts())
		}
		reg := runtime.NewRegistry(opts...)
		primary := breakerimpl.NewRoute(reg, anyImpl, breakerimpl.RouteConfig{Breaker: runtime.Config{Name: "p"}})
		fb := breakerimpl.NewRoute(reg, anyImpl, breakerimpl.RouteConfig{Breaker: runtime.Config{Name: "fallback:f"}})
		impls := []func() (int, error){func() (int, error) { return 1, nil }, func() (int, error) { return 2, nil }}
		valid := func(int) bool { return true }
		ctx := context.Background()
		allocs := testing.AllocsPerRun(1000, func() {
			_, _ = chainCall(ctx, primary, []*breakerimpl.Route{fb}, impls, valid, nil, "")
		})
		assert.Zero(t, allocs, "counted=%v", counted)
		if counted {
			assert.Equal(t, []runtime.ChainAnswer{{Source: "p", Kind: "live", Count: 1001}}, reg.ChainAnswers())
		} else {
			assert.Empty(t, reg.ChainAnswers(), "live needs call counting")
		}
	}
}

func TestChainAnswersWithoutHedge(t *testing.T) {
	reg, _ := newTestRegistry(t) // without call counts: no live answers
	primary := breakerimpl.NewRoute(reg, anyImpl, breakerimpl.RouteConfig{Breaker: runtime.Config{Name: "p", FailureThreshold: 100}})
	fb := breakerimpl.NewRoute(reg, anyImpl, breakerimpl.RouteConfig{Breaker: runtime.Config{Name: "fallback:f", FailureThreshold: 100}})
	stale := breakerimpl.NewStaleCache[string, int](reg, time.Hour, 8)
	var pErr, fErr error
	impls := []func() (int, error){
		func() (int, error) { return 1, pErr },
		func() (int, error) { return 2, fErr },
	}
	valid := func(int) bool { return true }
	call := func(s *breakerimpl.StaleCache[string, int]) {
		_, _ = chainCall(context.Background(), primary, []*breakerimpl.Route{fb}, impls, valid, s, "k")
	}
	call(stale) // live, not counted; cached
	pErr = errUpstream
	call(stale) // fallback
	fErr = errUpstream
	call(stale) // stale
	call(nil)   // none
	assert.Equal(t, []runtime.ChainAnswer{
		{Source: "fallback:f", Kind: "fallback", Count: 1},
		{Source: "p", Kind: "none", Count: 1},
		{Source: "stale", Kind: "stale", Count: 1},
	}, reg.ChainAnswers())
}

// TestHedgedPrimaryBeforeTheDelayAllocatesLittle: a hedged chain whose
// primary answers before the delay runs it on the caller's goroutine with
// its route's pooled race, with or without a provenance record. Through
// Race, the closure form generated code no longer uses, the ask closure
// escapes (at most 2 allocations) and the primary's ctx is the one more;
// generated code calls RaceArgs, which allocates only the ctx
// (TestRaceArgsPrimaryBeforeTheDelayAllocatesOnce; issue 24: at most 2).
func TestHedgedPrimaryBeforeTheDelayAllocatesLittle(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	em, sina := &source{name: "eastmoney", v: 1}, &source{name: "sina", v: 2}
	h := newHedgedChain(t, breakerimpl.RouteConfig{Hedge: time.Hour}, em, sina)
	call := func(ctx context.Context, code string) (int, error) { // as generated code does
		var run breakerimpl.Chain
		if run.Start(ctx, h.primary) {
			defer run.Done()
		}
		v, err := breakerimpl.Race(&run, em, h.fallbacks, h.routes,
			func(ctx context.Context, call breakerimpl.Call, impl *source) (_ int, err error) {
				defer call.Exit(ctx, &err)
				err = breakerimpl.PanicGuard
				return impl.v + len(code), nil
			})
		if run.Won() {
			return v, err
		}
		return 0, run.Err()
	}
	for _, prov := range []bool{false, true} {
		ctx := context.Background()
		var p *runtime.Provenance
		if prov {
			ctx, p = runtime.WithProvenance(ctx)
		}
		allocs := testing.AllocsPerRun(1000, func() {
			if v, err := call(ctx, "x"); v != 2 || err != nil {
				t.Fatalf("got %d, %v", v, err)
			}
		})
		assert.LessOrEqual(t, allocs, 3.0, "provenance %v", prov)
		if prov {
			assert.Equal(t, "live", p.String())
		}
	}
}

// TestHedgeCallReturnsAfterItsLosers: a hedged call returns once every
// source it asked has returned: the losers, the primary among them, are
// cancelled when the answer wins and the call waits for them, so no
// goroutine of the call outlives it.
func TestHedgeCallReturnsAfterItsLosers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		em := &source{name: "eastmoney", delay: time.Hour}
		sina := &source{name: "sina", delay: time.Hour}
		tdx := &source{name: "tdx", delay: d / 2, v: 3}
		h := newHedgedChain(t, breakerimpl.RouteConfig{Hedge: d, Hedges: 2}, em, sina, tdx)
		v, err := h.call(context.Background())
		require.NoError(t, err)
		assert.Equal(t, 3, v)
		for _, u := range h.sources { // no synctest.Wait: at the call's return
			u.mu.Lock()
			assert.Equal(t, 1, u.returned, "%s returned before the call did", u.name)
			u.mu.Unlock()
		}
		assert.ErrorIs(t, em.cause, context.Canceled, "the primary lost: cancelled")
	})
}
