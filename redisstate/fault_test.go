package redisstate_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/breakergen/breakergen/redisstate"
	"github.com/breakergen/breakergen/runtime"
)

// timeout is the fleet's Redis timeout in the fault tests. The contract
// is a bound, so the tests assert bounds, never an exact duration: the
// slowest call stays under timeout+margin, far below the 3s of go-redis's
// own ReadTimeout that an unbounded wait would take (margin is generous:
// a two-core machine shared with other builds stalls goroutines for
// hundreds of milliseconds), and under 1% of the calls take more than
// timeout+small.
const (
	timeout = 50 * time.Millisecond
	margin  = 600 * time.Millisecond
	small   = 50 * time.Millisecond
)

// load makes calls through a shared limiter and a breaker on workers
// goroutines until stop, recording the slowest call and the failures.
type load struct {
	calls, failed atomic.Int64
	late          atomic.Int64 // calls slower than timeout+small
	slowest       atomic.Int64 // nanoseconds
	stop          chan struct{}
	wg            sync.WaitGroup
}

func startLoad(m member, workers int) *load {
	l := &load{stop: make(chan struct{})}
	pace := time.NewTicker(200 * time.Microsecond) // a busy service, not a busy loop
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		<-l.stop
		pace.Stop()
	}()
	lim := m.reg.Limiter("tdx", 1e6, 1000) // generous: a wait is never the limit's
	b := m.tdx()
	for range workers {
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			for {
				select {
				case <-l.stop:
					return
				case <-pace.C:
				}
				start := time.Now()
				err := lim.Wait(context.Background(), 0)
				if err == nil {
					err = b.Do(context.Background(), func(context.Context) error { return nil })
				}
				d := time.Since(start)
				l.calls.Add(1)
				if d > timeout+small {
					l.late.Add(1)
				}
				if err != nil {
					l.failed.Add(1)
				}
				for {
					s := l.slowest.Load()
					if int64(d) <= s || l.slowest.CompareAndSwap(s, int64(d)) {
						break
					}
				}
			}
		}()
	}
	return l
}

// end stops the load and checks the bounds.
func (l *load) end(t *testing.T, fault string) (calls int64) {
	close(l.stop)
	l.wg.Wait()
	calls, failed, late, slowest := l.calls.Load(), l.failed.Load(), l.late.Load(), time.Duration(l.slowest.Load())
	t.Logf("%s: %d calls, %d failed, %d over %s, slowest %s", fault, calls, failed, late, timeout+small, slowest)
	assert.Zero(t, failed, "no call fails because Redis is away")
	assert.Less(t, slowest, timeout+margin)
	assert.Less(t, late*100, calls, "under 1%% of the calls over %s", timeout+small)
	return calls
}

// pauseFor lets the load run for d (the length of a fault, not a wait
// for anything to happen).
func pauseFor(d time.Duration) { <-time.After(d) }

func faultMember(t *testing.T, s *server, origin string) member {
	return attach(t, newClient(t, s), origin, 10*time.Second,
		redisstate.WithTimeout(timeout), redisstate.WithSharedLimits("tdx"))
}

func TestKillUnderLoad(t *testing.T) {
	s := startServer(t, "")
	m := faultMember(t, s, "a")
	l := startLoad(m, 4)
	pauseFor(200 * time.Millisecond)
	before := l.calls.Load()
	s.kill()
	pauseFor(time.Second)
	calls := l.end(t, "kill -9 under load")
	assert.Greater(t, calls-before, int64(100), "calls go on")
	assert.Equal(t, "down", m.reg.Health().Fleet.Redis)
}

