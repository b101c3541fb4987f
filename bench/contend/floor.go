package contend

import (
	"context"
	"errors"

	"github.com/breakergen/breakergen/bench/quote"
)

// The floors are not breakers: they bound from below what any wrapper of
// this shape can cost, so that the report can say how far a target is from
// what is possible at all on the machine.

// Forward is a wrapper that only forwards the call: the cost of one more
// dynamic call, which every contender pays.
type Forward struct{ Next quote.Quoter }

// Quote implements quote.Quoter.
func (w *Forward) Quote(ctx context.Context, code string) (quote.Quote, error) {
	return w.Next.Quote(ctx, code)
}

// errInFlight plays the part of breakerimpl.PanicGuard.
var errInFlight = errors.New("contend: call in flight")

// Deferred forwards the call like the generated wrapper does, minus the
// breaker: it presets the error and defers a function that recovers only
// when the method did not return, which is what a wrapper must do to count
// a panic as a failure without calling recover on every call.
type Deferred struct{ Next quote.Quoter }

// Quote implements quote.Quoter.
func (w *Deferred) Quote(ctx context.Context, code string) (_ quote.Quote, err error) {
	defer exit(&err)
	err = errInFlight
	return w.Next.Quote(ctx, code)
}

func exit(errp *error) {
	if *errp == errInFlight {
		if v := recover(); v != nil {
			panic(v)
		}
	}
}
