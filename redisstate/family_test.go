package redisstate_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/breakergen/breakergen/redisstate"
	"github.com/breakergen/breakergen/runtime"
)

// family makes the family "quote" of m's registry: threshold 1, a minute
// OPEN, at most keys live.
func (m member) family(keys int) *runtime.Family {
	return m.reg.Family(runtime.Config{Name: "quote", FailureThreshold: 1, ResetTimeout: time.Minute},
		runtime.FamilyConfig{Keys: keys})
}

// TestKeyTripReachesPeers: a key breaker tripping in one process opens that
// key in the others, creating it in their family when it is not live
// there, within the family's bound; the other keys stay CLOSED.
func TestKeyTripReachesPeers(t *testing.T) {
	s := startServer(t, "")
	a := attach(t, newClient(t, s), "a", 10*time.Second)
	b := attach(t, newClient(t, s), "b", 10*time.Second)
	fa, fb := a.family(3), b.family(3)
	for _, k := range []string{"k1", "k2", "k3"} { // b at its bound, every key CLOSED
		fb.Breaker(k)
	}
	live := fb.Breaker("k2") // live in b: opened in place

	tripBy(t, fa.Breaker("k2"))
	require.Eventually(t, func() bool { return live.State() == runtime.Open }, within, time.Millisecond)
	assert.Equal(t, "peer a: 403 banned", b.reg.Events(1)[0].Reason)

	tripBy(t, fa.Breaker("600519")) // not live in b: b's family makes it
	require.Eventually(t, func() bool {
		k, ok := fb.Lookup("600519")
		return ok && k.State() == runtime.Open
	}, within, time.Millisecond)
	k, _ := fb.Lookup("600519")
	assert.WithinDuration(t, time.Now().Add(time.Minute), k.Stats().NextProbe, 5*time.Second,
		"the window left of a's trip")
	assert.Equal(t, 3, fb.Len(), "within the bound: the least recently used CLOSED key made room")
	assert.Equal(t, uint64(1), fb.Health().Dropped)
	for _, key := range []string{"k1", "k3"} {
		if k, ok := fb.Lookup(key); ok {
			assert.Equal(t, runtime.Closed, k.State(), "key %s untouched", key)
		}
	}
}

// TestEmptyKeyTripReachesPeers: the key "" (a request without a host,
// an empty tenant), whose breaker is "<family>/", is a key like any
// other: its trip opens it in a peer that has the family.
func TestEmptyKeyTripReachesPeers(t *testing.T) {
	s := startServer(t, "")
	a := attach(t, newClient(t, s), "a", 10*time.Second)
	b := attach(t, newClient(t, s), "b", 10*time.Second)
	fa, fb := a.family(3), b.family(3)
	tripBy(t, fa.Breaker(""))
	require.Eventually(t, func() bool {
		k, ok := fb.Lookup("")
		return ok && k.State() == runtime.Open
	}, within, time.Millisecond)
	assert.NotContains(t, b.log.String(), "ignored a note")
}

// TestKeyNotesUnderMaxOpen: a peer's trips open a family's keys only as
// far as the family's own maxopen allows (SPEC §15): several peers each
// within their cap must not open every key of a process. The notes past
// the cap leave their keys CLOSED, and the log says why.
func TestKeyNotesUnderMaxOpen(t *testing.T) {
	s := startServer(t, "")
	a := attach(t, newClient(t, s), "a", 10*time.Second)
	b := attach(t, newClient(t, s), "b", 10*time.Second)
	fa := a.family(10)
	fb := b.reg.Family(runtime.Config{Name: "quote", FailureThreshold: 1, ResetTimeout: time.Minute},
		runtime.FamilyConfig{Keys: 10, MaxOpen: 20})
	for i := range 10 {
		fb.Breaker(fmt.Sprint("k", i))
	}
	for i := range 4 {
		tripBy(t, fa.Breaker(fmt.Sprint("k", i)))
	}
	require.Eventually(t, func() bool { return fb.Health().KeptShut == 2 }, within, time.Millisecond)
	h := fb.Health()
	assert.Equal(t, 2, h.Open, "20% of 10 keys")
	assert.Equal(t, 10, h.Keys)
	open := 0
	for i := range 10 {
		if k, _ := fb.Lookup(fmt.Sprint("k", i)); k.State() == runtime.Open {
			open++
		}
	}
	assert.Equal(t, 2, open)
	assert.Contains(t, b.reg.Events(1)[0].Reason, "maxopen 20%")

	// A note for a key b does not have makes it there, and opens it only
	// within the cap too.
	tripBy(t, fa.Breaker("new"))
	require.Eventually(t, func() bool { return fb.Health().KeptShut >= 3 }, within, time.Millisecond)
	k, ok := fb.Lookup("new")
	require.True(t, ok)
	assert.Equal(t, runtime.Closed, k.State())
	assert.Equal(t, 2, fb.Health().Open)
}

