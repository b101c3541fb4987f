package redisstate

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/breakergen/breakergen/redisstate/redistest"
	"github.com/breakergen/breakergen/runtime"
)

// TestLeaseKeysShareASlot: Redis Cluster runs a script only when its keys
// hash to one slot (the text between a key's first { and the next }, or
// the whole key when that is empty). The lease script's two keys share a
// slot whatever the breaker's name, with any prefix Attach accepts, and a
// probe on a cluster takes the lease instead of failing with CROSSSLOT
// (which marked Redis away, for every breaker, once a window).
func TestLeaseKeysShareASlot(t *testing.T) {
	t.Parallel() // mostly waiting for the cluster to form
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := redistest.StartCluster(ctx)
	if errors.Is(err, redistest.ErrNotInstalled) {
		t.Skip(err)
	}
	require.NoError(t, err)
	t.Cleanup(c.Stop)
	rdb := redis.NewClusterClient(&redis.ClusterOptions{Addrs: c.Addrs})
	t.Cleanup(func() { _ = rdb.Close() })

	names := []string{"tdx", "腾讯", "a:b", "x{y", "weird}", "{", "}", "}x", "}}", "a b"}
	for _, prefix := range []string{DefaultPrefix, "{svc}:", "}", "a}b:"} {
		f := &Fleet{opt: options{prefix: prefix}}
		for _, name := range names {
			lease, err := rdb.ClusterKeySlot(ctx, f.leaseKey(name)).Result()
			require.NoError(t, err)
			closed, err := rdb.ClusterKeySlot(ctx, f.closedKey(name)).Result()
			require.NoError(t, err)
			assert.Equal(t, lease, closed, "prefix %q, name %q", prefix, name)
		}
	}

	reg := runtime.NewRegistry(runtime.WithoutEnv(), runtime.WithLogger(slog.New(slog.DiscardHandler)))
	b := reg.Breaker(runtime.Config{Name: "}odd", FailureThreshold: 1, ResetTimeout: time.Minute})
	f, err := Attach(reg, rdb, WithOrigin("a"), WithTimeout(time.Second), WithLogger(slog.New(slog.DiscardHandler)))
	require.NoError(t, err)
	t.Cleanup(func() { _ = f.Close() })
	probe, _ := (*sharer)(f).Probe(b)
	assert.True(t, probe)
	assert.True(t, f.up.Load(), "the lease script ran: Redis is not away")
	holder, err := rdb.Get(ctx, f.leaseKey("}odd")).Result()
	require.NoError(t, err)
	assert.Equal(t, "a", holder)
}

// TestPrefixBraces: a prefix whose braces would split a breaker's keys
// over two slots is refused.
func TestPrefixBraces(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"}) // never dialled for a refused prefix
	t.Cleanup(func() { _ = rdb.Close() })
	for _, prefix := range []string{"x{", "{}", "a{b"} {
		reg := runtime.NewRegistry(runtime.WithoutEnv())
		_, err := Attach(reg, rdb, WithPrefix(prefix))
		require.ErrorContains(t, err, "braces", "prefix %q", prefix)
	}
}
