package breakerimpl

import (
	"context"
	"errors"
	"time"

	"github.com/breakergen/breakergen/runtime"
	"github.com/breakergen/breakergen/runtime/internal/core"
)

// FallbackName returns the breaker name of the fallback called name.
func FallbackName(name string) string { return "fallback:" + name }

// Chain runs one call of a generated chain: the primary, the fallbacks in
// order, then the stale cache. Generated code keeps it on the stack; it is
// not safe for concurrent use.
type Chain struct {
	ctx     context.Context
	st      *core.CallState     // when prov was claimed
	prov    *runtime.Provenance // claimed for this call, or nil
	sources []runtime.Skip
	tries   int
	left    budget // tries the route's budget still allows
}

// StartChain begins a chain call made with ctx whose route allows budget
// tries (0 for no route budget).
func StartChain(ctx context.Context, budget int) Chain {
	if ctx == nil {
		ctx = context.Background()
	}
	st := core.From(ctx)
	p, _ := st.Claim().(*runtime.Provenance)
	if p == nil {
		st = nil
	} else {
		*p = runtime.Provenance{Skipped: p.Skipped[:0]}
	}
	// One literal, returned in registers: building it in a local and
	// returning that copied it through memory, which cost more than the rest.
	return Chain{ctx: ctx, st: st, prov: p, left: newBudget(budget)}
}

// Primary records how the primary's tries ended, on a route without a
// `valid` func: tries upstream tries made (by [Retry]) and err the call's
// error. It reports whether that is the answer: a success, or an excluded
// error. After the primary, fallbacks get the budget the primary left.
func (c *Chain) Primary(rt *Route, tries int, err error) bool {
	return c.PrimaryValid(rt, tries, err, true)
}

// PrimaryValid is [Chain.Primary] on a route with a `valid` func: valid
// reports whether the result passed it. A success with invalid data is not
// the answer.
func (c *Chain) PrimaryValid(rt *Route, tries int, err error, valid bool) bool {
	c.tries += tries
	c.left.spend(tries)
	return c.outcome(rt.breaker.Name(), err, valid, err != nil && rt.excluded(err))
}

// Fallback admits a try of the fallback on route fb unless the budget is
// spent or its breaker rejects it (recorded as skipped). When it returns
// false the fallback must not be called.
func (c *Chain) Fallback(fb *Route) (Call, bool) {
	name := fb.breaker.Name()
	if c.ctx.Err() != nil {
		return Call{}, false
	}
	if c.left.spent() {
		c.skip(name, "budget", runtime.ErrBudget)
		return Call{}, false
	}
	call, err := fb.Enter(c.ctx)
	if err != nil {
		c.skip(name, why(c.ctx, err), err)
		return Call{}, false
	}
	c.tries++
	c.left.spend(1)
	return call, true
}

// Answered records a fallback's answer (see [Chain.Primary]) and reports
// whether it is the call's answer.
func (c *Chain) Answered(fb *Route, err error) bool {
	return c.AnsweredValid(fb, err, true)
}

// AnsweredValid is [Chain.Answered] on a route with a `valid` func.
func (c *Chain) AnsweredValid(fb *Route, err error, valid bool) bool {
	return c.outcome(fb.breaker.Name(), err, valid, err != nil && fb.excluded(err))
}

func (c *Chain) outcome(name string, err error, valid, excluded bool) bool {
	switch {
	case excluded || err == nil && valid:
		if p := c.prov; p != nil {
			p.Source, p.Tries = name, c.tries
		}
		return true
	case err == nil:
		c.skip(name, "invalid", nil)
	default:
		c.skip(name, why(c.ctx, err), err)
	}
	return false
}

// Stale records that the answer came from the stale cache, age old.
func (c *Chain) Stale(age time.Duration) {
	if p := c.prov; p != nil {
		p.Source, p.Stale, p.Age, p.Tries = "stale", true, age, c.tries
	}
}

// Err returns the call's error once no source answered: a
// [*runtime.ChainError].
func (c *Chain) Err() error {
	if p := c.prov; p != nil {
		p.Tries = c.tries
	}
	return &runtime.ChainError{Sources: c.sources}
}

// Done releases the provenance record; generated code defers it.
func (c *Chain) Done() { c.st.Unclaim() }

func (c *Chain) skip(name, why string, err error) {
	s := runtime.Skip{Source: name, Why: why, Err: err}
	c.sources = append(c.sources, s)
	if p := c.prov; p != nil {
		p.Skipped = append(p.Skipped, s)
	}
}

// why names the reason a source was passed over.
func why(ctx context.Context, err error) string {
	switch {
	case errors.Is(err, runtime.ErrOpen):
		return "open"
	case errors.Is(err, runtime.ErrRateLimited):
		return "ratelimited"
	case errors.Is(err, runtime.ErrBudget):
		return "budget"
	case ctx.Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)):
		return "canceled"
	}
	return "error"
}
