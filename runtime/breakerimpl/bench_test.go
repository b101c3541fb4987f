package breakerimpl_test

import (
	"context"
	"testing"
	"time"

	"github.com/breakergen/breakergen/runtime"
	"github.com/breakergen/breakergen/runtime/breakerimpl"
)

// quoter is the shape of a generated wrapper's target: one typed method.
type quoter interface {
	Quote(ctx context.Context, code string) (int, error)
}

type upstream struct{ err error }

//go:noinline
func (u *upstream) Quote(ctx context.Context, code string) (int, error) { return 1, u.err }

// guarded is what breakergen generates for quoter with one route.
type guarded struct {
	next  quoter
	route *breakerimpl.Route
}

func (w *guarded) Quote(ctx context.Context, code string) (_ int, err error) {
	if w.next == nil {
		err = breakerimpl.ErrNilImpl
		return
	}
	call, ok := w.route.EnterFast()
	if !ok {
		if err = call.Refusal(); err != nil {
			return
		}
		if call, err = w.route.Enter(ctx); err != nil {
			return
		}
	}
	defer func() { call.Done(ctx, err, err == breakerimpl.PanicGuard && call.Unreturned(ctx, recover())) }()
	err = breakerimpl.PanicGuard
	return w.next.Quote(ctx, code)
}

func newGuarded(tb testing.TB, err error, cfg breakerimpl.RouteConfig, opts ...runtime.Option) (quoter, *breakerimpl.Route) {
	tb.Helper()
	reg := runtime.NewRegistry(append([]runtime.Option{runtime.WithLogger(discardLogger())}, opts...)...)
	rt := breakerimpl.NewRoute(reg, anyImpl, cfg)
	return &guarded{next: &upstream{err: err}, route: rt}, rt
}

func benchCalls(b *testing.B, q quoter) {
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		q.Quote(ctx, "600519")
	}
}

func BenchmarkDirectSuccess(b *testing.B) {
	benchCalls(b, &upstream{})
}

func BenchmarkDirectFailure(b *testing.B) {
	benchCalls(b, &upstream{err: errUpstream})
}

func BenchmarkRouteSuccess(b *testing.B) {
	q, _ := newGuarded(b, nil, breakerimpl.RouteConfig{Breaker: runtime.Config{Name: "s"}})
	benchCalls(b, q)
}

// BenchmarkRouteSuccessProvenance is BenchmarkRouteSuccess made with a
// provenance record in the ctx, which each call claims, writes and gives
// back (SPEC §6); BenchmarkRouteSuccessNoRecord is the same call without
// one in a process that has made one, so that every call leaves the fast
// path for a ctx lookup (compare the three in one run). Both forget the
// process's record when they end, so the benchmarks after them run as
// before.
func BenchmarkRouteSuccessProvenance(b *testing.B) {
	q, _ := newGuarded(b, nil, breakerimpl.RouteConfig{Breaker: runtime.Config{Name: "s"}})
	b.Cleanup(breakerimpl.KeepCallStates())
	ctx, p := runtime.WithProvenance(context.Background())
	b.ReportAllocs()
	for b.Loop() {
		q.Quote(ctx, "600519")
	}
	if p.Source != "s" {
		b.Fatalf("the record was not written: %+v", *p)
	}
}

func BenchmarkRouteSuccessNoRecord(b *testing.B) {
	q, _ := newGuarded(b, nil, breakerimpl.RouteConfig{Breaker: runtime.Config{Name: "s"}})
	b.Cleanup(breakerimpl.KeepCallStates())
	runtime.WithProvenance(context.Background())
	benchCalls(b, q)
}

func BenchmarkRouteFailure(b *testing.B) {
	// A threshold the benchmark never reaches: every call is a CLOSED failure.
	q, _ := newGuarded(b, errUpstream, breakerimpl.RouteConfig{Breaker: runtime.Config{Name: "f", FailureThreshold: 1 << 30}})
	benchCalls(b, q)
}

func BenchmarkRouteRejection(b *testing.B) {
	q, rt := newGuarded(b, errUpstream, breakerimpl.RouteConfig{Breaker: runtime.Config{Name: "r", FailureThreshold: 1}})
	q.Quote(context.Background(), "trip")
	if rt.Breaker().State() != runtime.Open {
		b.Fatal("breaker did not open")
	}
	benchCalls(b, q)
}

