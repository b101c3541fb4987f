package clients_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/breakergen/breakergen/examples/clients"
	"github.com/breakergen/breakergen/runtime"
)

// TestRedisStaleWhileDown kills a real redis-server under a QuoteCache:
// the last value read for a key is served while Redis fails, and once the
// breaker is open without a dial; a key never read, or whose last answer
// was a miss, has nothing to serve.
func TestRedisStaleWhileDown(t *testing.T) {
	srv := startRedis(t)
	var dials atomic.Int64
	client := countingClient(t, srv.Addr, &dials)
	reg := newRegistry(newClock())
	cache := clients.NewQuoteCacheBreaker(client, reg)
	ctx := context.Background()
	require.NoError(t, client.Set(ctx, "quote:600519", "1688.00", 0).Err())
	require.Equal(t, "1688.00", cache.Get(ctx, "quote:600519").Val())
	assert.ErrorIs(t, cache.Get(ctx, "quote:missing").Err(), redis.Nil, "a miss is an answer")

	srv.Stop() // the outage
	miss := cache.Get(ctx, "quote:missing")
	require.Error(t, miss.Err())
	assert.NotErrorIs(t, miss.Err(), redis.Nil, "a miss is never kept: nothing stale to serve")
	for i := range 2 {
		pctx, p := runtime.WithProvenance(ctx)
		cmd := cache.Get(pctx, "quote:600519")
		require.NoError(t, cmd.Err(), "call %d: the kept command", i+1)
		assert.Equal(t, "1688.00", cmd.Val())
		assert.True(t, p.Stale, "call %d", i+1)
		assert.Equal(t, "error", p.Skipped[0].Why, "call %d reached redis", i+1)
	}
	b, ok := reg.Lookup("quotecache")
	require.True(t, ok)
	require.Equal(t, runtime.Open, b.State(), "threshold=3 failed commands trip it")

	before := dials.Load()
	pctx, p := runtime.WithProvenance(ctx)
	assert.Equal(t, "1688.00", cache.Get(pctx, "quote:600519").Val())
	assert.Equal(t, "open", p.Skipped[0].Why)
	assert.ErrorIs(t, cache.Get(ctx, "quote:000001").Err(), runtime.ErrOpen, "never read: nothing to serve")
	assert.Equal(t, before, dials.Load(), "a refused command dials nothing")
}

// TestRedisChainFallsBackToReplica stops the primary of two real
// redis-servers under a Replicas chain: the replica answers, the primary's
// breaker opens and is then skipped without a dial; with both down, the
// command carries the chain's error.
func TestRedisChainFallsBackToReplica(t *testing.T) {
	primarySrv, replicaSrv := startRedis(t), startRedis(t)
	var primaryDials, replicaDials atomic.Int64
	primary := countingClient(t, primarySrv.Addr, &primaryDials)
	replica := countingClient(t, replicaSrv.Addr, &replicaDials)
	ctx := context.Background()
	require.NoError(t, primary.Set(ctx, "k", "from the primary", 0).Err())
	require.NoError(t, replica.Set(ctx, "k", "from the replica", 0).Err())
	reg := newRegistry(newClock())
	chain := clients.NewReplicasChain(primary, reg, runtime.Fallback[clients.Replicas]{Name: "replica", Impl: replica})
	assert.Equal(t, "from the primary", chain.Get(ctx, "k").Val())

	primarySrv.Stop()
	for i := range 3 {
		pctx, p := runtime.WithProvenance(ctx)
		assert.Equal(t, "from the replica", chain.Get(pctx, "k").Val(), "call %d", i+1)
		assert.Equal(t, "fallback:replica", p.Source)
	}
	b, ok := reg.Lookup("redisprimary")
	require.True(t, ok)
	require.Equal(t, runtime.Open, b.State())
	before := primaryDials.Load()
	assert.Equal(t, "from the replica", chain.Get(ctx, "k").Val())
	assert.Equal(t, before, primaryDials.Load(), "an open primary is skipped without a dial")

	replicaSrv.Stop()
	cmd := chain.Get(ctx, "k")
	var ce *runtime.ChainError
	require.ErrorAs(t, cmd.Err(), &ce)
	require.Len(t, ce.Sources, 2)
	assert.Equal(t, "open", ce.Sources[0].Why)
	assert.Equal(t, "error", ce.Sources[1].Why)
	assert.NotErrorIs(t, cmd.Err(), runtime.ErrOpen, "the replica was asked: not every source refused")
	assert.Empty(t, cmd.Val())
}
