package breakerimpl_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/breakergen/breakergen/runtime"
	"github.com/breakergen/breakergen/runtime/breakerimpl"
)

// raceArgs is what the generator passes to RaceArgs: the chain and the
// method's arguments.
type raceArgs struct {
	h   *hedgedChain
	add int
}

// argsCall is h.call through RaceArgs (RaceArgsValid with h.valid), as
// generated code makes it: an ask capturing nothing, the arguments by
// value.
func (h *hedgedChain) argsCall(ctx context.Context, add int) (int, error) {
	var run breakerimpl.Chain
	if run.Start(ctx, h.primary) {
		defer run.Done()
	}
	var v int
	var err error
	if h.valid == nil {
		v, err = breakerimpl.RaceArgs(&run, h.sources[0], h.fallbacks, h.routes, raceArgs{h, add},
			func(ctx context.Context, call breakerimpl.Call, impl *source, a raceArgs) (int, error) {
				v, err := a.h.try(ctx, call, impl)
				return v + a.add, err
			})
	} else {
		v, err = breakerimpl.RaceArgsValid(&run, h.sources[0], h.fallbacks, h.routes, raceArgs{h, add},
			func(ctx context.Context, call breakerimpl.Call, impl *source, a raceArgs) (int, bool, error) {
				v, valid, err := a.h.tryValid(ctx, call, impl)
				return v + a.add, valid, err
			})
	}
	if run.Won() {
		return v, err
	}
	return 0, run.Err()
}

// TestRaceArgsPrimaryBeforeTheDelayAllocatesOnce: with the arguments
// passed by value, a hedged call whose primary answers before the delay
// allocates once, its primary's ctx, which the primary may keep (issue 24:
// at most 2), with or without a provenance record, and counts its live
// answer.
func TestRaceArgsPrimaryBeforeTheDelayAllocatesOnce(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	em, sina := &source{name: "eastmoney", v: 1}, &source{name: "sina", v: 2}
	h := newHedgedChain(t, breakerimpl.RouteConfig{Hedge: time.Hour}, em, sina)
	type args struct {
		add   int
		asked *int
	}
	var asked int
	call := func(ctx context.Context, valid bool) (int, error) { // as generated code does
		var run breakerimpl.Chain
		if run.Start(ctx, h.primary) {
			defer run.Done()
		}
		var v int
		var err error
		if !valid {
			v, err = breakerimpl.RaceArgs(&run, em, h.fallbacks, h.routes, args{10, &asked},
				func(ctx context.Context, call breakerimpl.Call, impl *source, a args) (_ int, err error) {
					defer call.Exit(ctx, &err)
					err = breakerimpl.PanicGuard
					*a.asked++
					return impl.v + a.add, nil
				})
		} else {
			v, err = breakerimpl.RaceArgsValid(&run, em, h.fallbacks, h.routes, args{10, &asked},
				func(ctx context.Context, call breakerimpl.Call, impl *source, a args) (_ int, valid bool, err error) {
					valid = true
					defer call.ExitValid(ctx, &err, &valid)
					err = breakerimpl.PanicGuard
					*a.asked++
					return impl.v + a.add, true, nil
				})
		}
		if run.Won() {
			return v, err
		}
		return 0, run.Err()
	}
	for _, valid := range []bool{false, true} {
		for _, prov := range []bool{false, true} {
			ctx := context.Background()
			var p *runtime.Provenance
			if prov {
				ctx, p = runtime.WithProvenance(ctx)
			}
			allocs := testing.AllocsPerRun(1000, func() {
				if v, err := call(ctx, valid); v != 11 || err != nil {
					t.Fatalf("got %d, %v", v, err)
				}
			})
			assert.Equal(t, 1.0, allocs, "valid %v, provenance %v", valid, prov)
			if prov {
				assert.Equal(t, "live", p.String())
				assert.False(t, p.Hedged)
			}
		}
	}
	assert.Equal(t, 4*1001, asked, "the primary alone was asked")
	assert.Equal(t, []runtime.ChainAnswer{{Source: "eastmoney", Kind: "live", Count: 4 * 1001}}, h.reg.ChainAnswers())
}

// TestRaceArgsHedgeGetsTheArguments: a hedge asked from the timer's
// goroutine makes its try with the call's arguments (the race's copy), and
// the primary, which lost, is cancelled before the call returns.
func TestRaceArgsHedgeGetsTheArguments(t *testing.T) {
	for _, valid := range []func(int) bool{nil, func(v int) bool { return v > 0 }} {
		synctest.Test(t, func(t *testing.T) {
			em := &source{name: "eastmoney", delay: time.Hour, v: 1}
			sina := &source{name: "sina", delay: d / 2, v: 2}
			h := newHedgedChain(t, breakerimpl.RouteConfig{Hedge: d}, em, sina)
			h.valid = valid
			ctx, p := runtime.WithProvenance(context.Background())
			v, err := h.argsCall(ctx, 40)
			require.NoError(t, err)
			assert.Equal(t, 42, v, "sina's answer with the call's argument")
			assert.True(t, p.Hedged)
			assert.Equal(t, "fallback:sina", p.Source)
			em.mu.Lock()
			assert.Equal(t, 1, em.returned, "the primary returned before the call did")
			assert.ErrorIs(t, em.cause, context.Canceled, "the primary lost: cancelled")
			em.mu.Unlock()
		})
	}
}