func benchParallel(b *testing.B, q quoter) {
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		ctx := context.Background()
		for pb.Next() {
			q.Quote(ctx, "600519")
		}
	})
}

func BenchmarkDirectSuccessParallel(b *testing.B) {
	benchParallel(b, &upstream{})
}

func BenchmarkRouteSuccessParallel(b *testing.B) {
	q, _ := newGuarded(b, nil, breakerimpl.RouteConfig{Breaker: runtime.Config{Name: "p"}})
	benchParallel(b, q)
}

func BenchmarkRouteSuccessParallelCounted(b *testing.B) {
	q, _ := newGuarded(b, nil, breakerimpl.RouteConfig{Breaker: runtime.Config{Name: "p"}}, runtime.WithCallCounts())
	benchParallel(b, q)
}

// chained is what breakergen generates for quoter with the chain flag and
// one fallback: plain, or with hedge (raced).
type chained struct {
	primary        quoter
	fallbacks      []runtime.Fallback[quoter]
	route          *breakerimpl.Route
	routeFallbacks []*breakerimpl.Route
}

func newChained(tb testing.TB, cfg breakerimpl.RouteConfig) *chained {
	tb.Helper()
	reg := runtime.NewRegistry(runtime.WithLogger(discardLogger()), runtime.WithoutEnv())
	c := &chained{
		primary:   &upstream{},
		fallbacks: []runtime.Fallback[quoter]{{Name: "b", Impl: &upstream{}}},
		route:     breakerimpl.NewRoute(reg, anyImpl, cfg),
	}
	c.routeFallbacks = append(c.routeFallbacks, breakerimpl.NewRoute(reg, anyImpl, breakerimpl.RouteConfig{
		Breaker: runtime.Config{Name: breakerimpl.FallbackName("b")},
	}))
	return c
}

func (c *chained) Quote(ctx context.Context, code string) (r0 int, err error) {
	var run breakerimpl.Chain
	if run.Start(ctx, c.route) {
		defer run.Done()
	}
	retry := c.route.Retry()
	for {
		call, ok := retry.EnterFast()
		if !ok {
			if call, err = retry.Enter(ctx, err); err != nil {
				break
			}
		}
		r0, err = c.tryQuote(ctx, call, c.primary, code)
		if !retry.Again(ctx, err) {
			break
		}
	}
	if run.Primary(c.route, retry.Tries(), err) {
		return
	}
	for i, fb := range c.fallbacks {
		call2, ok := run.Fallback(c.routeFallbacks[i])
		if !ok {
			continue
		}
		r0, err = c.tryQuote(ctx, call2, fb.Impl, code)
		if run.Answered(c.routeFallbacks[i], err) {
			return
		}
	}
	var zero int
	return zero, run.Err()
}

func (c *chained) tryQuote(ctx context.Context, call breakerimpl.Call, impl quoter, code string) (_ int, err error) {
	defer call.Exit(ctx, &err)
	err = breakerimpl.PanicGuard
	return impl.Quote(ctx, code)
}

type raced struct{ *chained }

func (c raced) Quote(ctx context.Context, code string) (r0 int, err error) {
	var run breakerimpl.Chain
	if run.Start(ctx, c.route) {
		defer run.Done()
	}
	ask := func(ctx context.Context, call breakerimpl.Call, impl quoter) (int, error) {
		return c.tryQuote(ctx, call, impl, code)
	}
	r0, err = breakerimpl.Race(&run, c.primary, c.fallbacks, c.routeFallbacks, ask)
	if run.Won() {
		return
	}
	var zero int
	return zero, run.Err()
}

// BenchmarkChainPrimary is a chain call whose primary answers.
func BenchmarkChainPrimary(b *testing.B) {
	benchCalls(b, newChained(b, breakerimpl.RouteConfig{Breaker: runtime.Config{Name: "c"}}))
}

// BenchmarkChainHedgedPrimary is the same call on a route with hedge,
// whose primary answers long before the hedge delay: the extra cost of
// hedging is a goroutine, a channel, a timer and a cancellable ctx.
func BenchmarkChainHedgedPrimary(b *testing.B) {
	benchCalls(b, raced{newChained(b, breakerimpl.RouteConfig{Breaker: runtime.Config{Name: "h"}, Hedge: time.Hour})})
}
