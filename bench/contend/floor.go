package contend

import (
	"context"

	"github.com/breakergen/breakergen/bench/quote"
	"github.com/breakergen/breakergen/runtime/breakerimpl"
)

// The rows below are not breakers: they bound from below what any wrapper
// of the generated shape can cost on the machine, so that the report can
// state SPEC §7's success target as a ratio to the floor measured in the
// same run.
//
// Floor mirrors the generated wrapper (quote.QuoterBreaker.Quote): when the
// generator or the runtime calls it makes change, change Floor and
// floorGuard with them, and nothing else. Only the breaker is left out.

// Forward is a wrapper that only forwards the call: the cost of one more
// dynamic call, which every contender pays.
type Forward struct{ Next quote.Quoter }

// Quote implements quote.Quoter.
func (w *Forward) Quote(ctx context.Context, code string) (quote.Quote, error) {
	return w.Next.Quote(ctx, code)
}

// Floor is the generated wrapper's shape with its panic guard and no
// breaker: the error preset to the panic guard, and a deferred closure
// that calls recover only while the error still holds it, that is when the
// method did not return, which is how a wrapper counts a panic as a
// failure (SPEC §3) without calling recover on every call.
type Floor struct{ Next quote.Quoter }

// Quote implements quote.Quoter.
func (w *Floor) Quote(ctx context.Context, code string) (_ quote.Quote, err error) {
	defer func() { floorDone(ctx, err, err == breakerimpl.PanicGuard && floorUnreturned(ctx, recover())) }()
	err = breakerimpl.PanicGuard // stays only if the call panics
	return w.Next.Quote(ctx, code)
}

// floorDone is breakerimpl.Call.Done without the breaker: nothing to
// count (it inlines away, as Done's plain CLOSED success inlines).
func floorDone(context.Context, error, bool) {}

// floorUnreturned is breakerimpl.Call.Unreturned without the breaker: a
// panic is re-raised.
func floorUnreturned(_ context.Context, v any) bool {
	if v != nil {
		panic(v)
	}
	return true
}