// TestKeyNotesUnderTheBound: a peer's notes cannot push a family past its
// bound with OPEN keys: once every live key is out of CLOSED and the
// family is full, a note for a new key is logged and ignored; a note for
// a family this process does not have is ignored as ever.
func TestKeyNotesUnderTheBound(t *testing.T) {
	s := startServer(t, "")
	a := attach(t, newClient(t, s), "a", 10*time.Second)
	b := attach(t, newClient(t, s), "b", 10*time.Second)
	fa, fb := a.family(100), b.family(2)
	for i := range 3 {
		tripBy(t, fa.Breaker(fmt.Sprint("k", i)))
	}
	require.Eventually(t, func() bool { return strings.Contains(b.log.String(), "family is full of keys out of CLOSED") },
		within, time.Millisecond)
	assert.Equal(t, 2, fb.Len(), "two OPEN keys, no third")
	for _, k := range fb.Breakers() {
		assert.Equal(t, runtime.Open, k.State(), k.Name())
	}
	assert.Contains(t, b.log.String(), "breaker=quote/k2")

	// A family b does not have: ignored, nothing created.
	c := attach(t, newClient(t, s), "c", 10*time.Second)
	other := c.reg.Family(runtime.Config{Name: "api", FailureThreshold: 1}, runtime.FamilyConfig{})
	tripBy(t, other.Breaker("host1"))
	require.Eventually(t, func() bool { return strings.Contains(b.log.String(), "breaker=api/host1") },
		within, time.Millisecond)
	_, ok := b.reg.Lookup("api/host1")
	assert.False(t, ok)
	assert.Contains(t, b.log.String(), "note names an unknown breaker")
}

// TestLateJoinerOpensAKeyAtItsFirstCall: a process that attaches after a
// key tripped learns of it when the key is first used there: the key's
// new breaker reads its note and starts OPEN for what is left.
func TestLateJoinerOpensAKeyAtItsFirstCall(t *testing.T) {
	s := startServer(t, "")
	a := attach(t, newClient(t, s), "a", 10*time.Second)
	tripBy(t, a.family(10).Breaker("600519"))
	rdb := newClient(t, s)
	require.Eventually(t, func() bool {
		return rdb.Exists(t.Context(), "breakergen:open:quote/600519").Val() == 1
	}, within, time.Millisecond)

	late := attach(t, newClient(t, s), "late", 10*time.Second)
	fam := late.family(10)
	assert.Equal(t, 0, fam.Len(), "no key made before it is used")
	k := fam.Breaker("600519")
	assert.Equal(t, runtime.Open, k.State(), "its first use finds it OPEN")
	assert.Equal(t, "peer a: 403 banned", late.reg.Events(1)[0].Reason)
	assert.Equal(t, runtime.Closed, fam.Breaker("000001").State())
}

