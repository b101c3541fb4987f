package redisstate_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/breakergen/breakergen/redisstate"
	"github.com/breakergen/breakergen/runtime"
)

// TestMessageAgesWhileItWaits: a message current when it was delivered
// that then waits for the applier has aged by that wait: here a's
// applier is held (by a hook on the event of tdx's trip) until "short"'s
// note of 1s has run out, and short's message, waiting behind it, opens
// nothing (or for how late it was delivered, within 750 ms of the note);
// "marker"'s, behind it, opens for what is left of its 10s.
func TestMessageAgesWhileItWaits(t *testing.T) {
	s := startServer(t, "")
	short := runtime.Config{Name: "short", FailureThreshold: 1, ResetTimeout: time.Second}
	marker := runtime.Config{Name: "marker", FailureThreshold: 1, ResetTimeout: 10 * time.Second}
	a, b := attachHeld(t, s, newClient(t, s), redisstate.WithFreshFor(time.Hour)) // every message current when delivered
	shortA, markerA := a.reg.Breaker(short), a.reg.Breaker(marker)

	a.hold(t)
	tripBy(t, b.reg.Breaker(short))
	require.Eventually(t, func() bool { return a.fleet.Waiting() == 1 }, within, time.Millisecond, "short's message waits")
	rdb := newClient(t, s)
	require.Eventually(t, func() bool { return rdb.Exists(context.Background(), noteKey("short")).Val() == 0 },
		within, time.Millisecond, "short's note runs out")
	noteGone := time.Now()
	tripBy(t, b.reg.Breaker(marker))
	require.Eventually(t, func() bool { return a.fleet.Waiting() == 2 }, within, time.Millisecond, "marker's message waits")
	a.release()

	require.Eventually(t, func() bool { return markerA.State() == runtime.Open }, within, time.Millisecond)
	// Its overrun is at most how late it was delivered (a loaded machine
	// may not schedule the subscriber at once), within the 750 ms bound;
	// a message that kept its window from when the applier reached it
	// would stay OPEN about a second past the note.
	if shortA.State() == runtime.Open {
		assert.WithinRange(t, shortA.Stats().NextProbe, noteGone.Add(-time.Second), noteGone.Add(750*time.Millisecond),
			"short's message, older than its window, keeps it open past its note")
	}
}

// failLast is a go-redis hook: the first round trip of PTTL commands alone
// is held until release; in a later one of two or more, the last command
// fails, as a Redis Cluster node's part of a pipeline does while the node
// fails over (TRYAGAIN, CLUSTERDOWN), and the others answer.
type failLast struct {
	trips   atomic.Int32
	release chan struct{}
}

func (h *failLast) DialHook(next redis.DialHook) redis.DialHook          { return next }
func (h *failLast) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }

func (h *failLast) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		for _, c := range cmds {
			if c.Name() != "pttl" {
				return next(ctx, cmds)
			}
		}
		if h.trips.Add(1) == 1 {
			<-h.release
			return next(ctx, cmds)
		}
		err := next(ctx, cmds)
		if len(cmds) >= 2 {
			err = errors.New("TRYAGAIN: one node of the pipeline")
			cmds[len(cmds)-1].SetErr(err)
		}
		return err
	}
}

