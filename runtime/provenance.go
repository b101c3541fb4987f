package runtime

import (
	"context"
	"sync/atomic"
	"time"
)

// Provenance says where the answer of one guarded call came from. Put one in
// the ctx with [WithProvenance] and read it after the call; only the
// outermost guarded call made with the ctx writes it (a fallback that itself
// calls a guarded wrapper with the same ctx does not overwrite it). One
// record serves one call at a time: it is not safe for concurrent calls.
type Provenance struct {
	// Source is who answered: the primary's breaker name,
	// "fallback:<name>", or "stale"; "" when nobody did.
	Source string
	// Stale reports an answer served from the stale cache, Age its age.
	Stale bool
	Age   time.Duration
	// Tries counts the upstream tries the call spent.
	Tries int
	// Skipped lists the sources passed over before Source, in order.
	Skipped []Skip

	busy atomic.Bool // a call is writing the record
}

// Skip is a source that was passed over, and why.
type Skip struct {
	// Source is the breaker name or "fallback:<name>".
	Source string
	// Why is "open", "error", "invalid", "budget", "ratelimited" or
	// "canceled".
	Why string
	// Err is the error, if the source answered one (or the rejection).
	Err error
}

// String describes the answer's origin: "live", "fallback:sina (eastmoney
// open)", "stale 12s (eastmoney error, fallback:sina open)".
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

// WithProvenance returns a ctx carrying a fresh record, and the record.
func WithProvenance(ctx context.Context) (context.Context, *Provenance) {
	if ctx == nil {
		ctx = context.Background()
	}
	p := &Provenance{}
	useCallStates()
	st := callStateFrom(ctx)
	return context.WithValue(ctx, callStateKey{}, &callState{budget: st.budgetOrNil(), prov: p}), p
}

// claim returns the record of ctx for the call about to start, emptied, or
// nil when there is none or an outer call holds it.
func claimProvenance(ctx context.Context) *Provenance {
	p := callStateFrom(ctx).provOrNil()
	if p == nil || !p.busy.CompareAndSwap(false, true) {
		return nil
	}
	p.Source, p.Stale, p.Age, p.Tries, p.Skipped = "", false, 0, 0, p.Skipped[:0]
	return p
}

func (p *Provenance) release() {
	if p != nil {
		p.busy.Store(false)
	}
}

// callState is what a ctx carries for guarded calls: one value, so a call
// pays at most one ctx lookup for budgets and provenance together.
type callState struct {
	budget *budget
	prov   *Provenance
}

type callStateKey struct{}

// callStatesInUse is 0 until the first WithBudget or WithProvenance, and
// all ones from then on, so that programs that use neither never look in
// the ctx. It is a word rather than a flag so that [Route.EnterFast] can OR
// it into the state word and decide with one test.
var callStatesInUse atomic.Uint64

// useCallStates sends every call through the ctx lookup from now on.
func useCallStates() { callStatesInUse.Store(^uint64(0)) }

func callStateFrom(ctx context.Context) *callState {
	if ctx == nil || callStatesInUse.Load() == 0 {
		return nil
	}
	st, _ := ctx.Value(callStateKey{}).(*callState)
	return st
}

func (st *callState) budgetOrNil() *budget {
	if st == nil {
		return nil
	}
	return st.budget
}

func (st *callState) provOrNil() *Provenance {
	if st == nil {
		return nil
	}
	return st.prov
}
