package contend_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/breakergen/breakergen/runtime"

	"github.com/breakergen/breakergen/bench/contend"
	"github.com/breakergen/breakergen/bench/quote"
)

// The judged shapes (SPEC §12): a method whose answer carries its
// outcome, as go-redis's commands do, wrapped plainly, kept (stale) and
// chained (SPEC §6). Their success paths allocate nothing, as an error
// result's do.

// TestJudgedSuccessAllocatesNothing: the judged wrapper's, its stale
// wrapper's and its chain's success allocate nothing, the chain's with a
// provenance record too (SPEC §6: the primary's success path).
func TestJudgedSuccessAllocatesNothing(t *testing.T) {
	up := quote.NewUpstream(nil)
	ctx := context.Background()
	w := quote.NewCmdQuoterBreaker(up, contend.Registry(closed))
	s := quote.NewStaleCmdQuoterBreaker(up, contend.Registry(closed))
	c := quote.NewCmdQuoterChain(up, contend.Registry(closed))
	pctx, p := runtime.WithProvenance(ctx)
	require.NoError(t, c.QuoteCmd(pctx, "600519").Err())
	require.Equal(t, "cmds", p.Source, "primary did not answer")
	require.NoError(t, s.QuoteCmd(ctx, "600519").Err()) // the key is kept from now on
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under -race: make allocs runs this test without it")
	}
	assert.Zero(t, testing.AllocsPerRun(100, func() { w.QuoteCmd(ctx, "600519") }), "judged success allocates")
	assert.Zero(t, testing.AllocsPerRun(100, func() { s.QuoteCmd(ctx, "600519") }), "judged stale success allocates")
	assert.Zero(t, testing.AllocsPerRun(100, func() { c.QuoteCmd(ctx, "600519") }), "judged chain success allocates")
	assert.Zero(t, testing.AllocsPerRun(100, func() { c.QuoteCmd(pctx, "600519") }), "judged chain success with provenance allocates")
}

// BenchmarkJudgedSuccess times a judged method's success: the upstream
// called directly, the judged wrapper, its stale wrapper (which stores
// each answer) and its chain, beside the error-result wrapper and chain
// of the same upstream. Run:
//
//	go test -run '^$' -bench 'JudgedSuccess' -benchmem -count 6 -cpu 1 ./contend/
func BenchmarkJudgedSuccess(b *testing.B) {
	up := quote.NewUpstream(nil)
	cmds := map[string]quote.CmdQuoter{
		"direct":           up,
		"breakergen":       quote.NewCmdQuoterBreaker(up, contend.Registry(closed)),
		"breakergen-stale": quote.NewStaleCmdQuoterBreaker(up, contend.Registry(closed)),
		"breakergen-chain": quote.NewCmdQuoterChain(up, contend.Registry(closed)),
	}
	for _, name := range []string{"direct", "breakergen", "breakergen-stale", "breakergen-chain"} {
		q := cmds[name]
		b.Run(name, func(b *testing.B) {
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				q.QuoteCmd(ctx, "600519")
			}
		})
	}
	errs := map[string]quote.Quoter{
		"error-result":       quote.NewQuoterBreaker(up, contend.Registry(closed)),
		"error-result-chain": quote.NewQuoterChain(up, contend.Registry(closed)),
	}
	for _, name := range []string{"error-result", "error-result-chain"} {
		q := errs[name]
		b.Run(name, func(b *testing.B) { quoteSerially(b, q) })
	}
}
