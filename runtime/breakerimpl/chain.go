package breakerimpl

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/breakergen/breakergen/runtime"
	"github.com/breakergen/breakergen/runtime/internal/core"
)

// FallbackName returns the breaker name of the fallback called name.
func FallbackName(name string) string { return "fallback:" + name }

// Fallbacks returns a copy of a chain's fallbacks (the caller's slice may
// change, the chain's routes would not), warning through reg ([runtime.Default]
// when nil) of two that share a Name: they go through one breaker,
// "fallback:<Name>", so that one failing opens the other. (Chains of one
// registry share a fallback's breaker by its Name on purpose: they call
// one upstream. One chain calling two by one Name is a slip.)
func Fallbacks[X any](reg *runtime.Registry, fallbacks []runtime.Fallback[X]) []runtime.Fallback[X] {
	out := slices.Clone(fallbacks)
	for i, fb := range out {
		if fb.Name == "" { // the registry warns of the nameless when it makes their breaker
			continue
		}
		for _, before := range out[:i] {
			if before.Name == fb.Name {
				if reg == nil {
					reg = runtime.Default()
				}
				core.WarnOnce(reg, "fallback twice", fb.Name, fmt.Sprintf(
					"breaker: a chain has two runtime.Fallbacks named %q: they share the breaker %q, so one failing opens the other; give each its own Name",
					fb.Name, FallbackName(fb.Name)))
				break
			}
		}
	}
	return out
}

// Chain runs one call of a generated chain: the primary, the fallbacks in
// order, then the stale cache. Generated code keeps it on the stack; it is
// not safe for concurrent use.
type Chain struct {
	rt      *Route // the primary's
	ctx     context.Context
	st      *core.CallState // whose provenance record this call claimed, or nil
	sources []runtime.Skip
	tries   int  // upstream tries made: the route's budget is rt.budget less these
	won     bool // a source's answer won the race ([Race])
}

// Start begins a chain call made with ctx whose primary goes through rt:
// the budget of rt is the whole chain's. It reports whether the call
// claimed the provenance record of ctx, which [Chain.Done] must give back;
// generated code defers Done only then. Generated code declares the Chain
// (var run breakerimpl.Chain) and starts it in place: a Chain returned by
// value would be copied through memory on every call.
func (c *Chain) Start(ctx context.Context, rt *Route) (claimed bool) {
	c.rt, c.ctx = rt, ctx
	if core.InUse.Load() != 0 {
		return c.claim()
	}
	return false
}

// claim claims the provenance record of the call's ctx, if any.
func (c *Chain) claim() bool {
	st := core.From(c.ctx)
	if p, _ := st.Claim().(*runtime.Provenance); p != nil {
		*p = runtime.Provenance{Skipped: p.Skipped[:0]}
		c.st = st
		return true
	}
	return false
}

// prov returns the provenance record the call claimed, or nil.
func (c *Chain) prov() *runtime.Provenance {
	if c.st == nil {
		return nil
	}
	p, _ := c.st.Prov.(*runtime.Provenance)
	return p
}

// Primary records how the primary's tries ended, on a route without a
// `valid` func: tries upstream tries made (by [Retry]) and err the call's
// error. It reports whether that is the answer: a success, or an excluded
// error. After the primary, fallbacks get the budget the primary left.
func (c *Chain) Primary(rt *Route, tries int, err error) bool {
	if err == nil && c.st == nil && rt.live == nil {
		return true // the answer, with no record to write nor count to keep
	}
	return c.primary(tries, err, true)
}

// PrimaryValid is [Chain.Primary] on a route with a `valid` func: valid
// reports whether the result passed it. A success with invalid data is not
// the answer.
func (c *Chain) PrimaryValid(rt *Route, tries int, err error, valid bool) bool {
	// The answer, with no record to write nor count to keep; or the rest.
	return err == nil && valid && c.st == nil && rt.live == nil || c.primary(tries, err, valid)
}

// primary is Primary and PrimaryValid off their fast path.
func (c *Chain) primary(tries int, err error, valid bool) bool {
	rt := c.rt
	c.tries += tries
	if !c.outcome(rt.breaker.Name(), err, valid, err != nil && rt.excluded(err), isAnswer(tries, err)) {
		return false
	}
	if rt.live != nil {
		rt.live.Add(1)
	}
	return true
}

// Fallback admits a try of the fallback on route fb unless the caller's ctx
// has ended, the budget is spent or its breaker rejects it (each recorded as
// skipped). When it returns
// false the fallback must not be called.
func (c *Chain) Fallback(fb *Route) (Call, bool) {
	call, ok := c.admit(fb, c.rt.budget >= 0 && c.tries >= int(c.rt.budget))
	if ok {
		c.tries++
	}
	return call, ok
}

