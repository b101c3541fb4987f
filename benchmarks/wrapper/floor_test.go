package wrapper

import (
	"context"
	"errors"
	"testing"

	"github.com/breakergen/breakergen/runtime/breakerimpl"
)

// The shapes below are not what breakergen generates. They measure what
// the success path would cost under other rules, so that a decision about
// SPEC §3's panic accounting can be made on numbers from this repository:
//
//	go test -run '^$' -bench 'Direct$|Floor|GeneratedSuccess$|Unaccounted' -count 10 ./benchmarks/wrapper/
//
// then benchstat. Compare ratios within one run.

// deferredNoArgs defers a function that takes nothing: the cheapest defer
// there is, but one that cannot know which call it would settle.
type deferredNoArgs struct{ next Quoter }

func (w *deferredNoArgs) Quote(ctx context.Context, code string) (int, error) {
	defer nothing()
	return w.next.Quote(ctx, code)
}

func nothing() {}

// deferredClosure defers a func literal that sees the error result: one
// call at exit instead of the compiler's wrapper plus the function.
type deferredClosure struct{ next Quoter }

func (w *deferredClosure) Quote(ctx context.Context, code string) (_ int, err error) {
	defer func() {
		if err == breakerimpl.PanicGuard {
			if v := recover(); v != nil {
				panic(v)
			}
		}
	}()
	err = breakerimpl.PanicGuard
	return w.next.Quote(ctx, code)
}

// unaccounted is the generated wrapper without the defer: the outcome is
// reported after the call returns, so a panic would go uncounted and a
// HALF_OPEN probe that panics would hold its slot until reclaimed. SPEC §3
// forbids this; it is here to measure what the rule costs.
type unaccounted struct {
	next  Quoter
	route *breakerimpl.Route
}

func (w *unaccounted) Quote(ctx context.Context, code string) (r0 int, err error) {
	call, ok := w.route.EnterFast()
	if !ok {
		if call, err = w.route.Enter(ctx); err != nil {
			return
		}
	}
	r0, err = w.next.Quote(ctx, code)
	call.Exit(ctx, &err)
	return
}

// BenchmarkFloorDeferNoArgs: the extra call and a defer of a function with
// no arguments.
func BenchmarkFloorDeferNoArgs(b *testing.B) { bench(b, &deferredNoArgs{&upstream{}}) }

// BenchmarkFloorDeferClosure: the extra call and a deferred func literal
// that can tell a panic from a return.
func BenchmarkFloorDeferClosure(b *testing.B) { bench(b, &deferredClosure{&upstream{}}) }

// BenchmarkUnaccountedSuccess: the generated wrapper's work without panic
// accounting, CLOSED, every call a success.
func BenchmarkUnaccountedSuccess(b *testing.B) {
	w := newWrapper(nil).(*QuoterBreaker)
	bench(b, &unaccounted{next: w.next, route: w.benchQuotes})
}

// TestUnaccountedCountsOutcomes keeps the benchmark honest: the shape it
// measures does report failures to the breaker.
func TestUnaccountedCountsOutcomes(t *testing.T) {
	w := newWrapper(errors.New("down")).(*QuoterBreaker)
	u := &unaccounted{next: w.next, route: w.benchQuotes}
	for range 3 {
		u.Quote(context.Background(), "x")
	}
	if got := w.benchQuotes.Breaker().Stats().Failures; got != 3 {
		t.Fatalf("failures = %d, want 3", got)
	}
}
