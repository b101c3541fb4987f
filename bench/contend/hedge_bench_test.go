package contend_test

import (
	"context"
	"log/slog"
	"testing"

	"github.com/breakergen/breakergen/runtime"

	"github.com/breakergen/breakergen/bench/contend"
	"github.com/breakergen/breakergen/bench/quote"
)

// The cost of hedging a chain whose primary answers at once (issue 24
// point 3): the generated chain without hedge beside the same chain with
// hedge=1h, whose delay the primary always beats. Run at -cpu 1,2:
//
//	cd bench && go test -run '^$' -bench 'HedgeSuccess' -benchmem -count 6 -cpu 1,2 ./contend/
//
// Goals: the hedged chain under 300 ns on the report's machine and at most
// 2 allocations a call.

var hedgeCases = []struct {
	name string
	new  func(reg *runtime.Registry) quote.Quoter
}{
	{"chain", func(reg *runtime.Registry) quote.Quoter {
		return contend.NewBreakergenChain(quote.NewUpstream(nil), reg)
	}},
	{"hedged", func(reg *runtime.Registry) quote.Quoter {
		up := quote.NewUpstream(nil)
		return quote.NewHedgedQuoterChain(up, reg, runtime.Fallback[quote.HedgedQuoter]{Name: "backup", Impl: up})
	}},
}

func hedgeQuoter(tb testing.TB, mk func(*runtime.Registry) quote.Quoter) quote.Quoter {
	tb.Helper()
	q := mk(runtime.NewRegistry(runtime.WithoutEnv(), runtime.WithLogger(slog.New(slog.DiscardHandler))))
	expectSuccess(tb, q)
	return q
}

func BenchmarkHedgeSuccess(b *testing.B) {
	for _, c := range hedgeCases {
		b.Run(c.name, func(b *testing.B) { quoteSerially(b, hedgeQuoter(b, c.new)) })
	}
}

func BenchmarkHedgeSuccessParallel(b *testing.B) {
	for _, c := range hedgeCases {
		b.Run(c.name, func(b *testing.B) { quoteInParallel(b, hedgeQuoter(b, c.new)) })
	}
}

// TestHedgedChainAllocatesLittle: through the generated hedged chain, a
// call whose primary answers before the delay allocates once (issue 24
// allows 2): the generated code hands the race its arguments by value and
// the route reuses its race; the one allocation is the primary's ctx (24
// bytes), new for each call because the primary may keep it.
func TestHedgedChainAllocatesLittle(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	q := hedgeQuoter(t, hedgeCases[1].new)
	ctx := context.Background()
	if n := testing.AllocsPerRun(1000, func() { q.Quote(ctx, "600519") }); n != 1 {
		t.Errorf("%v allocations a call, want 1 (the primary's ctx)", n)
	}
}
