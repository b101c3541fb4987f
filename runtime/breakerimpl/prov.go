package breakerimpl

import (
	"context"
	"errors"
	"time"

	"github.com/breakergen/breakergen/runtime"
	"github.com/breakergen/breakergen/runtime/internal/core"
)

// A plain wrapper's call writes the provenance record of its ctx
// (runtime.WithProvenance, SPEC §6) when it is the outermost guarded call
// made with the ctx. Its first try claims the record in enterProv, which
// every call reaches once a program has made a record (core.InUse sends
// every admission off the fast path), and marks its admission with
// core.ProvFlag; the try's exit, which then leaves its own fast path too,
// writes the outcome and gives the record back. A retry's next try claims
// it again, so a call nested in a try (a guarded wrapper that the wrapped
// method calls with the same ctx) finds it held and leaves it alone. A
// refusal is written at once. A plain wrapper has one source, so the
// record says who answered (the breaker's name), or why the breaker's
// source did not (one Skip), and the tries; the stale path then writes
// "stale" over it ([ServedStale]). A chain claims the record in
// Chain.Start, so the routes it calls find it held; a hedged race's
// primary, which may outlive the call, never claims it (raceTry).

// claim claims the provenance record of st for a try admitted as w, and
// returns w with core.ProvFlag when it did; first starts the record
// afresh.
func claim(st *core.CallState, w uint64, first bool) uint64 {
	p, _ := st.Claim().(*runtime.Provenance)
	if p == nil {
		return w
	}
	if first {
		*p = runtime.Provenance{Skipped: p.Skipped[:0]}
	}
	return w | core.ProvFlag
}

// provUncalled writes, in the provenance record of st unless an outer
// call holds it, that a try on rt ended without calling the method: err
// is its refusal, or the fault injected into it when try (a try, failed
// as an upstream's, as Retry counts it). first starts the record afresh.
func (rt *Route) provUncalled(ctx context.Context, st *core.CallState, err error, first, try bool) {
	p, _ := st.Claim().(*runtime.Provenance)
	if p == nil {
		return
	}
	if first {
		*p = runtime.Provenance{Skipped: p.Skipped[:0]}
	}
	if try {
		p.Tries++
	}
	p.Source = ""
	p.Skipped = append(p.Skipped[:0], runtime.Skip{Source: rt.breaker.Name(), Why: core.Why(ctx, err, false), Err: err})
	st.Unclaim()
}

// provEnd writes the outcome of a try that claimed the provenance record
// of ctx (its admission has core.ProvFlag), gives the record back, and
// returns the call without the flag. err is the try's error
// ([PanicGuard] for a method that did not return) and valid whether its
// answer passed the route's `valid` func.
func (c Call) provEnd(ctx context.Context, err error, valid bool) Call {
	c.word &^= core.ProvFlag
	st := core.From(ctx)
	p, _ := st.Prov.(*runtime.Provenance)
	if p == nil { // not reached: the claim was made through this ctx
		return c
	}
	rt := c.route
	name := rt.breaker.Name()
	p.Tries++
	p.Source, p.Skipped = "", p.Skipped[:0] // one source: the last try's outcome is the call's
	switch {
	case err == PanicGuard:
		p.Skipped = append(p.Skipped, runtime.Skip{Source: name, Why: "error", Err: core.ErrUnreturned})
	case err == nil && valid, err != nil && rt.excluded(err):
		p.Source = name
	case err == nil:
		p.Skipped = append(p.Skipped, runtime.Skip{Source: name, Why: "invalid"})
	default:
		p.Skipped = append(p.Skipped, runtime.Skip{Source: name, Why: core.Why(ctx, err, true), Err: err})
	}
	st.Unclaim()
	return c
}

// exitProv settles a call that claimed the provenance record of ctx (its
// admission has core.ProvFlag), as Exit and ExitValid settle the others,
// once it has written the record and given it back: err is the call's
// error, valid whether its answer passed the route's valid func, and v
// recover's value when err is [PanicGuard] (the exit that recovered is the
// deferred one). Kept apart so that the exits' own paths stay as they
// were: a call with a record takes this slower, shorter way.
//
//go:noinline
func (c Call) exitProv(ctx context.Context, err error, valid bool, v any) {
	c = c.provEnd(ctx, err, valid)
	switch {
	case err == PanicGuard:
		c.settleUnreturned(v) // record.go
	case err == nil && !valid:
		c.route.core.Ignore(c.word)
		c.recordInvalid(ctx) // record.go
	case err == nil && c.word&core.FastMask == 0:
		c.route.core.Succeeded(c.word)
	default:
		c.exitSlow(ctx, err)
	}
}

// enterProv is enterTry's admission once the program has made a budget or
// provenance record (core.InUse): enter with the call state of ctx, then,
// when ctx carries a provenance record that no outer guarded call holds,
// the claim of an admitted try (core.ProvFlag in its admission), or the
// refusal written at once. A fault injected fails the try after its
// admission: that is a try, written as one; the ctx's end during an
// injected delay is a refusal. first says the try is the call's first,
// which starts the record afresh; a later try's refusal leaves the record
// as the try before wrote it (the caller gets that try's error).
//
//go:noinline
func (rt *Route) enterProv(ctx context.Context, first bool) (Call, error) {
	st := core.From(ctx)
	c, err := rt.enter(ctx, st)
	if st == nil || st.Prov == nil {
		return c, err
	}
	switch {
	case err == nil:
		c.word = claim(st, c.word, first)
	case errors.Is(err, runtime.ErrInjected):
		rt.provUncalled(ctx, st, err, first, true)
	case first:
		rt.provUncalled(ctx, st, err, true, false)
	}
	return c, err
}

// ServedStale records, for a plain wrapper's call made with ctx that
// answers from its stale cache, that the answer is age old: in the
// provenance record of ctx, Source "stale", Stale and Age, after what
// the tries wrote. Generated code calls it on the stale path; it writes
// nothing when ctx has no record or an outer guarded call holds it.
func ServedStale(ctx context.Context, age time.Duration) {
	st := core.From(ctx)
	p, _ := st.Claim().(*runtime.Provenance)
	if p == nil {
		return
	}
	p.Source, p.Stale, p.Age = "stale", true, age
	st.Unclaim()
}