// TestGoneKeyNoteMakesNoKey: a trip message for a key that is not live
// here, whose note is gone by the time it is read, makes no key (where a
// family at its bound would drop a live key for it): b's subscription
// stalls while a trips k1, the note goes, and b, checking every message
// (WithFreshFor(0)), reads that it is gone before it makes anything.
func TestGoneKeyNoteMakesNoKey(t *testing.T) {
	s := startServer(t, "")
	p := startProxy(t, s.addr())
	viaProxy := redis.NewClient(&redis.Options{Addr: p.addr()})
	t.Cleanup(func() { _ = viaProxy.Close() })
	a := attach(t, newClient(t, s), "a", 10*time.Second)
	b := attach(t, viaProxy, "b", 10*time.Second, redisstate.WithFreshFor(0), redisstate.WithNoteRead(time.Minute))
	fa, fb := a.family(100), b.family(100)
	after := runtime.Config{Name: "after", FailureThreshold: 1, ResetTimeout: 10 * time.Second}
	a.reg.Breaker(after)
	b.reg.Breaker(after)
	rdb := newClient(t, s)
	require.Eventually(t, func() bool { return p.stallSubscriptions() > 0 }, within, time.Millisecond)

	tripBy(t, fa.Breaker("k1"))
	ctx := context.Background()
	require.Eventually(t, func() bool { return rdb.Exists(ctx, noteKey("quote/k1")).Val() == 1 }, within, time.Millisecond)
	require.NoError(t, rdb.Del(ctx, noteKey("quote/k1")).Err())
	p.heal()

	afterA, _ := a.reg.Lookup("after")
	tripBy(t, afterA) // after k1's on the one connection: b has applied it when it follows this
	afterB, _ := b.reg.Lookup("after")
	require.Eventually(t, func() bool { return afterB.State() == runtime.Open }, within, time.Millisecond)
	assert.Zero(t, fb.Len(), "no key made for a note that is gone")
}

// TestAttachReadsTheNotesOfManyKeys: a process with 10,000 live keys
// attaches while a peer's note of one of them is live. The key is OPEN
// when Attach returns, and Redis is not counted away: the notes and modes
// of every breaker were read in one pipeline of 30,000 commands under one
// timeout, which ran out (at the default 50 ms on a real server), so that
// Attach returned with the key CLOSED and logged Redis away, and each
// heartbeat's resync after that ran out again (at 25,000 keys the fleet
// went away and back every 500 ms). Here each read of the notes costs
// 20 µs a command on top of the server's own time, so that the bound is
// the same under the race detector and without it: 30,000 commands take
// 600 ms more, past the 400 ms timeout; 768 take 15 ms more.
func TestAttachReadsTheNotesOfManyKeys(t *testing.T) {
	const keys = 10000
	s := startServer(t, "")
	rdb := newClient(t, s)
	rdb.AddHook(costPerCommand(20 * time.Microsecond))
	require.NoError(t, rdb.Set(context.Background(), "breakergen:open:quote/5",
		`{"v":1,"origin":"a","reason":"403 banned"}`, time.Minute).Err())

	logs := &syncBuffer{}
	logger := slog.New(slog.NewTextHandler(logs, nil))
	reg := runtime.NewRegistry(runtime.WithoutEnv(), runtime.WithLogger(logger))
	fam := member{reg: reg}.family(keys)
	for i := range keys {
		fam.Breaker(fmt.Sprint(i))
	}
	f, err := redisstate.Attach(reg, rdb, redisstate.WithOrigin("b"), redisstate.WithLogger(logger),
		redisstate.WithTimeout(400*time.Millisecond))
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, f.Close()) })
	k, _ := fam.Lookup("5")
	assert.Equal(t, runtime.Open, k.State(), "the peer's note read at Attach")
	assert.NotContains(t, logs.String(), "Redis is away")
}

// costPerCommand is a hook that makes each round trip reading notes'
// values (readState's) cost d a command more, as a bulk read does on a
// busy server.
type costPerCommand time.Duration

func (h costPerCommand) DialHook(next redis.DialHook) redis.DialHook          { return next }
func (h costPerCommand) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }

func (h costPerCommand) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if len(cmds) > 0 && cmds[0].Name() == "get" {
			pauseFor(time.Duration(h) * time.Duration(len(cmds)))
		}
		return next(ctx, cmds)
	}
}
