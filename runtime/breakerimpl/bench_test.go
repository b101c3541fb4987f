package breakerimpl_test

import (
	"context"
	"testing"

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
		if call, err = w.route.Enter(ctx); err != nil {
			return
		}
	}
	defer call.Exit(ctx, &err)
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
