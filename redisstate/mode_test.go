package redisstate_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/breakergen/breakergen/redisstate"
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
	p := startFleet(t, 3, childAddrEnv+"="+s.addr())
	for range 3 {
		p.next("ready", func(l line) bool { return l.text == "ready" })
	}

	// Each process prints on its own pipe: the lines of the three may
	// reach the test in any order, so each is timed from the command.
	var other []string // lines that are not the ones waited for, for a failure's message
	moves := func(what, prefix string) (map[int]string, map[int]time.Duration) {
		t.Helper()
		told := time.Now()
		texts, after := map[int]string{}, map[int]time.Duration{}
		for len(texts) < 3 {
			l := p.next(fmt.Sprintf("%s in every process (so far %v; other lines: %s)", what, texts, strings.Join(other, "; ")), func(l line) bool {
				if strings.HasPrefix(l.text, prefix) {
					return true
				}
				if strings.HasPrefix(l.text, "state ") {
					other = append(other, l.text)
				}
				return false
			})
			texts[l.child], after[l.child] = l.text, l.at.Sub(told)
		}
		return texts, after
	}

	p.tell("isolate", 0)
	isolated, after := moves("the isolation", "state CLOSED ISOLATED")
	t.Logf("isolated after %v", after)
	assert.Equal(t, "state CLOSED ISOLATED isolated by operator: by child-0", isolated[0])
	for c := 1; c < 3; c++ {
		assert.Equal(t, "state CLOSED ISOLATED peer child-0: isolated by operator: by child-0", isolated[c])
		assert.Less(t, after[c], 300*time.Millisecond, "child %d", c)
	}

	p.tell("resume", 2)
	resumed, _ := moves("the resume", "state ISOLATED CLOSED")
	assert.Equal(t, "state ISOLATED CLOSED resumed by operator: by child-2", resumed[2])
	assert.Equal(t, "state ISOLATED CLOSED peer child-2: resumed by operator: by child-2", resumed[0])
	assert.Equal(t, "state ISOLATED CLOSED peer child-2: resumed by operator: by child-2", resumed[1])
	p.tell("quit")
}

// TestFleetResumeLetsBackATrippedSource: an operator's Resume of a breaker
// that tripped (a ban, no mode) closes it in every process, as it does in
// its own, and takes the trip's note away, so that a process that attaches
// later does not come up OPEN for the rest of the ban.
func TestFleetResumeLetsBackATrippedSource(t *testing.T) {
	s := startServer(t, "")
	rdb := newClient(t, s)
	a := attach(t, rdb, "a", time.Hour)
	b := attach(t, rdb, "b", time.Hour)
	tripBy(t, a.tdx())
	stateIs(t, runtime.Open, a, b)

	a.tdx().Resume("provider lifted the ban")
	stateIs(t, runtime.Closed, a, b)
	assert.Equal(t, "peer a: resumed by operator: provider lifted the ban", b.reg.Events(1)[0].Reason)
	late := attach(t, rdb, "late", time.Hour)
	assert.Equal(t, runtime.Closed, late.tdx().State(), "the trip's note went with the Resume")
}

// TestFleetEnvModeStaysOnAPeersResume: a mode a process took from its
// environment is its own (not shared): a Resume made in another process,
// where the breaker was CLOSED, does not lift it.
func TestFleetEnvModeStaysOnAPeersResume(t *testing.T) {
	s := startServer(t, "")
	rdb := newClient(t, s)
	t.Setenv("BREAKER_TDX_MODE", "isolate")
	reg := runtime.NewRegistry(runtime.WithLogger(slog.New(slog.DiscardHandler)))
	reg.Breaker(runtime.Config{Name: "tdx", FailureThreshold: 1, ResetTimeout: time.Hour})
	other := reg.Breaker(runtime.Config{Name: "other", FailureThreshold: 1, ResetTimeout: time.Hour})
	f, err := redisstate.Attach(reg, rdb, redisstate.WithTimeout(time.Second), redisstate.WithOrigin("a"))
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, f.Close()) })
	a := member{reg: reg, fleet: f}
	require.Equal(t, runtime.Isolated, a.tdx().State())

	b := attach(t, rdb, "b", time.Hour)
	bOther := b.reg.Breaker(runtime.Config{Name: "other", FailureThreshold: 1, ResetTimeout: time.Hour})
	b.tdx().Resume("fine here")
	bOther.Isolate("a marker after the Resume") // b's messages reach a in order
	require.Eventually(t, func() bool { return other.State() == runtime.Isolated }, within, time.Millisecond)
	assert.Equal(t, runtime.Isolated, a.tdx().State(), "the environment's mode stays")
}
