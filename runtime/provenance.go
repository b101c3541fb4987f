package runtime

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/breakergen/breakergen/runtime/internal/core"
)

// Provenance says where the answer of one guarded call came from. Put one in
// the ctx with [WithProvenance] and read it after the call of a generated
// chain (XChain) or wrapper (XBreaker, whose one source is the route's
// breaker, and whose stale cache is "stale"); only the outermost guarded
// call made with the ctx writes it (a fallback or a wrapped method that
// itself calls a guarded wrapper with the same ctx does not overwrite it).
// [Breaker.Do] writes it too. One record serves one call at a time: it is
// not safe for concurrent calls.
type Provenance struct {
	// Source is who answered: the primary's breaker name,
	// "fallback:<name>", or "stale"; "" when nobody did.
	Source string
	// Stale reports an answer served from the stale cache, Age its age.
	Stale bool
	Age   time.Duration
	// Tries counts the upstream tries the call spent.
	Tries int
	// Hedged reports a call of a chain route with `hedge` that asked a
	// source while another was still in flight, whether a source then
	// answered or not (a stale answer or every source failing); when one
	// did, Source is the one whose answer won (the primary's, too, can win
	// the race), and the sources still in flight then are in Skipped as
	// "slow".
	Hedged bool
	// Skipped lists the sources passed over before Source, in the order
	// they were passed over: in a chain, the sources' order; in a hedged
	// race, the order their failures came, then the sources still in
	// flight when one answered ("slow"), in the sources' order.
	Skipped []Skip
}

// Skip is a source that was passed over, and why.
type Skip struct {
	// Source is the breaker name or "fallback:<name>".
	Source string
	// Why is "open", "isolated" (its breaker ISOLATED by an operator,
	// [Breaker.Isolate]; a BYPASSED one is asked as usual), "error", "injected" (a fault injected by the settings,
	// see [ErrInjected]), "invalid", "budget", "ratelimited",
	// "throttled" (ErrThrottled), "bulkhead" (ErrBulkheadFull),
	// "canceled", "unsent" (not asked: the call's *http.Request body was
	// read by an earlier source and cannot be read again, see
	// httpguard.Rewind, or so was an io.Reader argument, see
	// [ErrUnrewindable]), or "slow" (a hedged call's source still in
	// flight when another answered: its ctx was cancelled, which is not
	// its failure).
	Why string
	// Err is the source's error or rejection; nil for an invalid answer
	// and a slow source.
	Err error
}

// String describes the answer's origin: "live", "fallback:sina (eastmoney
// open)", "stale 12s (eastmoney error, fallback:sina open)",
// "fallback:sina hedged (eastmoney slow)".
func (p *Provenance) String() string {
	if p == nil {
		return ""
	}
	s := p.Source
	switch {
	case p.Stale:
		s = "stale " + p.Age.Round(time.Second).String()
	case len(p.Skipped) == 0 && s != "":
		return "live"
	case s == "":
		s = "none"
	}
	if p.Hedged && !p.Stale && p.Source != "" {
		s += " hedged"
	}
	if len(p.Skipped) > 0 {
		s += " ("
		for i, k := range p.Skipped {
			if i > 0 {
				s += ", "
			}
			s += k.Source + " " + k.Why
		}
		s += ")"
	}
	return s
}

func init() { core.Why = why }

// WithProvenance returns a ctx carrying a fresh record, and the record.
func WithProvenance(ctx context.Context) (context.Context, *Provenance) {
	if ctx == nil {
		ctx = context.Background()
	}
	p := &Provenance{}
	st := core.From(ctx)
	return core.With(ctx, &core.CallState{Budget: st.BudgetOf(), Prov: p, Busy: new(atomic.Bool)}), p
}

// doWritten is [Breaker.Do] for a call that claimed the provenance record
// p of its ctx's call state st: the call, then the record written as a
// generated wrapper's single call writes it and given back, also when fn
// panics.
func (b *Breaker) doWritten(ctx context.Context, st *core.CallState, p *Provenance, fn func(context.Context) error) (err error) {
	*p = Provenance{Skipped: p.Skipped[:0]}
	called, returned := false, false
	defer func() {
		name := b.cfg().Name
		switch {
		case !returned:
			p.Tries = 1
			p.Skipped = append(p.Skipped, Skip{Source: name, Why: "error", Err: core.ErrUnreturned})
		case err == nil:
			p.Source, p.Tries = name, 1
		default:
			if called || core.ErrorIs(err, ErrInjected) { // an injected fault is a try, failed
				p.Tries = 1
			}
			p.Skipped = append(p.Skipped, Skip{Source: name, Why: why(ctx, err, called), Err: err})
		}
		st.Unclaim()
	}()
	err = b.do(ctx, st.BudgetOf(), func(ctx context.Context) error {
		called = true
		return fn(ctx)
	})
	returned = true
	return err
}

// isolated reports whether err, a rejection, is an ISOLATED breaker's.
func isolated(err error) bool {
	if oe, ok := err.(*OpenError); ok {
		return oe.State == Isolated
	}
	return isolatedWrapped(err)
}

// isolatedWrapped is isolated for a rejection wrapped in another error:
// apart, so that the variable errors.As needs on the heap is made only
// then, not on every rejection.
func isolatedWrapped(err error) bool {
	var oe *OpenError
	return errors.As(err, &oe) && oe.State == Isolated
}

// why names the reason a source was passed over, for a provenance
// record's Skip and a ChainError (package breakerimpl calls it as core.Why).
// err is the source's answer when answered (the source was called), and
// then it is an "error", or "canceled" when the caller's ctx ended: also
// an error that wraps a rejection or refusal, which another guarded call
// the source made got, not this source. Otherwise err is the refusal that
// kept the source from being called.
func why(ctx context.Context, err error, answered bool) string {
	canceled := ctx != nil && ctx.Err() != nil && (core.ErrorIs(err, context.Canceled) || core.ErrorIs(err, context.DeadlineExceeded))
	switch {
	case answered && canceled:
		return "canceled"
	case answered:
		return "error"
	case core.ErrorIs(err, ErrOpen):
		if isolated(err) {
			return "isolated" // an operator's act, not the source's failures
		}
		return "open"
	case core.ErrorIs(err, ErrRateLimited):
		return "ratelimited"
	case core.ErrorIs(err, ErrThrottled):
		return "throttled"
	case core.ErrorIs(err, ErrBulkheadFull):
		return "bulkhead"
	case core.ErrorIs(err, ErrBudget):
		return "budget"
	case core.ErrorIs(err, ErrInjected):
		return "injected"
	case canceled:
		return "canceled"
	}
	return "error"
}