func TestStoppedServer(t *testing.T) {
	s := startServer(t, "")
	m := faultMember(t, s, "a")
	peer := faultMember(t, s, "b")
	l := startLoad(m, 4)
	pauseFor(200 * time.Millisecond)
	s.signal(syscall.SIGSTOP)
	pauseFor(2 * time.Second)
	h := m.reg.Health().Fleet.Redis
	s.signal(syscall.SIGCONT)
	l.end(t, "SIGSTOP 2s under load")
	assert.Equal(t, "down", h, "during the stop")

	require.Eventually(t, func() bool { return m.reg.Health().Fleet.Redis == "ok" }, within, time.Millisecond)
	require.Eventually(t, func() bool { return peer.reg.Health().Fleet.Redis == "ok" }, within, time.Millisecond)
	tripBy(t, peer.tdx())
	require.Eventually(t, func() bool { return m.tdx().State() == runtime.Open }, within, time.Millisecond,
		"trips flow after the stop")
}

func TestRestartedServer(t *testing.T) {
	s := startServer(t, "")
	a := faultMember(t, s, "a")
	b := faultMember(t, s, "b")
	s.kill()
	require.Eventually(t, func() bool { return a.reg.Health().Fleet.Redis == "down" }, within, time.Millisecond)

	tripBy(t, a.tdx()) // while Redis is away: local only
	assert.Equal(t, runtime.Closed, b.tdx().State())
	a.tdx().Reset()

	s.start()
	for _, m := range []member{a, b} {
		require.Eventually(t, func() bool { return m.reg.Health().Fleet.Redis == "ok" }, within, time.Millisecond)
	}
	lim := a.reg.Limiter("tdx", 1e6, 1000)
	require.NoError(t, lim.Wait(context.Background(), 0), "the GCRA script is loaded again")
	tripBy(t, a.tdx())
	require.Eventually(t, func() bool { return b.tdx().State() == runtime.Open }, within, time.Millisecond,
		"trips flow again after the restart")

	// A process that came back reads the notes written while it was away.
	c := newClient(t, s)
	late := attach(t, c, "c", 10*time.Second)
	assert.Equal(t, runtime.Open, late.tdx().State())
}

func TestTripsMadeWhileAwayGoOutOnReturn(t *testing.T) {
	s := startServer(t, "")
	a := faultMember(t, s, "a")
	b := faultMember(t, s, "b")
	s.kill()
	require.Eventually(t, func() bool { return a.reg.Health().Fleet.Redis == "down" }, within, time.Millisecond)
	tripBy(t, a.tdx()) // a 10s window, local while Redis is away

	s.start() // empty: a restarted Redis has no notes
	require.Eventually(t, func() bool { return b.tdx().State() == runtime.Open }, within, time.Millisecond,
		"a publishes its trip again when Redis is back")
	assert.Equal(t, "peer a: 403 banned", b.reg.Events(1)[0].Reason)
	assert.WithinDuration(t, a.tdx().Stats().NextProbe, b.tdx().Stats().NextProbe, time.Second, "what is left of it")
}

// TestDeafSubscriptionIsMadeAnew: a's subscription stops delivering
// without its connection failing (a hung master, or a Sentinel failover,
// which moves the commands and not the subscription), while its commands
// go on. It subscribes again within deafAfter (1.5 s), reads the note of
// b's trip made meanwhile, and hears b's later news; Health does not say
// "ok" while it is deaf past the bound.
func TestDeafSubscriptionIsMadeAnew(t *testing.T) {
	s := startServer(t, "")
	p := startProxy(t, s.addr())
	viaProxy := redis.NewClient(&redis.Options{Addr: p.addr()})
	t.Cleanup(func() { _ = viaProxy.Close() })
	a := attach(t, viaProxy, "a", 10*time.Second)
	b := attach(t, newClient(t, s), "b", 10*time.Second)
	require.Eventually(t, func() bool { return p.stallSubscriptions() > 0 }, within, time.Millisecond)
	stalled := time.Now()

	tripBy(t, b.tdx())
	require.Eventually(t, func() bool { return a.tdx().State() == runtime.Open }, 2*time.Second+within, time.Millisecond,
		"a subscribes again and reads b's note")
	t.Logf("a followed b's trip %s after its subscription stalled", time.Since(stalled).Round(time.Millisecond))
	assert.Contains(t, a.log.String(), "the subscription delivers nothing")
	require.Eventually(t, func() bool { return a.reg.Health().Fleet.Redis == "ok" }, within, time.Millisecond)

	// The new subscription carries messages: b's operator isolates.
	b.tdx().Isolate("maintenance")
	require.Eventually(t, func() bool { return a.tdx().State() == runtime.Isolated }, within, time.Millisecond,
		"b's news reaches a on its new subscription")
}

