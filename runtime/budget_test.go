package runtime_test

import (
	"bytes"
	"context"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/breakergen/breakergen/runtime"
)

// TestBudgetLeftNests: a nested budget reports the smallest of the chain,
// a ctx without one reports none, and a negative budget is an empty one.
func TestBudgetLeftNests(t *testing.T) {
	_, ok := runtime.BudgetLeft(context.Background())
	assert.False(t, ok, "no budget in the ctx")

	outer := runtime.WithBudget(context.Background(), 5)
	left, ok := runtime.BudgetLeft(outer)
	require.True(t, ok)
	assert.Equal(t, 5, left)

	inner := runtime.WithBudget(outer, 9)
	left, _ = runtime.BudgetLeft(inner)
	assert.Equal(t, 5, left, "the outer record is the smaller")
	inner = runtime.WithBudget(outer, 2)
	left, _ = runtime.BudgetLeft(inner)
	assert.Equal(t, 2, left)

	var nilCtx context.Context // accepted as the background
	left, ok = runtime.BudgetLeft(runtime.WithBudget(nilCtx, -3))
	assert.True(t, ok)
	assert.Zero(t, left)
}

// TestBudgetKeepsProvenance: a budget added after a provenance record
// keeps the record in the ctx, and the other way round.
func TestBudgetKeepsProvenance(t *testing.T) {
	ctx, p := runtime.WithProvenance(context.Background())
	ctx = runtime.WithBudget(ctx, 3)
	reg, _ := newTestRegistry(t)
	b := reg.Breaker(runtime.Config{Name: "b"})
	require.NoError(t, b.Do(ctx, func(context.Context) error { return nil }))
	left, ok := runtime.BudgetLeft(ctx)
	require.True(t, ok)
	assert.Equal(t, 2, left, "Breaker.Do's call is a try")
	assert.NotNil(t, p)

	ctx2, _ := runtime.WithProvenance(runtime.WithBudget(context.Background(), 4))
	left, ok = runtime.BudgetLeft(ctx2)
	require.True(t, ok)
	assert.Equal(t, 4, left, "a provenance record keeps the budget")
}

// TestDoSpendsTheBudget: SPEC §5's budget in the ctx applies to a call
// made with Breaker.Do as to a generated wrapper's: WithBudget(ctx, 0)
// refuses every call without asking the breaker or calling fn, each call
// fn is made for is one try, and a call the breaker refuses costs nothing.
func TestDoSpendsTheBudget(t *testing.T) {
	reg, _ := newTestRegistry(t)
	b := reg.Breaker(runtime.Config{Name: "b", FailureThreshold: 1})
	called := 0
	ok := func(context.Context) error { called++; return nil }

	require.ErrorIs(t, b.Do(runtime.WithBudget(context.Background(), 0), ok), runtime.ErrBudget)
	assert.Zero(t, called, "no try left: fn is not called")
	assert.Equal(t, runtime.Closed, b.State())

	ctx := runtime.WithBudget(context.Background(), 2)
	require.NoError(t, b.Do(ctx, ok))
	require.ErrorIs(t, b.Do(ctx, func(context.Context) error { called++; return errDown }), errDown)
	require.Equal(t, runtime.Open, b.State())
	left, _ := runtime.BudgetLeft(ctx)
	assert.Equal(t, 0, left)
	assert.Equal(t, 2, called)

	ctx = runtime.WithBudget(context.Background(), 1)
	require.ErrorIs(t, b.Do(ctx, ok), runtime.ErrOpen)
	left, _ = runtime.BudgetLeft(ctx)
	assert.Equal(t, 1, left, "a call the breaker refused costs nothing")
	assert.Equal(t, 2, called)
}

// TestDoSpendsOnlyOnceAdmitted: a Do waiting for its breaker's bulkhead
// has not spent the budget's last try, so a sibling call on another
// breaker with the same ctx may make it; the waiting call, admitted after,
// finds the budget spent and returns ErrBudget without calling fn, its
// slot given back and nothing counted.
func TestDoSpendsOnlyOnceAdmitted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := runtime.NewRegistry(runtime.WithoutEnv(), runtime.WithLogger(discardLogger()))
		x := reg.Breaker(runtime.Config{Name: "x", Concurrency: 1})
		y := reg.Breaker(runtime.Config{Name: "y"})
		held, err := x.Acquire(context.Background()) // x's one slot
		require.NoError(t, err)
		ctx := runtime.WithBudget(context.Background(), 1)
		called := false
		done := make(chan error)
		go func() { done <- x.Do(ctx, func(context.Context) error { called = true; return nil }) }()
		synctest.Wait() // x's Do waits for the slot

		require.NoError(t, y.Do(ctx, func(context.Context) error { return nil }), "the last try is still there")
		x.Release(held, nil)
		require.ErrorIs(t, <-done, runtime.ErrBudget)
		assert.False(t, called)
		st := x.Stats()
		assert.Zero(t, st.InFlight, "the waiting call's slot is given back")
		assert.Zero(t, st.Failures)
	})
}

// TestDoBudgetRefusalIsRecorded: with a recorder, a Do the budget refuses
// is a line of class budget, as a generated wrapper's call is.
func TestDoBudgetRefusalIsRecorded(t *testing.T) {
	var out bytes.Buffer
	reg := runtime.NewRegistry(runtime.WithoutEnv(), runtime.WithLogger(discardLogger()), runtime.WithRecorder(&out))
	b := reg.Breaker(runtime.Config{Name: "b"})
	require.ErrorIs(t, b.Do(runtime.WithBudget(context.Background(), 0), func(context.Context) error { return nil }), runtime.ErrBudget)
	require.NoError(t, reg.Close())
	assert.Regexp(t, `(?m)^\d+ \d+ budget b$`, out.String())
}
