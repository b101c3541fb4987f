package runtime_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/breakergen/breakergen/runtime"
)

func TestProvenanceString(t *testing.T) {
	var none *runtime.Provenance
	assert.Equal(t, "", none.String())
	assert.Equal(t, "none", (&runtime.Provenance{}).String())
	assert.Equal(t, "live", (&runtime.Provenance{Source: "eastmoney"}).String())
	assert.Equal(t, "fallback:sina (eastmoney open)", (&runtime.Provenance{
		Source:  "fallback:sina",
		Skipped: []runtime.Skip{{Source: "eastmoney", Why: "open"}},
	}).String())
	assert.Equal(t, "stale 12s (eastmoney error, fallback:sina open)", (&runtime.Provenance{
		Source: "stale", Stale: true, Age: 12*time.Second + 300*time.Millisecond,
		Skipped: []runtime.Skip{{Source: "eastmoney", Why: "error"}, {Source: "fallback:sina", Why: "open"}},
	}).String())
	assert.Equal(t, "fallback:sina hedged (eastmoney slow)", (&runtime.Provenance{
		Source: "fallback:sina", Hedged: true,
		Skipped: []runtime.Skip{{Source: "eastmoney", Why: "slow"}},
	}).String())
}

func TestWithProvenanceGivesAFreshRecord(t *testing.T) {
	var nilCtx context.Context // accepted as the background
	ctx, p := runtime.WithProvenance(nilCtx)
	require.NotNil(t, ctx)
	require.NotNil(t, p)
	_, p2 := runtime.WithProvenance(ctx)
	assert.NotSame(t, p, p2, "each call has its own record")
	assert.Zero(t, *p2)
}

// TestDoWritesProvenance: Breaker.Do writes the record as a generated
// wrapper's single call does: the answer, a failure, a rejection, a
// panic (after which the record is free again), and a nested Do that
// leaves it to the outer one.
func TestDoWritesProvenance(t *testing.T) {
	reg, _ := newTestRegistry(t)
	b := reg.Breaker(runtime.Config{Name: "do", FailureThreshold: 2, ResetTimeout: time.Minute})
	inner := reg.Breaker(runtime.Config{Name: "inner"})
	ctx, p := runtime.WithProvenance(context.Background())
	ok := func(context.Context) error { return nil }

	require.NoError(t, b.Do(ctx, ok))
	assert.Equal(t, runtime.Provenance{Source: "do", Tries: 1}, *p)

	require.ErrorIs(t, b.Do(ctx, func(ctx context.Context) error {
		assert.ErrorIs(t, inner.Do(ctx, func(context.Context) error { return errBoom }), errBoom)
		return errDoFailed
	}), errDoFailed)
	assert.Equal(t, "none (do error)", p.String(), "the outer call's failure, not the inner one's")
	assert.Equal(t, 1, p.Tries)
	require.Len(t, p.Skipped, 1)
	assert.ErrorIs(t, p.Skipped[0].Err, errDoFailed)

	assert.PanicsWithValue(t, "boom", func() {
		_ = b.Do(ctx, func(context.Context) error { panic("boom") })
	})
	assert.Equal(t, "none (do error)", p.String(), "the panic is the call's failure")
	require.Equal(t, runtime.Open, b.State(), "threshold=2: the failure and the panic")

	require.ErrorIs(t, b.Do(ctx, ok), runtime.ErrOpen)
	assert.Equal(t, "none (do open)", p.String(), "written: the panic gave the record back")
	assert.Equal(t, 0, p.Tries, "a rejection spends no try")

	require.NoError(t, inner.Do(context.Background(), ok))
	assert.Equal(t, "none (do open)", p.String(), "a call without the record's ctx leaves it alone")
}

var errDoFailed = errors.New("do failed")
