package redisstate

import (
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
)

// TestOrderedClients: a trip message is taken at its word only where one
// server publishes all the subscription hears: a plain client, or one
// that follows a Sentinel's master; not a Cluster's nor a Ring's.
func TestOrderedClients(t *testing.T) {
	plain := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	failover := redis.NewFailoverClient(&redis.FailoverOptions{MasterName: "m", SentinelAddrs: []string{"127.0.0.1:1"}})
	cluster := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{"127.0.0.1:1"}})
	ring := redis.NewRing(&redis.RingOptions{Addrs: map[string]string{"a": "127.0.0.1:1"}})
	t.Cleanup(func() {
		for _, c := range []interface{ Close() error }{plain, failover, cluster, ring} {
			_ = c.Close()
		}
	})
	assert.True(t, ordered(plain))
	assert.True(t, ordered(failover))
	assert.False(t, ordered(cluster))
	assert.False(t, ordered(ring))
}

// TestCurrentOnBothClocks: a message is current when the last heartbeat
// heard was sent within freshFor on the monotonic clock and on the wall
// clock: after a host's suspend the first has not moved and the second
// has; and never on a client that does not order.
func TestCurrentOnBothClocks(t *testing.T) {
	fleet := func(order bool) *Fleet {
		return &Fleet{born: time.Now().Add(-time.Minute), order: order, opt: options{freshFor: freshFor}}
	}
	now := time.Now()
	f := fleet(true)
	assert.False(t, f.current(), "no heartbeat heard")
	f.heardBeat(strconv.FormatInt(int64(now.Sub(f.born)), 10) + " " + strconv.FormatInt(now.UnixNano(), 10))
	assert.True(t, f.current())

	suspended := fleet(true)
	suspended.heardSent(now.Sub(suspended.born), now.Add(-10*time.Second).UnixNano())
	assert.False(t, suspended.current(), "sent 10s ago on the wall clock")

	cluster := fleet(false)
	cluster.heardSent(now.Sub(cluster.born), now.UnixNano())
	assert.False(t, cluster.current())

	for _, p := range []string{"", "1", "x y", "1 y", strconv.FormatInt(int64(now.Sub(f.born)), 10)} {
		g := fleet(true)
		g.heardBeat(p)
		assert.Zero(t, g.sent.Load(), "payload %q", p)
	}
}
