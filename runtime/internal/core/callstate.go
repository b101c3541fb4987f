package core

import (
	"context"
	"errors"
	"sync/atomic"
)

// Budget is one runtime.WithBudget record; Parent is the record it was
// nested in.
type Budget struct {
	left   atomic.Int64
	Parent *Budget
}

// NewBudget returns a record of n tries nested in parent.
func NewBudget(n int, parent *Budget) *Budget {
	b := &Budget{Parent: parent}
	b.left.Store(int64(max(n, 0)))
	return b
}

// Left returns the tries the chain of records still allows: the smallest.
func (b *Budget) Left() int {
	left := b.left.Load()
	for p := b.Parent; p != nil; p = p.Parent {
		left = min(left, p.left.Load())
	}
	return int(max(left, 0))
}

// Available reports whether every record in the chain has a try left.
func (b *Budget) Available() bool {
	for ; b != nil; b = b.Parent {
		if b.left.Load() <= 0 {
			return false
		}
	}
	return true
}

// Spend takes one try from every record in the chain, or from none.
func (b *Budget) Spend() bool {
	for p := b; p != nil; p = p.Parent {
		if p.left.Add(-1) < 0 {
			for q := b; q != p.Parent; q = q.Parent { // give back
				q.left.Add(1)
			}
			return false
		}
	}
	return true
}

// Refund gives back one try that [Budget.Spend] took, to every record in
// the chain: for a try spent before the call was admitted, which a refusal
// then makes free.
func (b *Budget) Refund() {
	for ; b != nil; b = b.Parent {
		b.left.Add(1)
	}
}

// CallState is what a ctx carries for guarded calls: one value, so a call
// pays at most one ctx lookup for budgets and provenance together. Prov is
// a *runtime.Provenance (this package cannot name it; a type assertion on
// the claim is cheaper than a generic lookup that does not inline); Busy is
// set while a call writes it.
type CallState struct {
	Budget *Budget
	Prov   any
	Busy   *atomic.Bool
}

type callStateKey struct{}

// InUse is 0 until the first runtime.WithBudget or WithProvenance, and all
// ones from then on, so that programs that use neither never look in the
// ctx. It is a word rather than a flag so that the inlined admission can OR
// it into the state word and decide with one test.
var InUse atomic.Uint64

// With returns ctx carrying st, and sends every call through the ctx lookup
// from now on.
func With(ctx context.Context, st *CallState) context.Context {
	InUse.Store(^uint64(0))
	return context.WithValue(ctx, callStateKey{}, st)
}

// From returns the call state of ctx, or nil.
func From(ctx context.Context) *CallState {
	if ctx == nil || InUse.Load() == 0 {
		return nil
	}
	return lookup(ctx)
}

func lookup(ctx context.Context) *CallState {
	st, _ := ctx.Value(callStateKey{}).(*CallState)
	return st
}

// BudgetOf returns the budget record of st, or nil.
func (st *CallState) BudgetOf() *Budget {
	if st == nil {
		return nil
	}
	return st.Budget
}

// Claim returns the provenance record of st for the call about to start,
// or nil when there is none or an outer call holds it; [CallState.Unclaim]
// gives it back.
func (st *CallState) Claim() any {
	if st == nil || st.Prov == nil || !st.Busy.CompareAndSwap(false, true) {
		return nil
	}
	return st.Prov
}

// Unclaim gives back the record taken by Claim.
func (st *CallState) Unclaim() {
	if st != nil && st.Busy != nil {
		st.Busy.Store(false)
	}
}

// ErrUnreturned is what a provenance record says of a call whose function
// did not return: it panicked, or its goroutine exited.
var ErrUnreturned = errors.New("breaker: the call did not return (it panicked or its goroutine exited)")

// Why names the reason a source was passed over (runtime.Skip's Why) for
// err, in a call made with ctx: the error of the source's answer when
// answered (the source was called), else its refusal. Package runtime sets
// it in its init.
var Why func(ctx context.Context, err error, answered bool) string
