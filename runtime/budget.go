package runtime

import (
	"context"
	"errors"
	"sync/atomic"
)

// ErrBudget is returned for a call that could make no upstream try because
// its budget of tries was spent (see [WithBudget] and the `budget` key).
var ErrBudget = errors.New("breaker: retry budget spent")

// budget is one WithBudget record; parent is the record it was nested in.
type budget struct {
	left   atomic.Int64
	parent *budget
}

// WithBudget returns a ctx that carries a budget of n upstream tries, shared
// by every guarded call made with it (and with contexts derived from it), so
// that one incoming request cannot spend more than n tries across all its
// calls, retries and fallbacks. Budgets nest: a try spends one from every
// record in the chain, and is refused when any of them is spent. A try that
// a breaker or limiter refused costs nothing. WithBudget(ctx, 0) refuses
// every call; n < 0 is taken as 0.
func WithBudget(ctx context.Context, n int) context.Context {
	if ctx == nil {
		ctx = context.Background()
	}
	useCallStates()
	st := callStateFrom(ctx)
	b := &budget{parent: st.budgetOrNil()}
	b.left.Store(int64(max(n, 0)))
	return context.WithValue(ctx, callStateKey{}, &callState{budget: b, prov: st.provOrNil()})
}

// BudgetLeft returns how many tries the budgets in ctx still allow (the
// smallest of the chain), and false when ctx carries none.
func BudgetLeft(ctx context.Context) (int, bool) {
	b := budgetFrom(ctx)
	if b == nil {
		return 0, false
	}
	left := b.left.Load()
	for p := b.parent; p != nil; p = p.parent {
		left = min(left, p.left.Load())
	}
	return int(max(left, 0)), true
}

func budgetFrom(ctx context.Context) *budget { return callStateFrom(ctx).budgetOrNil() }

// available reports whether every record in the chain has a try left.
func (b *budget) available() bool {
	for ; b != nil; b = b.parent {
		if b.left.Load() <= 0 {
			return false
		}
	}
	return true
}

// spend takes one try from every record in the chain, or from none.
func (b *budget) spend() bool {
	for p := b; p != nil; p = p.parent {
		if p.left.Add(-1) < 0 {
			for q := b; q != p.parent; q = q.parent { // give back
				q.left.Add(1)
			}
			return false
		}
	}
	return true
}
