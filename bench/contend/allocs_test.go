package contend_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/breakergen/breakergen/runtime"

	"github.com/breakergen/breakergen/bench/contend"
	"github.com/breakergen/breakergen/bench/quote"
)

// The allocation tests of the generated wrapper and chain.
// a benchmark's per-op average rounds away.

// TestRejectionAllocatesNothing: a rejection must not allocate (SPEC §3),
// and neither does a CLOSED success.
func TestRejectionAllocatesNothing(t *testing.T) {
	s := contend.Settings{Threshold: 1, Reset: time.Hour}
	w := contend.NewBreakergen(quote.NewUpstream(quote.ErrUpstream), contend.Registry(s), s)
	ctx := context.Background()
	w.Quote(ctx, "trip")
	_, err := w.Quote(ctx, "x")
	require.ErrorIs(t, err, runtime.ErrOpen, "not open")
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under -race: make allocs runs this test without it")
	}
	assert.Zero(t, testing.AllocsPerRun(100, func() { w.Quote(ctx, "x") }), "rejection allocates")
	ok := contend.NewBreakergen(quote.NewUpstream(nil), contend.Registry(closed), closed)
	assert.Zero(t, testing.AllocsPerRun(100, func() { ok.Quote(ctx, "x") }), "success allocates")
}

// TestChainPrimarySuccessAllocatesNothing: a chain whose primary answers
// allocates nothing (SPEC §6), with or without a provenance record. It
// records the count for the report's allocation target.
func TestChainPrimarySuccessAllocatesNothing(t *testing.T) {
	c := contend.NewBreakergenChain(quote.NewUpstream(nil), contend.Registry(closed))
	ctx := context.Background()
	pctx, p := runtime.WithProvenance(ctx)
	_, err := c.Quote(pctx, "x")
	require.NoError(t, err, "primary did not answer")
	require.Equal(t, "quotes", p.Source, "primary did not answer")
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under -race: make allocs runs this test without it")
	}
	n := testing.AllocsPerRun(100, func() { c.Quote(ctx, "x") })
	assert.Zero(t, n, "chain success allocates")
	assert.Zero(t, testing.AllocsPerRun(100, func() { c.Quote(pctx, "x") }), "chain success with provenance allocates")
	record(t, "breakergen", "allocs:Chain", fmt.Sprint(n))
}

// TestPlainWrapperProvenanceAllocatesNothing: a plain wrapper's call made
// with a provenance record writes it (SPEC §6) and allocates nothing, on
// success, failure and rejection alike: the record's Skipped keeps its
// array from one call to the next.
func TestPlainWrapperProvenanceAllocatesNothing(t *testing.T) {
	ok := contend.NewBreakergen(quote.NewUpstream(nil), contend.Registry(closed), closed)
	s := contend.Settings{Threshold: 1 << 30, Reset: time.Hour}
	failing := contend.NewBreakergen(quote.NewUpstream(quote.ErrUpstream), contend.Registry(s), s)
	one := contend.Settings{Threshold: 1, Reset: time.Hour}
	open := contend.NewBreakergen(quote.NewUpstream(quote.ErrUpstream), contend.Registry(one), one)
	pctx, p := runtime.WithProvenance(context.Background())
	_, err := ok.Quote(pctx, "x")
	require.NoError(t, err)
	require.Equal(t, "live", p.String())
	_, err = failing.Quote(pctx, "x")
	require.ErrorIs(t, err, quote.ErrUpstream)
	require.Len(t, p.Skipped, 1, "the failure is written")
	open.Quote(pctx, "trip")
	_, err = open.Quote(pctx, "x")
	require.ErrorIs(t, err, runtime.ErrOpen)
	require.Equal(t, "open", p.Skipped[0].Why, "the rejection is written")
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under -race: make allocs runs this test without it")
	}
	assert.Zero(t, testing.AllocsPerRun(100, func() { ok.Quote(pctx, "x") }), "success with provenance allocates")
	assert.Zero(t, testing.AllocsPerRun(100, func() { failing.Quote(pctx, "x") }), "failure with provenance allocates")
	assert.Zero(t, testing.AllocsPerRun(100, func() { open.Quote(pctx, "x") }), "rejection with provenance allocates")
}