// TestLateTripMessageOpensForTheNoteLeft: a's subscription stalls while
// b trips for 10 s; the note's expiry is cut to 1 s (as if the message
// had been held most of its window) before the stall heals and a gets the
// message, which asks for the whole 10 s. a opens only for what is left
// of the note; a message whose note is gone opens nothing. The stall is
// short, so a is told to take no message at its word (WithFreshFor(0)):
// one delivered long after a's last heartbeat is read the same way
// (TestHeldTripMessageIsChecked). Its reads go through the proxy, which
// a loaded machine may hold longer than noteRead.
func TestLateTripMessageOpensForTheNoteLeft(t *testing.T) {
	s := startServer(t, "")
	p := startProxy(t, s.addr())
	viaProxy := redis.NewClient(&redis.Options{Addr: p.addr()})
	t.Cleanup(func() { _ = viaProxy.Close() })
	a := attach(t, viaProxy, "a", 10*time.Second, redisstate.WithFreshFor(0), redisstate.WithNoteRead(time.Minute))
	b := attach(t, newClient(t, s), "b", 10*time.Second)
	gone := runtime.Config{Name: "gone", FailureThreshold: 1, ResetTimeout: 10 * time.Second}
	after := runtime.Config{Name: "after", FailureThreshold: 1, ResetTimeout: 10 * time.Second}
	for _, m := range []member{a, b} {
		m.reg.Breaker(gone)
		m.reg.Breaker(after)
	}
	rdb := newClient(t, s)
	require.Eventually(t, func() bool { return p.stallSubscriptions() > 0 }, within, time.Millisecond)

	tripBy(t, b.tdx())
	goneB, _ := b.reg.Lookup("gone")
	tripBy(t, goneB)
	ctx := context.Background()
	require.Eventually(t, func() bool { return rdb.Exists(ctx, noteKey("tdx"), noteKey("gone")).Val() == 2 },
		within, time.Millisecond)
	require.NoError(t, rdb.PExpire(ctx, noteKey("tdx"), time.Second).Err())
	require.NoError(t, rdb.Del(ctx, noteKey("gone")).Err())
	p.heal()

	afterB, _ := b.reg.Lookup("after")
	tripBy(t, afterB) // after the others on the one connection: a has applied them when it follows this
	afterA, _ := a.reg.Lookup("after")
	require.Eventually(t, func() bool { return afterA.State() == runtime.Open }, within, time.Millisecond)
	require.Equal(t, runtime.Open, a.tdx().State())
	assert.WithinDuration(t, time.Now().Add(time.Second), a.tdx().Stats().NextProbe, time.Second,
		"opened for what is left of the note, not the message's 10s")
	goneA, _ := a.reg.Lookup("gone")
	assert.Equal(t, runtime.Closed, goneA.State(), "the note is gone")
}

