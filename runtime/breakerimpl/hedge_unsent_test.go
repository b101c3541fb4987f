package breakerimpl_test

import (
	"context"
	"errors"
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

// errOneBody is why a try is unsent in these tests: the one body went to
// another try.
var errOneBody = errors.New("the one body was sent")

// oneBodyArgs is a race's arguments whose one body only the first try
// sends, as a hedged *http.Request without GetBody.
type oneBodyArgs struct {
	h    *hedgedChain
	sent *atomic.Bool
}

// oneBodyCall races h's sources, each try sending the one body if it is
// still there, else sending nothing; drops go to d. With early, the race
// knows before it admits a try (RaceHooks.Unsent); without, each try finds
// out once admitted, and settles its call with Call.Unsent.
func (h *hedgedChain) oneBodyCall(ctx context.Context, d *dropped, early bool) (int, error) {
	var run breakerimpl.Chain
	if run.Start(ctx, h.primary) {
		defer run.Done()
	}
	hooks := breakerimpl.RaceHooks[int, oneBodyArgs]{Drop: d.drop}
	if early {
		hooks.Unsent = func(a oneBodyArgs) error {
			if a.sent.Load() {
				return errOneBody
			}
			return nil
		}
	}
	v, err := breakerimpl.RaceArgsWith(&run, h.sources[0], h.fallbacks, h.routes, oneBodyArgs{h, new(atomic.Bool)},
		func(ctx context.Context, call breakerimpl.Call, impl *source, a oneBodyArgs) (int, error) {
			if !a.sent.CompareAndSwap(false, true) {
				return 0, call.Unsent(ctx, errOneBody)
			}
			return a.h.try(ctx, call, impl)
		}, hooks)
	if run.Won() {
		return v, err
	}
	return 0, run.Err()
}

// TestRaceUnsentSourceIsPassedOver: a source whose try sent nothing is
// passed over as "unsent", counted by its breaker as nothing, and the
// race goes on: the primary, which sent the body, still wins.
func TestRaceUnsentSourceIsPassedOver(t *testing.T) {
	for _, early := range []bool{true, false} {
		t.Run(map[bool]string{true: "early", false: "admitted"}[early], func(t *testing.T) { raceUnsentSource(t, early) })
	}
}

func raceUnsentSource(t *testing.T, early bool) {
	synctest.Test(t, func(t *testing.T) {
		em := &source{name: "eastmoney", delay: 2 * d, v: 1}
		sina := &source{name: "sina", v: 2}
		h := newHedgedChain(t, breakerimpl.RouteConfig{Hedge: d}, em, sina)
		var drops dropped

		ctx, p := runtime.WithProvenance(runtime.WithBudget(context.Background(), 5))
		v, err := h.oneBodyCall(ctx, &drops, early)
		require.NoError(t, err)
		assert.Equal(t, 1, v)
		left, _ := runtime.BudgetLeft(ctx)
		if early {
			assert.False(t, p.Hedged, "no other source was sent the request")
			assert.Equal(t, 4, left, "the one try spent the budget")
		} else {
			assert.True(t, p.Hedged, "admitted, then unsent: a known cost of the late check")
			assert.Equal(t, 3, left, "admitted, then unsent: a known cost of the late check")
		}
		require.Len(t, p.Skipped, 1)
		assert.Equal(t, runtime.Skip{Source: "fallback:sina", Why: "unsent", Err: errOneBody}, p.Skipped[0])
		assert.Empty(t, sina.askedAt(), "never called")
		st := stats(h, "fallback:sina")
		assert.Zero(t, st.Failures)
		assert.Zero(t, st.Successes)
		assert.Equal(t, runtime.Closed, st.State)
		assert.Equal(t, 1, p.Tries, "the unsent try is no try")
		assert.Empty(t, drops.sorted())
	})
}

// TestRaceUnsentRetryLeavesTheLastAnswer: a primary's retry that sends
// nothing is no try: the answer before it stands (dropped once, when the
// race moves on from it), and a fallback that cannot send is unsent.
func TestRaceUnsentRetryLeavesTheLastAnswer(t *testing.T) {
	for _, early := range []bool{true, false} {
		t.Run(map[bool]string{true: "early", false: "admitted"}[early], func(t *testing.T) { raceUnsentRetry(t, early) })
	}
}

func raceUnsentRetry(t *testing.T, early bool) {
	synctest.Test(t, func(t *testing.T) {
		em := &source{name: "eastmoney", v: 7, err: errUpstream}
		sina := &source{name: "sina", v: 2}
		h := newHedgedChain(t, breakerimpl.RouteConfig{Hedge: d, Attempts: 3, Backoff: d / 10}, em, sina)
		var drops dropped

		ctx, p := runtime.WithProvenance(context.Background())
		_, err := h.oneBodyCall(ctx, &drops, early)
		var ce *runtime.ChainError
		require.ErrorAs(t, err, &ce)
		require.Len(t, ce.Sources, 2)
		assert.Equal(t, "error", ce.Sources[0].Why)
		assert.ErrorIs(t, ce.Sources[0].Err, errUpstream, "the one try's answer stands")
		assert.Equal(t, "unsent", ce.Sources[1].Why)
		assert.ErrorIs(t, err, errOneBody)
		assert.Len(t, em.askedAt(), 1)
		assert.Equal(t, 1, p.Tries)
		assert.Equal(t, []int{7}, drops.sorted(), "the failed answer, dropped once")
		assert.Equal(t, uint64(1), stats(h, "eastmoney").Failures)
		assert.Zero(t, stats(h, "fallback:sina").Failures)
	})
}

// TestUnsentHalfOpenFreesTheProbe: an unsent try admitted as a HALF_OPEN
// probe gives the probe's slot back: the next call is admitted.
func TestUnsentHalfOpenFreesTheProbe(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := runtime.NewRegistry(runtime.WithLogger(discardLogger()), runtime.WithoutEnv())
		rt := breakerimpl.NewRoute(reg, &source{}, breakerimpl.RouteConfig{Breaker: runtime.Config{Name: "b", FailureThreshold: 1, ResetTimeout: time.Second}})
		call, err := rt.Enter(context.Background())
		require.NoError(t, err)
		fail := errUpstream
		call.Exit(context.Background(), &fail)
		time.Sleep(2 * time.Second) // past the OPEN period and its jitter, on the bubble's clock
		call, err = rt.Enter(context.Background())
		require.NoError(t, err, "the probe")
		err = call.Unsent(context.Background(), errOneBody)
		assert.ErrorIs(t, err, errOneBody)
		call, err = rt.Enter(context.Background())
		require.NoError(t, err, "the probe's slot is free again")
		var ok error
		call.Exit(context.Background(), &ok)
		b, _ := reg.Lookup("b")
		assert.Equal(t, runtime.Closed, b.State())
	})
}

