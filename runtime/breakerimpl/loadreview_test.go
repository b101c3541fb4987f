package breakerimpl_test

import (
	"context"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/breakergen/breakergen/runtime"
	"github.com/breakergen/breakergen/runtime/breakerimpl"
)

// TestBudgetRefusalAfterTokenWaitRefunds: a call that waited for a token
// and then found its budget spent by a sibling call is refused with
// ErrBudget, and gives the token back, as every refusal frees what the
// steps before it took (SPEC §9).
func TestBudgetRefusalAfterTokenWaitRefunds(t *testing.T) {
	defer breakerimpl.ForgetCallStates()()
	synctest.Test(t, func(t *testing.T) {
		reg := bubbleRegistry()
		limited := breakerimpl.NewRoute(reg, anyImpl, breakerimpl.RouteConfig{
			Breaker: runtime.Config{Name: "limited"}, Rate: 1, Burst: 1})
		other := breakerimpl.NewRoute(reg, anyImpl, breakerimpl.RouteConfig{Breaker: runtime.Config{Name: "other"}})
		require.True(t, limited.Limiter().Allow(), "the burst's one token is gone")

		ctx := runtime.WithBudget(context.Background(), 1)
		refused := make(chan error, 1)
		go func() {
			_, err := limited.Enter(ctx) // waits 1s for the next token
			refused <- err
		}()
		synctest.Wait()
		call, err := enter(other, ctx) // the sibling spends the last try
		require.NoError(t, err)
		require.NoError(t, once(call, ctx, func() error { return nil }))

		require.ErrorIs(t, <-refused, runtime.ErrBudget)
		assert.True(t, limited.Limiter().Allow(), "the token of the refused call was given back")
	})
}
