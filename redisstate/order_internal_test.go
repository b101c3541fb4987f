package redisstate

import (
	"testing"

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