// TestHeldTripMessageIsChecked: with the default settings, a message
// the subscription held for a second (past freshFor, 750ms) is checked
// against its note: a opens for what is left of the note (3s), not the
// message's 10s. (Should the stall outlast deafAfter, a subscribes anew
// and reads the note: the same window.)
func TestHeldTripMessageIsChecked(t *testing.T) {
	s := startServer(t, "")
	p := startProxy(t, s.addr())
	viaProxy := redis.NewClient(&redis.Options{Addr: p.addr()})
	t.Cleanup(func() { _ = viaProxy.Close() })
	a := attach(t, viaProxy, "a", 10*time.Second, redisstate.WithNoteRead(time.Minute))
	b := attach(t, newClient(t, s), "b", 10*time.Second)
	after := runtime.Config{Name: "after", FailureThreshold: 1, ResetTimeout: 10 * time.Second}
	a.reg.Breaker(after)
	b.reg.Breaker(after)
	rdb := newClient(t, s)
	require.Eventually(t, func() bool { return p.stallSubscriptions() > 0 }, within, time.Millisecond)

	tripBy(t, b.tdx())
	ctx := context.Background()
	require.Eventually(t, func() bool { return rdb.Exists(ctx, noteKey("tdx")).Val() == 1 }, within, time.Millisecond)
	require.NoError(t, rdb.PExpire(ctx, noteKey("tdx"), 3*time.Second).Err())
	pauseFor(time.Second) // the outage: a's subscription hears nothing
	p.heal()
	healed := time.Now()

	afterB, _ := b.reg.Lookup("after")
	tripBy(t, afterB)
	afterA, _ := a.reg.Lookup("after")
	require.Eventually(t, func() bool { return afterA.State() == runtime.Open }, within, time.Millisecond)
	require.Equal(t, runtime.Open, a.tdx().State())
	assert.True(t, a.tdx().Stats().NextProbe.Before(healed.Add(3*time.Second)),
		"opened for what is left of the note (at most 3s), not the message's 10s: next probe %s after the heal",
		a.tdx().Stats().NextProbe.Sub(healed))
}

// holdReads is a go-redis hook that holds every round trip of PTTL
// commands alone (a fleet's reads of notes' time left) until release is
// closed, counting the round trips and the commands.
type holdReads struct {
	held    atomic.Int32 // round trips
	reads   atomic.Int32 // PTTL commands in them
	release chan struct{}
}

func (h *holdReads) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *holdReads) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if err := h.hold(ctx, cmds...); err != nil {
			return err
		}
		return next(ctx, cmds)
	}
}

func (h *holdReads) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if err := h.hold(ctx, cmd); err != nil {
			return err
		}
		return next(ctx, cmd)
	}
}

