package runtime

import (
	"context"

	"github.com/breakergen/breakergen/runtime/internal/core"
)

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
	st := core.From(ctx)
	next := &core.CallState{Budget: core.NewBudget(n, st.BudgetOf())}
	if st != nil {
		next.Prov, next.Busy = st.Prov, st.Busy
	}
	return core.With(ctx, next)
}

// BudgetLeft returns how many tries the budgets in ctx still allow (the
// smallest of the chain), and false when ctx carries none.
func BudgetLeft(ctx context.Context) (int, bool) {
	b := core.From(ctx).BudgetOf()
	if b == nil {
		return 0, false
	}
	return b.Left(), true
}
