package clients_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/breakergen/breakergen/runtime"
)

// Sharded is the part of go-redis's UniversalClient that a service on a
// *redis.Ring, a *redis.ClusterClient or a *redis.Client calls: a
// command, and the autopipeliners. The autopipeliners send nothing to
// Redis (AutoPipeline builds a pipeliner locally; a Ring answers that it
// supports none): embedded from redis.UniversalClient the generator
// delegates them unguarded by itself; redeclared, as here, they are the
// interface's own methods, which skip leaves unguarded. Either way their
// error never trips the breaker of the commands, and an OPEN breaker
// never refuses them.
//
//breaker:name=sharded threshold=3 reset=5s
type Sharded interface {
	Get(ctx context.Context, key string) *redis.StringCmd
	//breaker:skip
	AutoPipeline() (*redis.AutoPipeliner, error)
	//breaker:skip
	AsyncAutoPipeline() (*redis.AutoPipeliner, error)
}

// TestRedisRingAutoPipelineIsLocal: a *redis.Ring answers AutoPipeline and
// AsyncAutoPipeline with an error (it supports no autopipeliner), more
// times than threshold=3; the breaker of the commands counts none of them,
// and a Get of the healthy server still answers.
func TestRedisRingAutoPipelineIsLocal(t *testing.T) {
	srv := startRedis(t)
	ring := redis.NewRing(&redis.RingOptions{Addrs: map[string]string{"a": srv.Addr}, MaxRetries: -1})
	t.Cleanup(func() { _ = ring.Close() })
	reg := newRegistry(newClock())
	sharded := NewShardedBreaker(ring, reg)
	b, ok := reg.Lookup("sharded")
	require.True(t, ok)
	ctx := context.Background()
	require.NoError(t, ring.Set(ctx, "k", "v", 0).Err())

	for range 5 {
		_, err := sharded.AutoPipeline()
		require.ErrorIs(t, err, redis.ErrRingAutoPipelineUnsupported)
		_, err = sharded.AsyncAutoPipeline()
		require.ErrorIs(t, err, redis.ErrRingAutoPipelineUnsupported)
	}
	assert.Equal(t, runtime.Closed, b.State(), "a Ring's 'not supported' is the client's own answer")
	assert.Zero(t, b.Stats().Failures)
	v, err := sharded.Get(ctx, "k").Result()
	require.NoError(t, err)
	assert.Equal(t, "v", v)
}

// TestRedisAutoPipelineWhileOpen: with the server gone, threshold=3 failed
// commands open the breaker; AutoPipeline of a *redis.Client, which builds
// its pipeliner without a call to Redis, is not refused.
func TestRedisAutoPipelineWhileOpen(t *testing.T) {
	srv := startRedis(t)
	var dials atomic.Int64
	reg := newRegistry(newClock())
	sharded := NewShardedBreaker(countingClient(t, srv.Addr, &dials), reg)
	b, ok := reg.Lookup("sharded")
	require.True(t, ok)
	ctx := context.Background()
	srv.Stop()
	for range 3 {
		require.Error(t, sharded.Get(ctx, "k").Err())
	}
	require.Equal(t, runtime.Open, b.State())
	require.ErrorIs(t, sharded.Get(ctx, "k").Err(), runtime.ErrOpen)

	ap, err := sharded.AutoPipeline()
	require.NoError(t, err, "built locally: nothing for an OPEN breaker to refuse")
	require.NotNil(t, ap)
	ap, err = sharded.AsyncAutoPipeline()
	require.NoError(t, err)
	require.NotNil(t, ap)
}