// hold holds cmds when they are all PTTL commands.
func (h *holdReads) hold(ctx context.Context, cmds ...redis.Cmder) error {
	for _, c := range cmds {
		if c.Name() != "pttl" {
			return nil
		}
	}
	h.held.Add(1)
	h.reads.Add(int32(len(cmds)))
	select {
	case <-h.release:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// heldReads attaches a, whose reads of notes hold until the test ends
// (within a timeout of a minute) and which takes a message at its word
// within freshFor, and b, on one server.
func heldReads(t *testing.T, freshFor time.Duration) (a, b member, hold *holdReads) {
	t.Helper()
	s := startServer(t, "")
	hold = &holdReads{release: make(chan struct{})}
	t.Cleanup(func() { close(hold.release) })
	rdb := newClient(t, s)
	rdb.AddHook(hold)
	a = attach(t, rdb, "a", 10*time.Second, redisstate.WithTimeout(time.Minute), redisstate.WithFreshFor(freshFor))
	b = attach(t, newClient(t, s), "b", 10*time.Second)
	return a, b, hold
}

// TestCurrentTripMessageNeedsNoRead: a trip message delivered while the
// subscription is current opens the peer at once, whatever a read of
// its note would cost: here a's reads never answer (within a timeout of
// a minute), and a follows b's trip all the same, having read nothing.
// WithFreshFor(time.Hour) keeps a current under any load; that a
// heartbeat keeps it current is TestHeartbeatKeepsTheSubscriptionCurrent.
func TestCurrentTripMessageNeedsNoRead(t *testing.T) {
	a, b, hold := heldReads(t, time.Hour)

	tripBy(t, b.tdx())
	require.Eventually(t, func() bool { return a.tdx().State() == runtime.Open }, within, time.Millisecond)
	assert.Zero(t, hold.held.Load(), "no read of the note")
	assert.WithinDuration(t, time.Now().Add(10*time.Second), a.tdx().Stats().NextProbe, time.Second,
		"the message's window")
}

// TestSlowNoteReadHoldsNoTrip: a message that is not known to be current
// waits for its note's time left at most noteRead (100ms), whatever the
// fleet's timeout, then opens for its own window: a's reads never answer
// within its timeout of a minute, and a follows b's trip all the same.
func TestSlowNoteReadHoldsNoTrip(t *testing.T) {
	a, b, hold := heldReads(t, 0)

	tripBy(t, b.tdx())
	require.Eventually(t, func() bool { return a.tdx().State() == runtime.Open }, within, time.Millisecond)
	assert.GreaterOrEqual(t, hold.held.Load(), int32(1), "a read the note, and gave up on it")
	assert.WithinDuration(t, time.Now().Add(10*time.Second), a.tdx().Stats().NextProbe, time.Second,
		"the message's window")
}

// TestTripMessagesAreReadTogether: the trip messages that wait while a
// note is read are read together, in one round trip, and none of them
// waits for a read of its own: here a reads every message's note
// (WithFreshFor(0), as on a Redis Cluster), the read of the first trip's
// is held until 49 more trips wait, and a follows all 50 in two round
// trips.
func TestTripMessagesAreReadTogether(t *testing.T) {
	s := startServer(t, "")
	hold := &holdReads{release: make(chan struct{})}
	a, b := readsEveryNote(t, s, hold)
	var as, bs []*runtime.Breaker
	for i := range 50 {
		cfg := runtime.Config{Name: fmt.Sprintf("t%d", i), FailureThreshold: 1, ResetTimeout: 10 * time.Second}
		as = append(as, a.reg.Breaker(cfg))
		bs = append(bs, b.reg.Breaker(cfg))
	}

	tripBy(t, bs[0])
	require.Eventually(t, func() bool { return hold.held.Load() == 1 }, within, time.Millisecond, "a reads t0's note")
	for _, br := range bs[1:] {
		tripBy(t, br)
	}
	require.Eventually(t, func() bool { return a.fleet.Waiting() == 49 }, within, time.Millisecond,
		"the other trips wait while t0's note is read")
	close(hold.release)
	for _, br := range as {
		require.Eventually(t, func() bool { return br.State() == runtime.Open }, within, time.Millisecond, br.Name())
	}
	assert.EqualValues(t, 2, hold.held.Load(), "round trips")
	assert.EqualValues(t, 50, hold.reads.Load(), "notes read")
	assert.WithinDuration(t, time.Now().Add(10*time.Second), as[49].Stats().NextProbe, time.Second,
		"the note's window")
}

// TestHeartbeatKeepsTheSubscriptionCurrent: each heartbeat says when it
// was sent, and the subscription that delivers it records so.
func TestHeartbeatKeepsTheSubscriptionCurrent(t *testing.T) {
	s := startServer(t, "")
	a := attach(t, newClient(t, s), "a", 10*time.Second)
	attached := time.Now()
	require.Eventually(t, func() bool { return a.fleet.HeardBeatSince(attached) }, within, time.Millisecond,
		"a heartbeat sent after Attach returned, delivered")
}

// TestMembersWhileRedisIsAway: members counts the processes that sent a
// heartbeat in the last two seconds; with Redis away for longer, a
// process knows of none and says 0, not the last count.
func TestMembersWhileRedisIsAway(t *testing.T) {
	s := startServer(t, "")
	a := faultMember(t, s, "a")
	faultMember(t, s, "b")
	require.Eventually(t, func() bool { return a.reg.Health().Fleet.Members == 2 }, within, time.Millisecond)
	s.kill()
	require.Eventually(t, func() bool { return a.reg.Health().Fleet.Members == 0 }, 2*time.Second+within, time.Millisecond,
		"the last count expires with the heartbeat it came from")
	assert.Equal(t, "down", a.reg.Health().Fleet.Redis)
}
