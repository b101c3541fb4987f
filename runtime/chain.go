package runtime

import (
	"context"
	"errors"
	"strings"
	"time"
)

// ErrInvalid matches a [ChainError] whose every answer was rejected by the
// route's `valid` function: the sources answered, but with no usable data.
var ErrInvalid = errors.New("breaker: no valid answer")

// Fallback is a backup implementation of X for a generated chain
// (NewXChain). Each fallback is guarded by its own breaker,
// "fallback:<Name>", with the settings of the interface's default route
// (overridable by name like any breaker); it gets the route's timeout,
// exclude and valid, one try per call, and no limiter.
type Fallback[X any] struct {
	// Name names the fallback's breaker, "fallback:<Name>".
	Name string
	// Impl answers when the sources before it could not.
	Impl X
}

// FallbackName returns the breaker name of the fallback called name.
func FallbackName(name string) string { return "fallback:" + name }

// SourceError is what one source of a chain did with a call.
type SourceError struct {
	// Source is the breaker name or "fallback:<name>".
	Source string
	// Why is "open", "error", "invalid", "budget", "ratelimited" or
	// "canceled".
	Why string
	// Err is the source's error or rejection; nil for an invalid answer.
	Err error
}

// ChainError is the error of a chain call that no source answered. It
// names every source tried and why. errors.Is matches each source's own
// error; it matches [ErrOpen] only when every source was rejected by its
// breaker, and [ErrInvalid] when every source answered with invalid data.
type ChainError struct {
	Sources []SourceError
}

func (e *ChainError) Error() string {
	var b strings.Builder
	b.WriteString("breaker: every source failed: ")
	for i, s := range e.Sources {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(s.Source + ": " + s.Why)
		if s.Err != nil && s.Why != "open" {
			b.WriteString(": " + Brief(s.Err))
		}
	}
	if len(e.Sources) == 0 {
		b.WriteString("no source was tried")
	}
	return b.String()
}

// Unwrap returns the sources' own errors (not the rejections, so that
// errors.Is(err, ErrOpen) holds only when every source was open).
func (e *ChainError) Unwrap() []error {
	var errs []error
	for _, s := range e.Sources {
		if s.Err != nil && s.Why != "open" {
			errs = append(errs, s.Err)
		}
	}
	return errs
}

// Is matches ErrOpen when every source was rejected by its breaker, and
// ErrInvalid when every source answered invalid data.
func (e *ChainError) Is(target error) bool {
	var why string
	switch target {
	case ErrOpen:
		why = "open"
	case ErrInvalid:
		why = "invalid"
	default:
		return false
	}
	for _, s := range e.Sources {
		if s.Why != why {
			return false
		}
	}
	return len(e.Sources) > 0
}

// Chain runs one call of a generated chain: the primary, the fallbacks in
// order, then the stale cache. Generated code keeps it on the stack; it is
// not safe for concurrent use.
type Chain struct {
	ctx     context.Context
	prov    *Provenance // claimed for this call, or nil
	sources []SourceError
	tries   int
	left    int // tries the route's budget still allows; -1 for none
}

// StartChain begins a chain call made with ctx whose route allows budget
// tries (0 for no route budget).
func StartChain(ctx context.Context, budget int) Chain {
	if ctx == nil {
		ctx = context.Background()
	}
	left := -1
	if budget > 0 {
		left = budget
	}
	// One literal, returned in registers: building it in a local and
	// returning that copied it through memory, which cost more than the rest.
	return Chain{ctx: ctx, prov: claimProvenance(ctx), left: left}
}

// Primary records how the primary's tries ended: tries upstream tries made
// (by [Retry]), err the call's error, valid whether its result passed the
// route's valid func (true without one). It reports whether that is the
// answer: a success with valid data, or an excluded error. After the
// primary, fallbacks get the budget the primary left.
func (c *Chain) Primary(rt *Route, tries int, err error, valid bool) bool {
	c.tries += tries
	if c.left > 0 {
		c.left = max(c.left-tries, 0)
	}
	return c.outcome(rt.breaker.cfg.Name, err, valid, err != nil && rt.excluded(err))
}

// Fallback admits a try of the fallback on route fb unless the budget is
// spent or its breaker rejects it (recorded as skipped). When it returns
// false the fallback must not be called.
func (c *Chain) Fallback(fb *Route) (Call, bool) {
	name := fb.breaker.cfg.Name
	if c.ctx.Err() != nil {
		return Call{}, false
	}
	if c.left == 0 {
		c.skip(name, "budget", ErrBudget)
		return Call{}, false
	}
	call, err := fb.Enter(c.ctx)
	if err != nil {
		c.skip(name, why(c.ctx, err), err)
		return Call{}, false
	}
	c.tries++
	if c.left > 0 {
		c.left--
	}
	return call, true
}

// Answered records a fallback's answer (see [Chain.Primary]) and reports
// whether it is the call's answer.
func (c *Chain) Answered(fb *Route, err error, valid bool) bool {
	return c.outcome(fb.breaker.cfg.Name, err, valid, err != nil && fb.excluded(err))
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

// Err returns the call's error once no source answered: a [*ChainError].
func (c *Chain) Err() error {
	if p := c.prov; p != nil {
		p.Tries = c.tries
	}
	return &ChainError{Sources: c.sources}
}

// Done releases the provenance record; generated code defers it.
func (c *Chain) Done() { c.prov.release() }

func (c *Chain) skip(name, why string, err error) {
	c.sources = append(c.sources, SourceError{Source: name, Why: why, Err: err})
	if p := c.prov; p != nil {
		p.Skipped = append(p.Skipped, Skip{Source: name, Why: why, Err: err})
	}
}

// why names the reason a source was passed over.
func why(ctx context.Context, err error) string {
	switch {
	case errors.Is(err, ErrOpen):
		return "open"
	case errors.Is(err, ErrRateLimited):
		return "ratelimited"
	case errors.Is(err, ErrBudget):
		return "budget"
	case ctx.Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)):
		return "canceled"
	}
	return "error"
}