// admit is [Chain.Fallback] but for the route budget: spent reports
// whether it is spent.
func (c *Chain) admit(fb *Route, spent bool) (Call, bool) {
	name := fb.breaker.Name()
	if c.ctx == nil {
		c.ctx = context.Background() // a nil ctx is the background
	}
	if err := c.ctx.Err(); err != nil {
		c.skip(name, "canceled", err) // not asked: the ChainError must not say open
		return Call{}, false
	}
	if spent {
		c.skip(name, "budget", runtime.ErrBudget)
		return Call{}, false
	}
	call, err := fb.Enter(c.ctx)
	if err != nil {
		c.skip(name, core.Why(c.ctx, err, false), err)
		return Call{}, false
	}
	return call, true
}

// Unsent records that the fallback on route fb was not asked because the
// call's request could not be sent again (its body read by an earlier
// source, with no way to read it again: httpguard.Rewind's err).
func (c *Chain) Unsent(fb *Route, err error) {
	c.skip(fb.breaker.Name(), "unsent", err)
}

// unsentError is the error of an admitted try that sent nothing (see
// [Call.Unsent]).
type unsentError struct{ err error }

func (e unsentError) Error() string { return e.err.Error() }
func (e unsentError) Unwrap() error { return e.err }

// isUnsent reports whether err is the error of a try that sent nothing.
func isUnsent(err error) bool {
	_, ok := err.(unsentError)
	return ok
}

// Unsent settles a call admitted for a try that sent nothing, because what
// it would have sent could not be: the *http.Request whose one body
// another source of a hedged race sent (err says why, such as
// httpguard.ErrUnrewindable). It counts as neither success nor failure,
// frees what the admission took (a HALF_OPEN probe's slot, a concurrency
// slot), and returns err marked for the race, which then passes the source
// over as "unsent", or lets a retried primary's last answer stand. It
// stands for the try's exit: no Exit follows it.
func (c Call) Unsent(ctx context.Context, err error) error {
	err = unsentError{err}
	if c.word&core.ProvFlag != 0 {
		c = c.provEnd(ctx, err, true) // not in a chain, whose Start holds the record
	}
	if c.route.recOf != nil {
		c.recorded(core.Refused, err) // record.go
	}
	c.route.core.Ignore(c.word)
	return err
}

// Answered records a fallback's answer (see [Chain.Primary]) and reports
// whether it is the call's answer.
func (c *Chain) Answered(fb *Route, err error) bool {
	return c.AnsweredValid(fb, err, true)
}

// AnsweredValid is [Chain.Answered] on a route with a `valid` func.
func (c *Chain) AnsweredValid(fb *Route, err error, valid bool) bool {
	name := fb.breaker.Name()
	if !c.outcome(name, err, valid, err != nil && fb.excluded(err), true) {
		return false
	}
	fb.answers.Add(fb.answerAs, core.AnswerFallback)
	return true
}

// isAnswer reports whether err, the error of a source's tries after tries
// of them, is its answer (see core.Why): a try was made (a refusal of a
// later try returns the try before's error), and fault injection did not
// fail the last one.
func isAnswer(tries int, err error) bool {
	return tries > 0 && !core.ErrorIs(err, runtime.ErrInjected)
}

// outcome records how source name ended: answered says it was called (see
// core.Why).
func (c *Chain) outcome(name string, err error, valid, excluded, answered bool) bool {
	switch {
	case excluded || err == nil && valid:
		if p := c.prov(); p != nil {
			p.Source, p.Tries = name, c.tries
		}
		return true
	case err == nil:
		c.skip(name, "invalid", nil)
	case isUnsent(err):
		c.skip(name, "unsent", err.(unsentError).err)
	default:
		c.skip(name, core.Why(c.ctx, err, answered), err)
	}
	return false
}

// Stale records that the answer came from the stale cache, age old.
func (c *Chain) Stale(age time.Duration) {
	c.rt.answers.Add("stale", core.AnswerStale)
	if p := c.prov(); p != nil {
		p.Source, p.Stale, p.Age, p.Tries = "stale", true, age, c.tries
	}
}

// Err returns the call's error once no source answered: a
// [*runtime.ChainError].
func (c *Chain) Err() error {
	c.rt.answers.Add(c.rt.answerAs, core.AnswerNone)
	if p := c.prov(); p != nil {
		p.Tries = c.tries
	}
	return &runtime.ChainError{Sources: c.sources}
}

// Done gives back the provenance record that [Chain.Start] claimed;
// generated code defers it when Start reports a claim.
func (c *Chain) Done() { c.st.Unclaim() }

func (c *Chain) skip(name, why string, err error) {
	s := runtime.Skip{Source: name, Why: why, Err: err}
	c.sources = append(c.sources, s)
	if p := c.prov(); p != nil {
		p.Skipped = append(p.Skipped, s)
	}
}
