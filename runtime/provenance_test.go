package runtime_test

import (
	"context"
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
