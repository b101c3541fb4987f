package redistest_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/breakergen/breakergen/redisstate/redistest"
)

func TestCluster(t *testing.T) {
	t.Parallel() // mostly waiting: for redis-cli, for the sentinels
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := redistest.StartCluster(ctx)
	if errors.Is(err, redistest.ErrNotInstalled) {
		t.Skip(err)
	}
	require.NoError(t, err)
	t.Cleanup(c.Stop)
	require.Len(t, c.Addrs, 3)

	rdb := redis.NewClusterClient(&redis.ClusterOptions{Addrs: c.Addrs})
	defer rdb.Close()
	nodes, err := rdb.ClusterNodes(ctx).Result()
	require.NoError(t, err)
	masters := 0
	for _, line := range strings.Split(strings.TrimSpace(nodes), "\n") {
		f := strings.Fields(line) // id addr flags master ping pong epoch link slot...
		require.GreaterOrEqual(t, len(f), 9, "a master with slots: %q", line)
		assert.Contains(t, f[2], "master")
		masters++
	}
	assert.Equal(t, 3, masters, "three masters share the slots, no replicas")
	for i, key := range []string{"a", "b", "c", "d"} {
		require.NoError(t, rdb.Set(ctx, key, i, 0).Err())
	}
	n, err := rdb.DBSize(ctx).Result() // summed over the masters
	require.NoError(t, err)
	assert.EqualValues(t, 4, n)

	cfg, err := redis.NewClient(&redis.Options{Addr: c.Addrs[0]}).ConfigGet(ctx, "save").Result()
	require.NoError(t, err)
	assert.Equal(t, "", cfg["save"], "no snapshots")
	c.Stop()
	c.Stop() // again: nothing
}

func TestFailover(t *testing.T) {
	t.Parallel() // mostly waiting: for redis-cli, for the sentinels
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	f, err := redistest.StartFailover(ctx)
	if errors.Is(err, redistest.ErrNotInstalled) {
		t.Skip(err)
	}
	require.NoError(t, err)
	t.Cleanup(f.Stop)
	addr, err := f.MasterAddr(ctx)
	require.NoError(t, err)
	assert.Equal(t, f.Master.Addr, addr)

	rdb := redis.NewFailoverClient(&redis.FailoverOptions{MasterName: f.MasterName, SentinelAddrs: f.SentinelAddrs})
	defer rdb.Close()
	require.NoError(t, rdb.Set(ctx, "k", "v", 0).Err())
	require.NoError(t, f.Master.Process().Kill())
	<-f.Master.Exited()
	require.Eventually(t, func() bool {
		addr, err := f.MasterAddr(ctx)
		return err == nil && addr == f.Replica.Addr
	}, 20*time.Second, 10*time.Millisecond, "the replica is promoted")
	require.Eventually(t, func() bool { return rdb.Set(ctx, "k2", "v2", 0).Err() == nil }, 10*time.Second, 10*time.Millisecond,
		"the client follows the promotion")
	v, err := rdb.Get(ctx, "k").Result()
	require.NoError(t, err)
	assert.Equal(t, "v", v, "replicated before the kill")
	_, err = os.Stat("dump.rdb")
	assert.ErrorIs(t, err, os.ErrNotExist, "nothing on disk where the test runs")
}

func TestHANotInstalled(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	_, err := redistest.StartCluster(context.Background())
	require.ErrorIs(t, err, redistest.ErrNotInstalled)
	_, err = redistest.StartFailover(context.Background())
	require.ErrorIs(t, err, redistest.ErrNotInstalled)
	assert.Contains(t, err.Error(), "apt-get install redis-sentinel")
}