// TestOneFailedReadFailsItsMessageAlone: of the reads of a batch, one
// that fails leaves its own message to open for its window, and the
// others are followed as read: "gone"'s note was deleted while its
// message waited, its read answers that, and it opens nothing, while
// "other"'s read fails and it opens all the same.
func TestOneFailedReadFailsItsMessageAlone(t *testing.T) {
	s := startServer(t, "")
	hook := &failLast{release: make(chan struct{})}
	t.Cleanup(func() {
		select {
		case <-hook.release:
		default:
			close(hook.release)
		}
	})
	a, b := readsEveryNote(t, s, hook)
	var as, bs []*runtime.Breaker
	for _, n := range []string{"first", "gone", "other"} {
		cfg := runtime.Config{Name: n, FailureThreshold: 1, ResetTimeout: 10 * time.Second}
		as = append(as, a.reg.Breaker(cfg))
		bs = append(bs, b.reg.Breaker(cfg))
	}
	direct := newClient(t, s)
	ctx := context.Background()

	tripBy(t, bs[0])
	require.Eventually(t, func() bool { return hook.trips.Load() == 1 }, within, time.Millisecond, "first's read")
	tripBy(t, bs[1])
	require.Eventually(t, func() bool { return direct.Exists(ctx, noteKey("gone")).Val() == 1 }, within, time.Millisecond)
	require.NoError(t, direct.Del(ctx, noteKey("gone")).Err()) // as if it ran out while its message waited
	tripBy(t, bs[2])
	require.Eventually(t, func() bool { return a.fleet.Waiting() == 2 }, within, time.Millisecond)
	close(hook.release)

	require.Eventually(t, func() bool { return as[2].State() == runtime.Open }, within, time.Millisecond,
		"other's read failed: it opens for its message's window")
	assert.EqualValues(t, 2, hook.trips.Load(), "gone's and other's notes read together")
	assert.Equal(t, runtime.Closed, as[1].State(), "gone's read answered that it has no note")
}

// stepReads holds the n-th round trip of PTTL commands alone until
// gates[n] is closed.
type stepReads struct {
	n     atomic.Int32
	gates []chan struct{}
}

func (h *stepReads) DialHook(next redis.DialHook) redis.DialHook          { return next }
func (h *stepReads) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }

func (h *stepReads) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		for _, c := range cmds {
			if c.Name() != "pttl" {
				return next(ctx, cmds)
			}
		}
		if i := int(h.n.Add(1)) - 1; i < len(h.gates) {
			<-h.gates[i]
		}
		return next(ctx, cmds)
	}
}

// TestMessageAheadOfAReadWaitsForNone: a message that needs no read is
// applied as soon as the applier reaches it, whatever the reads of the
// messages behind it cost: b's Isolate of tdx, queued ahead of t1's trip,
// reaches a while t1's note is still being read.
func TestMessageAheadOfAReadWaitsForNone(t *testing.T) {
	s := startServer(t, "")
	hook := &stepReads{gates: []chan struct{}{make(chan struct{}), make(chan struct{})}}
	t.Cleanup(func() { close(hook.gates[1]) })
	a, b := readsEveryNote(t, s, hook)
	var bs []*runtime.Breaker
	for _, n := range []string{"t0", "t1"} {
		cfg := runtime.Config{Name: n, FailureThreshold: 1, ResetTimeout: 10 * time.Second}
		a.reg.Breaker(cfg)
		bs = append(bs, b.reg.Breaker(cfg))
	}

	tripBy(t, bs[0])
	require.Eventually(t, func() bool { return hook.n.Load() == 1 }, within, time.Millisecond, "t0's read")
	b.tdx().Isolate("maintenance")
	tripBy(t, bs[1])
	require.Eventually(t, func() bool { return a.fleet.Waiting() == 2 }, within, time.Millisecond)
	close(hook.gates[0])
	require.Eventually(t, func() bool { return hook.n.Load() == 2 }, within, time.Millisecond, "t1's read, held")
	require.Eventually(t, func() bool { return a.tdx().Mode() == runtime.Isolated }, within, time.Millisecond,
		"the Isolate, ahead of t1, waits for no read")
}

// slowNoteGets holds, once armed, every round trip that reads notes'
// values (readState: a resync, or a new breaker's first read) for delay.
type slowNoteGets struct {
	armed atomic.Bool
	delay time.Duration
}

func (h *slowNoteGets) DialHook(next redis.DialHook) redis.DialHook          { return next }
func (h *slowNoteGets) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }

func (h *slowNoteGets) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if h.armed.Load() && len(cmds) > 0 && cmds[0].Name() == "get" {
			pauseFor(h.delay) // a slow Redis
		}
		return next(ctx, cmds)
	}
}

