package redisstate_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/breakergen/breakergen/redisstate"
	"github.com/breakergen/breakergen/runtime"
)

// aclMember attaches a member (see attach) whose client logs in as user
// of s, made with the ACL rules (ACL SETUSER <user> reset on >pw
// rules...), sharing the limit "quota".
func aclMember(t *testing.T, s *server, user, origin string, rules ...string) member {
	t.Helper()
	admin := newClient(t, s)
	args := []any{"ACL", "SETUSER", user, "reset", "on", ">pw"}
	for _, r := range rules {
		args = append(args, r)
	}
	require.NoError(t, admin.Do(context.Background(), args...).Err())
	rdb := redis.NewClient(&redis.Options{Addr: s.addr(), Username: user, Password: "pw"})
	t.Cleanup(func() { _ = rdb.Close() })
	return attach(t, rdb, origin, time.Minute, redisstate.WithSharedLimits("quota"))
}

// TestACLRefusalIsNamed: a user whose ACL lacks what the fleet needs
// gets a log line that names the refusal and what the fleet needs. A
// user with no channels (Redis 7's default, acl-pubsub-default
// resetchannels) had its SUBSCRIBE refused in silence, the subscription
// made anew every 1.5 s for ever; one without scripts read as "Redis is
// away" for ever.
func TestACLRefusalIsNamed(t *testing.T) {
	for name, rules := range map[string][]string{
		"no channels": {"~breakergen:*", "+@all"},
		"no scripts":  {"~breakergen:*", "&breakergen:*", "+@all", "-@scripting"},
	} {
		t.Run(name, func(t *testing.T) {
			s := startServer(t, "")
			m := aclMember(t, s, "fleet", "a", rules...)
			require.Eventually(t, func() bool {
				return strings.Contains(m.log.String(), "Redis refused a command to this client's user (ACL)")
			}, within, time.Millisecond)
			line := m.log.String()
			assert.Contains(t, line, "NOPERM")
			assert.Contains(t, line, "~breakergen:* &breakergen:* +get")
			assert.Contains(t, line, "+subscribe +evalsha +eval")
		})
	}
}

// TestFleetUnderTheDocumentedACL: the ACL that docs/fleet.md gives, and
// nothing more, lets a fleet do all it does: heartbeats, trips, modes,
// a probe's lease, a shared limit.
func TestFleetUnderTheDocumentedACL(t *testing.T) {
	s := startServer(t, "")
	acl := strings.Fields("~breakergen:* &breakergen:* -@all +get +set +setnx +del +pttl +pexpire +zadd +zrem " +
		"+zremrangebyscore +zcard +zscore +time +publish +subscribe +evalsha +eval")
	a := aclMember(t, s, "fleet-a", "a", acl...)
	b := aclMember(t, s, "fleet-b", "b", acl...)
	for _, m := range []member{a, b} {
		require.Eventually(t, func() bool { return m.reg.Health().Fleet.Members == 2 }, within, time.Millisecond)
	}
	tripBy(t, a.tdx())
	stateIs(t, runtime.Open, b)
	b.tdx().Isolate("maintenance")
	stateIs(t, runtime.Isolated, a)
	a.tdx().Resume("done")
	stateIs(t, runtime.Closed, a, b)

	// A probe: the lease taken, the success published, the lease given
	// back.
	em := a.reg.Breaker(runtime.Config{Name: "em", FailureThreshold: 1, ResetTimeout: 50 * time.Millisecond})
	tripBy(t, em)
	require.Eventually(t, func() bool {
		return em.Do(context.Background(), func(context.Context) error { return nil }) == nil
	}, within, 10*time.Millisecond)
	assert.Equal(t, runtime.Closed, em.State())
	// The shared bucket: a token, and one given back.
	lim := b.reg.Limiter("quota", 100, 1)
	require.NoError(t, lim.Wait(context.Background(), 0))
	lim.Refund()
	for _, m := range []member{a, b} {
		assert.NotContains(t, m.log.String(), "NOPERM", m.fleet.Origin())
		assert.NotContains(t, m.log.String(), "Redis is away", m.fleet.Origin())
		assert.Equal(t, "ok", m.reg.Health().Fleet.Redis)
	}
}
