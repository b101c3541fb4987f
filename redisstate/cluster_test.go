package redisstate_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/breakergen/breakergen/redisstate"
	"github.com/breakergen/breakergen/redisstate/redistest"
	"github.com/breakergen/breakergen/runtime"
)

// startCluster starts a three-master Redis Cluster for t (skipping t
// without redis-server or redis-cli) and a cluster client of it.
func startCluster(t *testing.T) (*redistest.Cluster, *redis.ClusterClient) {
	t.Helper()
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
	return c, rdb
}

// masterOf is the address of the master that serves key (see
// slotMaster).
func masterOf(t *testing.T, rdb redis.Cmdable, key string) string {
	t.Helper()
	addr, err := slotMaster(context.Background(), rdb, key)
	require.NoError(t, err)
	return addr
}

// slotMaster is the address of the master that serves key, as the node
// rdb asks sees it: the slot CLUSTER KEYSLOT gives, looked up in the slot
// map of CLUSTER NODES among the masters not known to have failed.
func slotMaster(ctx context.Context, rdb redis.Cmdable, key string) (string, error) {
	slot, err := rdb.ClusterKeySlot(ctx, key).Result()
	if err != nil {
		return "", err
	}
	nodes, err := rdb.ClusterNodes(ctx).Result()
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(strings.TrimSpace(nodes), "\n") {
		f := strings.Fields(line) // id addr@bus flags master ping pong epoch link slot...
		if len(f) < 9 || !strings.Contains(f[2], "master") || strings.Contains(f[2], "fail") {
			continue
		}
		for _, r := range f[8:] {
			lo, hi, ok := strings.Cut(r, "-")
			if !ok {
				hi = lo
			}
			from, err1 := strconv.ParseInt(lo, 10, 64)
			to, err2 := strconv.ParseInt(hi, 10, 64)
			if err1 == nil && err2 == nil && from <= slot && slot <= to {
				addr, _, _ := strings.Cut(f[1], "@")
				return addr, nil
			}
		}
	}
	return "", fmt.Errorf("no master serves slot %d of %q", slot, key)
}

// The keys of a breaker named name and of a shared limit, as doc.go names
// them with the default prefix.
func noteKey(name string) string   { return redisstate.DefaultPrefix + "open:" + name }
func leaseKey(name string) string  { return redisstate.DefaultPrefix + "probe:{" + name + "}" }
func closedKey(name string) string { return redisstate.DefaultPrefix + "closed:{" + name + "}" }
func rateKey(name string) string   { return redisstate.DefaultPrefix + "rate:" + name }

// spreadNames picks a breaker name whose note and lease are on two
// different masters, and a limit name whose bucket is on the third.
func spreadNames(t *testing.T, rdb *redis.ClusterClient) (breaker, limit string) {
	t.Helper()
	for i := range 100 {
		b := fmt.Sprintf("upstream-%d", i)
		if masterOf(t, rdb, noteKey(b)) != masterOf(t, rdb, leaseKey(b)) {
			breaker = b
			break
		}
	}
	require.NotEmpty(t, breaker)
	for i := range 100 {
		l := fmt.Sprintf("quota-%d", i)
		m := masterOf(t, rdb, rateKey(l))
		if m != masterOf(t, rdb, noteKey(breaker)) && m != masterOf(t, rdb, leaseKey(breaker)) {
			limit = l
			break
		}
	}
	require.NotEmpty(t, limit)
	return breaker, limit
}

// TestThreeProcessesOnCluster is the three-process test on a Redis
// Cluster, with the breaker's note, its lease and the shared bucket each
// on a master of its own.
func TestThreeProcessesOnCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a three-node Redis Cluster and three processes (about 15s)")
	}
	c, rdb := startCluster(t)
	breaker, limit := spreadNames(t, rdb)
	masters := map[string]bool{masterOf(t, rdb, noteKey(breaker)): true, masterOf(t, rdb, leaseKey(breaker)): true,
		masterOf(t, rdb, rateKey(limit)): true}
	require.Len(t, masters, 3, "note, lease and bucket on three masters")
	assert.Equal(t, masterOf(t, rdb, leaseKey(breaker)), masterOf(t, rdb, closedKey(breaker)),
		"the lease script's two keys on one master")
	t.Logf("breaker %q (note on %s, lease on %s), limit %q (on %s)", breaker, masterOf(t, rdb, noteKey(breaker)),
		masterOf(t, rdb, leaseKey(breaker)), limit, masterOf(t, rdb, rateKey(limit)))
	threeProcesses(t, startFleet(t, 3, childAddrEnv+"="+strings.Join(c.Addrs, ","), childModeEnv+"=1",
		childNamesEnv+"="+breaker+","+limit))
}

