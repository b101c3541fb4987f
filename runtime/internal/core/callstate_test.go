package core

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBudgetSpendsFromEveryRecordOrNone: a try spends one from every
// record of the chain; when one is spent, none is charged.
func TestBudgetSpendsFromEveryRecordOrNone(t *testing.T) {
	outer := NewBudget(1, nil)
	inner := NewBudget(3, outer)
	require.True(t, inner.Available())
	require.True(t, inner.Spend())
	assert.Equal(t, 0, inner.Left(), "the outer record is spent")
	assert.False(t, inner.Available())
	assert.False(t, inner.Spend())
	assert.Equal(t, int64(2), inner.left.Load(), "the refused try was given back to the inner record")
	assert.Equal(t, int64(0), outer.left.Load())

	var none *Budget
	assert.True(t, none.Available(), "no record: no limit")
	assert.True(t, none.Spend())
}

type record struct{ name string }

// TestCallStateClaimOnce: the record of a ctx is claimed by one call at a
// time, and the lookup is skipped until a state was ever stored.
func TestCallStateClaimOnce(t *testing.T) {
	old := InUse.Load()
	defer InUse.Store(old)
	InUse.Store(0)
	assert.Nil(t, From(context.Background()))

	r := &record{name: "r"}
	ctx := With(context.Background(), &CallState{Prov: r, Busy: new(atomic.Bool)})
	assert.NotZero(t, InUse.Load(), "every call looks in the ctx from now on")
	st := From(ctx)
	require.NotNil(t, st)
	assert.Same(t, r, st.Claim())
	assert.Nil(t, st.Claim(), "an outer call holds it")
	st.Unclaim()
	assert.Same(t, r, st.Claim())

	var noState *CallState
	assert.Nil(t, noState.Claim())
	assert.Nil(t, noState.BudgetOf())
	noState.Unclaim()
}