// keptArgs is a race's arguments whose tries record their ctx per source.
type keptArgs struct {
	h    *hedgedChain
	ctxs *sync.Map // source name: its try's ctx
}

// TestRaceKeepEndsTheWinnersCtxWhenDone: with Keep, the ctx of the source
// whose answer won lives on after the race (its answer is read through
// it), and ends when the caller is done with the answer; the losers' ended
// at once. Whether the primary (on the caller's goroutine) or a hedge won.
func TestRaceKeepEndsTheWinnersCtxWhenDone(t *testing.T) {
	for _, tc := range []struct {
		name     string
		emDelay  time.Duration
		winner   string
		loserCtx string
	}{
		{"primary", d / 2, "eastmoney", ""},
		{"hedge", 3 * d, "sina", "eastmoney"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				em := &source{name: "eastmoney", delay: tc.emDelay, v: 1}
				sina := &source{name: "sina", delay: d / 2, v: 2}
				h := newHedgedChain(t, breakerimpl.RouteConfig{Hedge: d}, em, sina)
				parent, cancelParent := context.WithCancel(context.Background())
				defer cancelParent()
				var ctxs sync.Map
				var done context.CancelFunc
				var run breakerimpl.Chain
				run.Start(parent, h.primary)
				v, err := breakerimpl.RaceArgsWith(&run, h.sources[0], h.fallbacks, h.routes, keptArgs{h, &ctxs},
					func(ctx context.Context, call breakerimpl.Call, impl *source, a keptArgs) (int, error) {
						a.ctxs.Store(impl.name, ctx)
						ctx.Done() // as net/http asks a request's ctx
						return a.h.try(ctx, call, impl)
					}, breakerimpl.RaceHooks[int, keptArgs]{Keep: func(v int, end context.CancelFunc) int { done = end; return v }})
				require.NoError(t, err)
				require.True(t, run.Won())
				require.NotNil(t, done)
				assert.Equal(t, map[string]int{"eastmoney": 1, "sina": 2}[tc.winner], v)
				w, _ := ctxs.Load(tc.winner)
				wctx := w.(context.Context)
				assert.NoError(t, wctx.Err(), "the winner's answer is read through its ctx")
				if tc.loserCtx != "" {
					l, _ := ctxs.Load(tc.loserCtx)
					assert.Error(t, l.(context.Context).Err(), "the loser's ended at once")
				}
				done()
				assert.ErrorIs(t, wctx.Err(), context.Canceled)
				select {
				case <-wctx.Done():
				default:
					t.Fatal("the winner's ctx did not end")
				}
			})
		})
	}
}

// TestRacePassedOverCtxEnds: the ctx of a source that answered and did
// not win (failed, invalid) ends when the race moves on from it, whether
// it is the primary on the caller's goroutine or a source of its own: a
// ctx whose Done was asked for would otherwise stay registered with the
// call's ctx for as long as that lives.
func TestRacePassedOverCtxEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		em := &source{name: "eastmoney", delay: d / 2, err: errUpstream} // fails before the delay
		sina := &source{name: "sina", delay: d / 2, v: -1}               // invalid
		tdx := &source{name: "tdx", delay: d / 2, v: 3}
		h := newHedgedChain(t, breakerimpl.RouteConfig{Hedge: d}, em, sina, tdx)
		parent, cancelParent := context.WithCancel(context.Background())
		defer cancelParent()
		var ctxs sync.Map
		var run breakerimpl.Chain
		run.Start(parent, h.primary)
		v, err := breakerimpl.RaceArgsValidWith(&run, h.sources[0], h.fallbacks, h.routes, keptArgs{h, &ctxs},
			func(ctx context.Context, call breakerimpl.Call, impl *source, a keptArgs) (int, bool, error) {
				a.ctxs.Store(impl.name, ctx)
				ctx.Done() // as net/http asks a request's ctx
				v, err := a.h.try(ctx, call, impl)
				return v, err != nil || v > 0, err
			}, breakerimpl.RaceHooks[int, keptArgs]{})
		require.NoError(t, err)
		assert.Equal(t, 3, v)
		for _, name := range []string{"eastmoney", "sina"} {
			c, ok := ctxs.Load(name)
			require.True(t, ok, name)
			assert.Error(t, c.(context.Context).Err(), "%s's ctx ended once passed over", name)
		}
		c, _ := ctxs.Load("tdx")
		assert.NoError(t, c.(context.Context).Err(), "the winner's lives on: no Keep")
	})
}
