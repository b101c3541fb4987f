package redisstate_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/breakergen/breakergen/runtime"
)

// stateIs waits until every member's tdx is in st.
func stateIs(t *testing.T, st runtime.State, ms ...member) {
	t.Helper()
	for _, m := range ms {
		require.Eventually(t, func() bool { return m.tdx().State() == st }, within, time.Millisecond,
			"%s, the breaker is %v", m.fleet.Origin(), m.tdx().State())
	}
}

// TestFleetFollowsModes: SPEC §14 with a fleet. A mode set in one process
// reaches the others, a process that attaches later reads it, and a
// Resume from any process (one that only followed the mode included)
// ends it everywhere.
func TestFleetFollowsModes(t *testing.T) {
	s := startServer(t, "")
	rdb := newClient(t, s)
	a := attach(t, rdb, "a", time.Minute)
	b := attach(t, rdb, "b", time.Minute)
	c := attach(t, rdb, "c", time.Minute)

	a.tdx().Isolate("provider maintenance")
	stateIs(t, runtime.Isolated, a, b, c)
	assert.Equal(t, "peer a: isolated by operator: provider maintenance", b.reg.Events(1)[0].Reason)
	err := b.tdx().Do(context.Background(), func(context.Context) error { return nil })
	require.ErrorIs(t, err, runtime.ErrOpen)
	assert.Contains(t, err.Error(), "isolated by operator: provider maintenance")

	late := attach(t, rdb, "late", time.Minute)
	assert.Equal(t, runtime.Isolated, late.tdx().State(), "read at Attach")

	c.tdx().Resume("maintenance over") // c only followed the mode
	stateIs(t, runtime.Closed, a, b, c, late)
	assert.Equal(t, "peer c: resumed by operator: maintenance over", a.reg.Events(1)[0].Reason)

	b.tdx().Bypass("watching by hand")
	stateIs(t, runtime.Bypassed, a, b, c, late)
	tripBy2 := func(m member) { _ = m.tdx().Do(context.Background(), func(context.Context) error { return errBanned }) }
	tripBy2(b)
	assert.Equal(t, runtime.Bypassed, b.tdx().State(), "bypassed: never trips")
	a.tdx().Resume("done")
	stateIs(t, runtime.Closed, a, b, c, late)

	// A peer's trip does not end a mode, and a Resume of a CLOSED
	// breaker still ends the fleet's mode.
	a.tdx().Isolate("ban")
	stateIs(t, runtime.Isolated, a, b, c, late)
	late2 := attach(t, rdb, "late2", time.Minute)
	require.Equal(t, runtime.Isolated, late2.tdx().State())
	late2.tdx().Reset() // keeps the mode
	require.Equal(t, runtime.Isolated, late2.tdx().State())
	late2.tdx().Resume("from the newest process")
	stateIs(t, runtime.Closed, a, b, c, late, late2)
}

// TestFleetModeOutlivesAnOutage: a Redis outage never lifts an
// isolation; a Redis restarted empty gets the mode back from the
// processes that knew it; a Resume made while Redis was away ends the
// mode everywhere once it is back.
func TestFleetModeOutlivesAnOutage(t *testing.T) {
	s := startServer(t, "")
	a := attach(t, newClient(t, s), "a", time.Minute)
	b := attach(t, newClient(t, s), "b", time.Minute)
	a.tdx().Isolate("ban for an hour")
	stateIs(t, runtime.Isolated, a, b)

	s.kill()
	for _, m := range []member{a, b} {
		require.Eventually(t, func() bool { return m.reg.Health().Fleet.Redis == "down" }, within, time.Millisecond)
		assert.Equal(t, runtime.Isolated, m.tdx().State(), "%s keeps what it knew", m.fleet.Origin())
	}

	s.start() // empty: no persistence
	for _, m := range []member{a, b} {
		require.Eventually(t, func() bool { return m.reg.Health().Fleet.Redis == "ok" }, within, time.Millisecond)
	}
	probe := newClient(t, s)
	require.Eventually(t, func() bool {
		v, err := probe.Get(context.Background(), "breakergen:mode:{tdx}").Result()
		return err == nil && strings.Contains(v, `"mode":"isolated"`)
	}, within, time.Millisecond, "the mode written again")
	late := attach(t, newClient(t, s), "late", time.Minute)
	assert.Equal(t, runtime.Isolated, late.tdx().State(), "a process attached after the restart reads it")
	assert.Equal(t, runtime.Isolated, a.tdx().State())
	assert.Equal(t, runtime.Isolated, b.tdx().State())

	s.kill()
	require.Eventually(t, func() bool { return a.reg.Health().Fleet.Redis == "down" }, within, time.Millisecond)
	a.tdx().Resume("ban lifted") // while Redis is away: pending
	assert.Equal(t, runtime.Closed, a.tdx().State())
	assert.Equal(t, runtime.Isolated, b.tdx().State())
	s.start()
	stateIs(t, runtime.Closed, a, b, late)
}

// TestThreeProcessesFollowModes: SPEC §14's fleet modes across three OS
// processes on one redis-server: an isolation set in one reaches the two
// others (each refusing its calls from then on), and a Resume in another
// ends it in all three.
func TestThreeProcessesFollowModes(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three processes and a redis-server")
	}
	s := startServer(t, "")
	p := startFleet(t, s, 3)
	for range 3 {
		p.next("ready", func(l line) bool { return l.text == "ready" })
	}

	p.tell("isolate", 0)
	set := p.next("the isolation", func(l line) bool { return strings.HasPrefix(l.text, "state CLOSED ISOLATED") })
	require.Equal(t, 0, set.child)
	assert.Equal(t, "state CLOSED ISOLATED isolated by operator: by child-0", set.text)
	seen := map[int]time.Duration{}
	for len(seen) < 2 {
		l := p.next("a peer following", func(l line) bool {
			return l.text == "state CLOSED ISOLATED peer child-0: isolated by operator: by child-0"
		})
		seen[l.child] = l.at.Sub(set.at)
	}
	t.Logf("isolation followed by the peers after %v", seen)
	for c, d := range seen {
		assert.Less(t, d, 300*time.Millisecond, "child %d", c)
	}

	p.tell("resume", 2)
	resumed := map[int]string{}
	for len(resumed) < 3 {
		l := p.next("the resume", func(l line) bool { return strings.HasPrefix(l.text, "state ISOLATED CLOSED") })
		resumed[l.child] = l.text
	}
	assert.Equal(t, "state ISOLATED CLOSED resumed by operator: by child-2", resumed[2])
	assert.Equal(t, "state ISOLATED CLOSED peer child-2: resumed by operator: by child-2", resumed[0])
	assert.Equal(t, "state ISOLATED CLOSED peer child-2: resumed by operator: by child-2", resumed[1])
	p.tell("quit")
}
