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

// TestLostLeaseOnFailover: a lease the promoted replica never got lets one
// more process probe in that window, and only one: docs/fleet.md's bound.
// The loss is made certain by deleting the lease on the replica alone
// before the master dies.
func TestLostLeaseOnFailover(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a master, a replica and three sentinels, and fails over (about 10s)")
	}
	t.Parallel() // mostly waiting for the sentinels
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	fo, err := redistest.StartFailover(ctx)
	if errors.Is(err, redistest.ErrNotInstalled) {
		t.Skip(err)
	}
	require.NoError(t, err)
	t.Cleanup(fo.Stop)

	type proc struct {
		f *Fleet
		b *runtime.Breaker
	}
	var ps []proc
	for _, origin := range []string{"a", "b", "c"} {
		rdb := redis.NewFailoverClient(&redis.FailoverOptions{MasterName: fo.MasterName, SentinelAddrs: fo.SentinelAddrs})
		t.Cleanup(func() { _ = rdb.Close() })
		reg := runtime.NewRegistry(runtime.WithoutEnv(), runtime.WithLogger(slog.New(slog.DiscardHandler)))
		b := reg.Breaker(runtime.Config{Name: "x", FailureThreshold: 1, ResetTimeout: time.Minute})
		f, err := Attach(reg, rdb, WithOrigin(origin), WithTimeout(time.Second), WithLogger(slog.New(slog.DiscardHandler)))
		require.NoError(t, err)
		t.Cleanup(func() { _ = f.Close() })
		ps = append(ps, proc{f, b})
	}
	a, b, c := ps[0], ps[1], ps[2]
	probe := func(p proc) (bool, time.Duration) { return (*sharer)(p.f).Probe(p.b) }

	ok, _ := probe(a)
	require.True(t, ok, "a takes the lease")
	ok, retry := probe(b)
	require.False(t, ok, "one probe per window")
	assert.Positive(t, retry)

	replica := redis.NewClient(&redis.Options{Addr: fo.Replica.Addr})
	t.Cleanup(func() { _ = replica.Close() })
	key := a.f.leaseKey("x")
	require.Eventually(t, func() bool { return replica.Get(ctx, key).Val() == "a" }, 5*time.Second, time.Millisecond,
		"replicated")
	require.NoError(t, replica.ConfigSet(ctx, "replica-read-only", "no").Err())
	require.NoError(t, replica.Del(ctx, key).Err()) // as if it had never arrived
	require.NoError(t, fo.Master.Process().Kill())
	<-fo.Master.Exited()
	require.Eventually(t, func() bool {
		addr, err := fo.MasterAddr(ctx)
		return err == nil && addr == fo.Replica.Addr
	}, 20*time.Second, 5*time.Millisecond, "the sentinels promote the replica")

	// b, on the new master, finds no lease and takes it: a second probe
	// in a's window, the one a lost lease allows.
	require.Eventually(t, func() bool {
		ok, _ := probe(b)
		return ok && b.f.up.Load() && replica.Get(ctx, key).Val() == "b"
	}, 10*time.Second, 5*time.Millisecond, "b takes the lost lease on the new master")
	// And no third: c waits for b's result, and so would a if it asked.
	for _, p := range []proc{a, c} {
		require.Eventually(t, p.f.up.Load, 10*time.Second, 5*time.Millisecond, "back on the new master")
	}
	ok, retry = probe(c)
	assert.False(t, ok, "one lease again: c waits")
	assert.Positive(t, retry)
	ok, _ = probe(a)
	assert.False(t, ok, "a, asking again, finds b's lease")
}