// TestFleetOnCluster: Redis Cluster runs a script only when all its keys
// hash to one slot, and the lease script's two keys share their hash tag
// whatever the name; a cluster client's subscription hears what is
// published on any master, and trips cross the fleet on a cluster.
func TestFleetOnCluster(t *testing.T) {
	t.Parallel() // mostly waiting for the cluster to form
	c, rdb := startCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, name := range []string{"tdx", "upstream", "腾讯", "a:b", "x{y", "weird}", "{", "a b"} {
		lease, err := rdb.ClusterKeySlot(ctx, leaseKey(name)).Result()
		require.NoError(t, err)
		closed, err := rdb.ClusterKeySlot(ctx, closedKey(name)).Result()
		require.NoError(t, err)
		assert.Equal(t, lease, closed, "name %q", name)
	}

	ps := rdb.Subscribe(ctx, redisstate.DefaultPrefix+"events")
	defer ps.Close()
	_, err := ps.Receive(ctx) // the subscription
	require.NoError(t, err)
	for i, addr := range c.Addrs {
		node := redis.NewClient(&redis.Options{Addr: addr})
		require.NoError(t, node.Publish(ctx, redisstate.DefaultPrefix+"events", fmt.Sprint("on node ", i)).Err())
		_ = node.Close()
		msg, err := ps.ReceiveMessage(ctx)
		require.NoError(t, err)
		assert.Equal(t, fmt.Sprint("on node ", i), msg.Payload)
	}

	a := attach(t, rdb, "a", 10*time.Second)
	other := redis.NewClusterClient(&redis.ClusterOptions{Addrs: c.Addrs})
	t.Cleanup(func() { _ = other.Close() })
	// A cluster's node passes on what other nodes publish over a link
	// from each, so no message is known to be current there and each is
	// checked against its note: TestOrderedClients and
	// TestCurrentOnBothClocks. (Here b may also follow through a resync,
	// should its subscription be made anew under load.)
	b := attach(t, other, "b", 10*time.Second)
	tripBy(t, a.tdx())
	require.Eventually(t, func() bool { return b.tdx().State() == runtime.Open }, within, time.Millisecond)
	assert.Equal(t, "peer a: 403 banned", b.reg.Events(1)[0].Reason)
	assert.Equal(t, "ok", a.reg.Health().Fleet.Redis)
	require.Eventually(t, func() bool { return b.reg.Health().Fleet.Members == 2 }, within, time.Millisecond,
		"members, as of b's next heartbeat")
}

// TestClusterMasterFailover: the master that serves the fleet's channel
// dies and its replica takes over its slots. Every member is back within
// seconds of the promotion, and a trip made then reaches every member:
// go-redis reads a cluster's slot map only when a node answers MOVED or
// ASK, and every 60s, so every member went on sending its subscription
// (and the commands of that master's slots) to the dead node, connection
// refused, and stayed away for up to a minute.
func TestClusterMasterFailover(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a six-node Redis Cluster (three masters, three replicas) and fails a master over (about 10s)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := redistest.StartCluster(ctx, redistest.WithReplicas())
	if errors.Is(err, redistest.ErrNotInstalled) {
		t.Skip(err)
	}
	require.NoError(t, err)
	t.Cleanup(c.Stop)
	var ms []member
	for _, origin := range []string{"a", "b", "c"} {
		rdb := redis.NewClusterClient(&redis.ClusterOptions{Addrs: c.Addrs})
		t.Cleanup(func() { _ = rdb.Close() })
		ms = append(ms, attach(t, rdb, origin, time.Minute))
	}
	for _, m := range ms {
		require.Eventually(t, func() bool { return m.reg.Health().Fleet.Members == 3 }, within, time.Millisecond)
	}

	// Every node but the one killed is alive: ask a replica's view.
	view := redis.NewClient(&redis.Options{Addr: c.Replicas[0].Addr})
	t.Cleanup(func() { _ = view.Close() })
	channel := redisstate.DefaultPrefix + "events"
	dead := masterOf(t, view, channel)
	i := slices.IndexFunc(c.Nodes, func(s *redistest.Server) bool { return s.Addr == dead })
	require.GreaterOrEqual(t, i, 0, "the channel's master %s is one of the masters started", dead)
	require.NoError(t, c.Nodes[i].Process().Kill())
	c.Nodes[i].Stop()
	require.Eventually(t, func() bool {
		addr, err := slotMaster(ctx, view, channel)
		return err == nil && addr != dead
	}, 20*time.Second, 10*time.Millisecond, "the replica took over")

	// Within the failover's own bound: a heartbeat to find Redis back,
	// and the subscription's 1.5s.
	const back = 10 * time.Second
	for _, m := range ms {
		require.Eventually(t, func() bool {
			h := m.reg.Health().Fleet
			return h.Redis == "ok" && h.Members == 3
		}, back, 10*time.Millisecond, "%s back after the promotion", m.fleet.Origin())
	}
	tripBy(t, ms[0].tdx())
	for _, m := range ms[1:] {
		require.Eventually(t, func() bool { return m.tdx().State() == runtime.Open }, back, time.Millisecond,
			"%s follows a trip made after the promotion", m.fleet.Origin())
	}
}
