package wrapper

import (
	"context"
	"errors"
	"log/slog"
	"testing"

	"github.com/breakergen/breakergen/runtime"
	"github.com/breakergen/breakergen/runtime/breakerimpl"
)

type upstream struct{ err error }

//go:noinline
func (u *upstream) Quote(ctx context.Context, code string) (int, error) { return 1, u.err }

func newWrapper(err error) Quoter {
	reg := runtime.NewRegistry(runtime.WithLogger(slog.New(slog.DiscardHandler)))
	return NewQuoterBreaker(&upstream{err: err}, reg)
}

func bench(b *testing.B, q Quoter) {
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		q.Quote(ctx, "600519")
	}
}

// BenchmarkDirect calls the implementation through the interface.
func BenchmarkDirect(b *testing.B) { bench(b, &upstream{}) }

// forward and deferred are not breakers: they bound from below what any
// wrapper of the generated shape can cost. forward only forwards (one more
// dynamic call); deferred also presets the error and defers the function
// that tells a panic from a return, which SPEC §3's panic rule needs on
// every call.
type forward struct{ next Quoter }

func (w *forward) Quote(ctx context.Context, code string) (int, error) {
	return w.next.Quote(ctx, code)
}

type deferred struct{ next Quoter }

func (w *deferred) Quote(ctx context.Context, code string) (_ int, err error) {
	defer settle(&err)
	err = breakerimpl.PanicGuard
	return w.next.Quote(ctx, code)
}

func settle(errp *error) {
	if *errp == breakerimpl.PanicGuard {
		if v := recover(); v != nil {
			panic(v)
		}
	}
}

// BenchmarkFloorForward: the extra dynamic call alone.
func BenchmarkFloorForward(b *testing.B) { bench(b, &forward{&upstream{}}) }

// BenchmarkFloorDefer: the extra call and the panic-accounting defer, with
// no breaker at all.
func BenchmarkFloorDefer(b *testing.B) { bench(b, &deferred{&upstream{}}) }

// BenchmarkGeneratedSuccess calls it through the generated wrapper, CLOSED,
// every call a success.
func BenchmarkGeneratedSuccess(b *testing.B) { bench(b, newWrapper(nil)) }

// BenchmarkGeneratedFailure: CLOSED, every call a failure that never
// reaches the threshold.
func BenchmarkGeneratedFailure(b *testing.B) { bench(b, newWrapper(errors.New("down"))) }

// BenchmarkGeneratedRejection: OPEN, every call rejected without a call.
func BenchmarkGeneratedRejection(b *testing.B) {
	reg := runtime.NewRegistry(runtime.WithLogger(slog.New(slog.DiscardHandler)))
	next := &upstream{err: errors.New("down")}
	w := &QuoterBreaker{next: next, benchQuotes: breakerimpl.NewRoute(reg, next, breakerimpl.RouteConfig{Breaker: runtime.Config{Name: "r", FailureThreshold: 1}})}
	w.Quote(context.Background(), "trip")
	bench(b, w)
}

func BenchmarkDirectParallel(b *testing.B) { benchParallel(b, &upstream{}) }

func BenchmarkGeneratedSuccessParallel(b *testing.B) { benchParallel(b, newWrapper(nil)) }

func benchParallel(b *testing.B, q Quoter) {
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		ctx := context.Background()
		for pb.Next() {
			q.Quote(ctx, "600519")
		}
	})
}

// TestRejectionAllocatesNothing: a rejection must not allocate (SPEC §3),
// and neither does a CLOSED success.
func TestRejectionAllocatesNothing(t *testing.T) {
	reg := runtime.NewRegistry(runtime.WithLogger(slog.New(slog.DiscardHandler)))
	next := &upstream{err: errors.New("down")}
	w := &QuoterBreaker{next: next, benchQuotes: breakerimpl.NewRoute(reg, next, breakerimpl.RouteConfig{Breaker: runtime.Config{Name: "r", FailureThreshold: 1}})}
	ctx := context.Background()
	w.Quote(ctx, "trip")
	if _, err := w.Quote(ctx, "x"); !errors.Is(err, runtime.ErrOpen) {
		t.Fatalf("not open: %v", err)
	}
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under -race")
	}
	if n := testing.AllocsPerRun(100, func() { w.Quote(ctx, "x") }); n != 0 {
		t.Errorf("rejection allocates %v times per call", n)
	}
	ok := newWrapper(nil)
	if n := testing.AllocsPerRun(100, func() { ok.Quote(ctx, "x") }); n != 0 {
		t.Errorf("success allocates %v times per call", n)
	}
}

func newChain() *QuoterChain {
	reg := runtime.NewRegistry(runtime.WithLogger(slog.New(slog.DiscardHandler)))
	return NewQuoterChain(&upstream{}, reg, runtime.Fallback[Quoter]{Name: "backup", Impl: &upstream{}})
}

// BenchmarkChainSuccess calls it through the generated chain, the primary
// answering every call.
func BenchmarkChainSuccess(b *testing.B) { bench(b, newChain()) }

// TestChainPrimarySuccessAllocatesNothing: a chain whose primary answers
// allocates nothing (SPEC §6), with or without a provenance record.
func TestChainPrimarySuccessAllocatesNothing(t *testing.T) {
	c := newChain()
	ctx := context.Background()
	pctx, p := runtime.WithProvenance(ctx)
	if _, err := c.Quote(pctx, "x"); err != nil || p.Source != "bench-quotes" {
		t.Fatalf("primary did not answer: %v, %v", err, p)
	}
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under -race")
	}
	if n := testing.AllocsPerRun(100, func() { c.Quote(ctx, "x") }); n != 0 {
		t.Errorf("chain success allocates %v times per call", n)
	}
	if n := testing.AllocsPerRun(100, func() { c.Quote(pctx, "x") }); n != 0 {
		t.Errorf("chain success with provenance allocates %v times per call", n)
	}
}