// TestKeyTripCountsTheKeysFirstRead: a peer's trip for a family's key
// that is not live here makes the key, whose first read of its note and
// mode is a round trip (here 1.5s); the message's window counts it, so
// the key is not held open past its note for that long.
func TestKeyTripCountsTheKeysFirstRead(t *testing.T) {
	s := startServer(t, "")
	slow := &slowNoteGets{delay: 1500 * time.Millisecond}
	rdb := newClient(t, s)
	rdb.AddHook(slow)
	a := attach(t, rdb, "a", 10*time.Second, redisstate.WithTimeout(3*time.Second))
	b := attach(t, newClient(t, s), "b", 10*time.Second)
	fa, fb := a.family(100), b.family(100)
	direct := newClient(t, s)
	ctx := context.Background()
	slow.armed.Store(true)

	tripBy(t, fb.Breaker("k1"))
	var noteEnds time.Time
	require.Eventually(t, func() bool {
		d, err := direct.PTTL(ctx, noteKey("quote/k1")).Result()
		noteEnds = time.Now().Add(d)
		return err == nil && d > 0
	}, within, time.Millisecond)
	tripBy(t, b.tdx()) // after k1's message: a has applied that once it follows this
	require.Eventually(t, func() bool { return a.tdx().State() == runtime.Open }, 2*within, time.Millisecond)
	k, ok := fa.Lookup("k1")
	require.True(t, ok, "a made the key")
	require.Equal(t, runtime.Open, k.State())
	over := k.Stats().NextProbe.Sub(noteEnds)
	assert.LessOrEqual(t, over, 750*time.Millisecond, "the key stays OPEN %s past its note", over)
}

// readsEveryNote attaches a, whose client has hook and which reads the
// note of every trip message (WithFreshFor(0), as on a Redis Cluster),
// each read waited for up to a minute, and b, on s.
func readsEveryNote(t *testing.T, s *server, hook redis.Hook) (a, b member) {
	t.Helper()
	rdb := newClient(t, s)
	rdb.AddHook(hook)
	a = attach(t, rdb, "a", 10*time.Second, redisstate.WithTimeout(time.Minute),
		redisstate.WithNoteRead(time.Minute), redisstate.WithFreshFor(0))
	return a, attach(t, newClient(t, s), "b", 10*time.Second)
}

// heldMember is a member whose applier can be held: from the event of its
// breaker tdx's trip until release (at the latest when the test ends,
// before its Close, which waits for the applier).
type heldMember struct {
	member
	b       member // the peer that trips tdx
	entered chan struct{}
	release func()
}

// attachHeld attaches a, through rdb with opts (origin "a", a timeout of
// a second), whose applier hold holds, and b, on s.
func attachHeld(t *testing.T, s *server, rdb *redis.Client, opts ...redisstate.Option) (a heldMember, b member) {
	t.Helper()
	entered, release := make(chan struct{}), make(chan struct{})
	var once, released sync.Once
	hook := func(ev runtime.Event) {
		if ev.Source == "tdx" && ev.To == runtime.Open {
			once.Do(func() {
				close(entered)
				<-release
			})
		}
	}
	reg := runtime.NewRegistry(runtime.WithoutEnv(), runtime.OnStateChange(hook))
	reg.Breaker(runtime.Config{Name: "tdx", FailureThreshold: 1, ResetTimeout: 10 * time.Second})
	f, err := redisstate.Attach(reg, rdb, append([]redisstate.Option{redisstate.WithOrigin("a"),
		redisstate.WithTimeout(time.Second)}, opts...)...)
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, f.Close()) })
	a = heldMember{member: member{reg: reg, fleet: f}, entered: entered,
		release: func() { released.Do(func() { close(release) }) }}
	t.Cleanup(a.release) // runs before Close (cleanups run last first)
	a.b = attach(t, newClient(t, s), "b", 10*time.Second)
	return a, a.b
}

// hold holds a's applier: b trips tdx, and a's applier, following it,
// holds until release.
func (a heldMember) hold(t *testing.T) {
	t.Helper()
	tripBy(t, a.b.tdx())
	select {
	case <-a.entered:
	case <-time.After(within):
		t.Fatal("a did not follow tdx's trip")
	}
}