// TestHedgedWhenNoSourceAnswers: a call that asked a source while another
// was in flight is Hedged in its provenance whether or not one answered:
// here both fail, the hedge asked at d while the primary ran.
func TestHedgedWhenNoSourceAnswers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		em := &source{name: "eastmoney", delay: 2 * d, err: errors.New("em down")}
		sina := &source{name: "sina", delay: d / 2, err: errors.New("sina down")}
		h := newHedgedChain(t, breakerimpl.RouteConfig{Hedge: d}, em, sina)
		ctx, p := runtime.WithProvenance(context.Background())
		_, err := h.call(ctx)
		var ce *runtime.ChainError
		require.ErrorAs(t, err, &ce)
		assert.Equal(t, []time.Duration{d}, sina.askedAt(), "sina asked as a hedge, the primary in flight")
		assert.True(t, p.Hedged)
		assert.Empty(t, p.Source)
	})
}

// firedClock is a clock whose timers have always just fired when they are
// stopped: Stop reports false and the timer's func runs then, in a
// goroutine of its own, as when a timer's delay passes just as the call it
// guards returns. fired counts the funcs run.
type firedClock struct{ fired atomic.Int64 }

func (c *firedClock) Now() time.Time { return time.Now() }

func (c *firedClock) AfterFunc(_ time.Duration, f func()) runtime.Timer {
	return &firedTimer{c: c, f: f}
}

type firedTimer struct {
	c *firedClock
	f func()
}

func (t *firedTimer) Stop() bool {
	t.c.fired.Add(1)
	go t.f()
	return false
}

// TestHedgeTickAfterThePrimaryWonIsTaken: when the hedge timer fires after
// the primary's answer came but before the call could stop it, the call
// takes the timer's tick before its race goes back to the route's pool. A
// tick left behind would be a pooled race's: the channel would fill and a
// later timer's goroutine block on it for ever (synctest reports it), or a
// later call would take it for its own delay and ask the backup.
func TestHedgeTickAfterThePrimaryWonIsTaken(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clock := &firedClock{}
		reg := runtime.NewRegistry(runtime.WithLogger(discardLogger()), runtime.WithoutEnv(),
			runtime.WithCallCounts(), runtime.WithClock(clock))
		em, sina := &source{name: "eastmoney", v: 1}, &source{name: "sina", v: 2}
		h := newHedgedChainOn(reg, breakerimpl.RouteConfig{Hedge: d}, em, sina)
		const calls = 10 // more than a race's channel holds
		for range calls {
			v, err := h.argsCall(context.Background(), 0)
			require.NoError(t, err)
			assert.Equal(t, 1, v)
			synctest.Wait() // nothing of the call is left running
		}
		assert.Equal(t, int64(calls), clock.fired.Load())
		assert.Empty(t, sina.askedAt(), "the backup was never asked")
		assert.Equal(t, []runtime.ChainAnswer{{Source: "eastmoney", Kind: "live", Count: calls}}, reg.ChainAnswers())
	})
}

// TestRaceArgsTwoMethodsOnOneRouteAllocOnce: two methods of a chain whose line
// they share race on one route with races of two types; called in turn,
// each finds its own race (the route's spare slot keeps one, its pool the
// other) and allocates only its primary's ctx.
func TestRaceArgsTwoMethodsOnOneRouteAllocOnce(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	em, sina := &source{name: "eastmoney", v: 1}, &source{name: "sina", v: 2}
	h := newHedgedChain(t, breakerimpl.RouteConfig{Hedge: time.Hour}, em, sina)
	get := func(ctx context.Context, add int) (int, error) {
		var run breakerimpl.Chain
		run.Start(ctx, h.primary)
		v, err := breakerimpl.RaceArgs(&run, em, h.fallbacks, h.routes, add,
			func(ctx context.Context, call breakerimpl.Call, impl *source, add int) (_ int, err error) {
				defer call.Exit(ctx, &err)
				err = breakerimpl.PanicGuard
				return impl.v + add, nil
			})
		if run.Won() {
			return v, err
		}
		return 0, run.Err()
	}
	type pair struct{ a, b int }
	getPair := func(ctx context.Context, add string) (pair, error) {
		var run breakerimpl.Chain
		run.Start(ctx, h.primary)
		v, err := breakerimpl.RaceArgs(&run, em, h.fallbacks, h.routes, add,
			func(ctx context.Context, call breakerimpl.Call, impl *source, add string) (_ pair, err error) {
				defer call.Exit(ctx, &err)
				err = breakerimpl.PanicGuard
				return pair{impl.v, len(add)}, nil
			})
		if run.Won() {
			return v, err
		}
		return pair{}, run.Err()
	}
	ctx := context.Background()
	allocs := testing.AllocsPerRun(1000, func() {
		if v, err := get(ctx, 10); v != 11 || err != nil {
			t.Fatalf("get: %d, %v", v, err)
		}
		if v, err := getPair(ctx, "abc"); v != (pair{1, 3}) || err != nil {
			t.Fatalf("getPair: %v, %v", v, err)
		}
	})
	assert.Equal(t, 2.0, allocs, "two calls")
}
