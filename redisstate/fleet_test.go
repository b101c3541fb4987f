package redisstate_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/breakergen/breakergen/redisstate"
	"github.com/breakergen/breakergen/runtime"
	"github.com/breakergen/breakergen/runtime/httphealth"
)

// member is one registry attached to the fleet, as one process would be.
type member struct {
	reg   *runtime.Registry
	fleet *redisstate.Fleet
	log   *syncBuffer
}

// syncBuffer is a log sink safe for the fleet's goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// attach makes a registry with breaker "tdx" (threshold 1, reset given)
// and attaches it as origin; both end with the test. Its Redis timeout is
// a second unless opts say otherwise: a two-core machine shared with other
// builds stalls for more than the default 50 ms, and the process would go
// local, which only the fault tests (with their own timeout) are about.
func attach(t *testing.T, rdb redis.UniversalClient, origin string, reset time.Duration, opts ...redisstate.Option) member {
	t.Helper()
	logs := &syncBuffer{}
	logger := slog.New(slog.NewTextHandler(logs, nil))
	reg := runtime.NewRegistry(runtime.WithoutEnv(), runtime.WithLogger(logger))
	reg.Breaker(runtime.Config{Name: "tdx", FailureThreshold: 1, ResetTimeout: reset})
	f, err := redisstate.Attach(reg, rdb, append([]redisstate.Option{redisstate.WithTimeout(time.Second),
		redisstate.WithOrigin(origin), redisstate.WithLogger(logger)}, opts...)...)
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, f.Close()) })
	return member{reg: reg, fleet: f, log: logs}
}

func (m member) tdx() *runtime.Breaker {
	b, _ := m.reg.Lookup("tdx")
	return b
}

var errBanned = errors.New("403 banned")

// tripBy fails one call through b (threshold 1).
func tripBy(t *testing.T, b *runtime.Breaker) {
	t.Helper()
	_ = b.Do(context.Background(), func(context.Context) error { return errBanned })
	require.Equal(t, runtime.Open, b.State())
}

func newClient(t *testing.T, s *server) *redis.Client {
	c := s.client()
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// within is how long the tests wait for news to cross Redis: generous,
// for a loaded two-core machine (BenchmarkTripReachesPeer measures how
// long it takes).
const within = 3 * time.Second

func TestAttachRefusesBadInput(t *testing.T) {
	reg := runtime.NewRegistry(runtime.WithoutEnv())
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	defer rdb.Close()
	for name, args := range map[string]struct {
		reg  *runtime.Registry
		rdb  redis.UniversalClient
		opts []redisstate.Option
	}{
		"nil registry": {nil, rdb, nil},
		"nil client":   {reg, nil, nil},
		"zero timeout": {reg, rdb, []redisstate.Option{redisstate.WithTimeout(0)}},
		"share 0":      {reg, rdb, []redisstate.Option{redisstate.WithLocalShare(0)}},
		"share 1.5":    {reg, rdb, []redisstate.Option{redisstate.WithLocalShare(1.5)}},
	} {
		_, err := redisstate.Attach(args.reg, args.rdb, args.opts...)
		assert.Error(t, err, name)
	}
}

// TestAttachRefusesATypedNilClient: a nil *redis.Client (a client never
// made, say) is not a nil interface. Attach refuses it with an error,
// starting nothing: the fleet's first heartbeat would dereference it on a
// goroutine of its own, where no recover of the caller's can stop the
// panic ending the process. The bubble checks that no goroutine is left,
// and the registry is still free to attach.
func TestAttachRefusesATypedNilClient(t *testing.T) {
	reg := runtime.NewRegistry(runtime.WithoutEnv())
	for _, rdb := range []redis.UniversalClient{(*redis.Client)(nil), (*redis.ClusterClient)(nil), (*redis.Ring)(nil)} {
		synctest.Test(t, func(t *testing.T) {
			f, err := redisstate.Attach(reg, rdb)
			require.ErrorContains(t, err, fmt.Sprintf("Attach needs a client, got a nil %T", rdb))
			assert.Nil(t, f)
		})
	}
	assert.Nil(t, reg.Health().Fleet, "not attached")
	s := startServer(t, "")
	f, err := redisstate.Attach(reg, newClient(t, s), redisstate.WithTimeout(time.Second),
		redisstate.WithLogger(slog.New(slog.DiscardHandler)))
	require.NoError(t, err, "the registry is still free")
	assert.NoError(t, f.Close())
}

func TestAttachWithRedisAwayWorksLocally(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"}) // nothing listens there
	defer rdb.Close()
	m := attach(t, rdb, "a", time.Minute, redisstate.WithTimeout(redisstate.DefaultTimeout)) // nothing to wait for
	_, err := redisstate.Attach(m.reg, rdb)
	require.Error(t, err, "one fleet per registry")
	assert.Equal(t, runtime.FleetHealth{Redis: "down"}, *m.reg.Health().Fleet)
	require.NoError(t, m.tdx().Do(context.Background(), func(context.Context) error { return nil }))
	tripBy(t, m.tdx())
}

func TestTripReachesPeers(t *testing.T) {
	s := startServer(t, "")
	a := attach(t, newClient(t, s), "a", 10*time.Second)
	b := attach(t, newClient(t, s), "b", 10*time.Second)
	tripBy(t, a.tdx())
	require.Eventually(t, func() bool { return b.tdx().State() == runtime.Open }, within, time.Millisecond)
	ev := b.reg.Events(1)[0]
	assert.Equal(t, "peer a: 403 banned", ev.Reason)
	next := b.tdx().Stats().NextProbe
	assert.WithinDuration(t, a.tdx().Stats().NextProbe, next, time.Second, "the window left, not a new one")
	assert.Len(t, a.reg.Events(10), 1, "a peer's trip is not sent back")
	require.NotNil(t, a.reg.Health().Fleet)
	assert.Equal(t, "ok", a.reg.Health().Fleet.Redis)
	require.Eventually(t, func() bool { return a.reg.Health().Fleet.Members == 2 }, within, time.Millisecond,
		"members, as of a's next heartbeat")
}

// TestRehearsalStaysLocal: a breaker that injects faults (a rehearsal in
// one process, SPEC §13) trips there alone: its peers inject nothing and
// would refuse a healthy upstream for a window. It used to publish its
// trip like any, and every process opened. Its peers' trips still reach
// it, and its own real trip too stays its own.
func TestRehearsalStaysLocal(t *testing.T) {
	s := startServer(t, "")
	a := attach(t, newClient(t, s), "a", 10*time.Second)
	b := attach(t, newClient(t, s), "b", 10*time.Second)
	cfg := runtime.Config{Name: "em", FailureThreshold: 1, ResetTimeout: 10 * time.Second}
	peer := b.reg.Breaker(cfg)
	cfg.Fault = 1
	rehearsing := a.reg.Breaker(cfg)
	err := rehearsing.Do(context.Background(), func(context.Context) error { return nil })
	require.ErrorIs(t, err, runtime.ErrInjected)
	require.Equal(t, runtime.Open, rehearsing.State())
	// A trip of a's that is shared, after it: once b has it, b has heard
	// everything a published before it.
	tripBy(t, a.tdx())
	require.Eventually(t, func() bool { return b.tdx().State() == runtime.Open }, within, time.Millisecond)
	assert.Equal(t, runtime.Closed, peer.State(), "the rehearsal's trip reached the peer")
	n, err := newClient(t, s).Exists(context.Background(), "breakergen:open:em").Result()
	require.NoError(t, err)
	assert.Zero(t, n, "a note for the rehearsal's trip")

	// The other way: b's trip of em reaches the rehearsing breaker.
	rehearsing.Reset()
	tripBy(t, peer)
	require.Eventually(t, func() bool { return rehearsing.State() == runtime.Open }, within, time.Millisecond)
}

func TestLateJoinersReadOpenNotes(t *testing.T) {
	s := startServer(t, "")
	a := attach(t, newClient(t, s), "a", 10*time.Second)
	tripBy(t, a.tdx())
	rdb := newClient(t, s)
	require.Eventually(t, func() bool { return rdb.Exists(context.Background(), "breakergen:open:tdx").Val() == 1 },
		within, time.Millisecond)

	late := attach(t, newClient(t, s), "late", 10*time.Second)
	require.Equal(t, runtime.Open, late.tdx().State(), "open when Attach returns")
	assert.Equal(t, "peer a: 403 banned", late.reg.Events(1)[0].Reason)

	other := late.reg.Breaker(runtime.Config{Name: "em"})
	assert.Equal(t, runtime.Closed, other.State(), "no note for em")
	rdb.Set(context.Background(), "breakergen:open:kline", `{"v":1,"origin":"a","reason":"banned"}`, 5*time.Second)
	kline := late.reg.Breaker(runtime.Config{Name: "kline"})
	assert.Equal(t, runtime.Open, kline.State(), "created later: opens for what is left")
	assert.WithinDuration(t, time.Now().Add(5*time.Second), kline.Stats().NextProbe, time.Second)
}

// roundTrips is a go-redis hook that records the round trips to Redis
// (a command, or a pipeline) as they start, each as its commands.
type roundTrips struct {
	mu    sync.Mutex // guards trips
	trips [][]string
}

func (h *roundTrips) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *roundTrips) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		h.add(cmd)
		return next(ctx, cmd)
	}
}

func (h *roundTrips) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		h.add(cmds...)
		return next(ctx, cmds)
	}
}

func (h *roundTrips) add(cmds ...redis.Cmder) {
	trip := make([]string, len(cmds))
	for i, c := range cmds {
		trip[i] = strings.TrimSpace(fmt.Sprintln(c.Args()...))
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.trips = append(h.trips, trip)
}

// of returns the round trips that read the note or the mode of breaker
// name and of no other: those of its creation, not a resync's, which
// reads every breaker's (tdx's too).
func (h *roundTrips) of(name string) [][]string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out [][]string
	for _, trip := range h.trips {
		mine, others := false, false
		for _, cmd := range trip {
			switch {
			case strings.HasSuffix(cmd, " breakergen:open:"+name), strings.HasSuffix(cmd, " breakergen:mode:{"+name+"}"):
				mine = true
			case strings.Contains(cmd, " breakergen:open:"), strings.Contains(cmd, " breakergen:mode:"):
				others = true
			}
		}
		if mine && !others {
			out = append(out, trip)
		}
	}
	return out
}

// TestCreatedReadsInOneRoundTrip: a breaker created after Attach reads its
// note and its mode, on its first call, in one round trip to Redis, so
// that with Redis stalled that call waits the timeout once, not once per
// read (SPEC §11: a call waits on Redis at most the timeout).
func TestCreatedReadsInOneRoundTrip(t *testing.T) {
	s := startServer(t, "")
	rdb := newClient(t, s)
	trips := &roundTrips{}
	rdb.AddHook(trips)
	m := attach(t, rdb, "a", time.Minute)
	peer := newClient(t, s)
	ctx := context.Background()
	require.NoError(t, peer.Set(ctx, "breakergen:open:kline", `{"v":1,"origin":"b","reason":"banned"}`, time.Minute).Err())
	require.NoError(t, peer.Set(ctx, "breakergen:mode:{quote}",
		`{"v":1,"mode":"isolated","origin":"b","reason":"isolated by operator: ban","seq":1}`, 0).Err())

	assert.Equal(t, runtime.Open, m.reg.Breaker(runtime.Config{Name: "kline"}).State(), "the note is read")
	assert.Equal(t, runtime.Isolated, m.reg.Breaker(runtime.Config{Name: "quote"}).State(), "the mode is read")
	for _, name := range []string{"kline", "quote"} {
		assert.Equal(t, [][]string{{
			"get breakergen:open:" + name, "pttl breakergen:open:" + name, "get breakergen:mode:{" + name + "}",
		}}, trips.of(name), "the reads of %s's creation", name)
	}

	// Stalled, Redis answers neither read: one round trip is one timeout.
	s.signal(syscall.SIGSTOP)
	em := m.reg.Breaker(runtime.Config{Name: "em"})
	h := m.reg.Health().Fleet.Redis
	s.signal(syscall.SIGCONT)
	assert.Equal(t, runtime.Closed, em.State())
	assert.Equal(t, "down", h, "the read timed out")
	assert.Len(t, trips.of("em"), 1, "one round trip, so one timeout")
}

func TestProbeResultsReachPeers(t *testing.T) {
	s := startServer(t, "")
	const reset = 300 * time.Millisecond
	a := attach(t, newClient(t, s), "a", reset)
	b := attach(t, newClient(t, s), "b", reset)
	tripBy(t, a.tdx())
	require.Eventually(t, func() bool { return b.tdx().State() == runtime.Open }, within, time.Millisecond)

	// Whoever takes the lease probes; the other stays OPEN until the
	// result, which closes both.
	var probes atomic.Int32
	var prober *runtime.Breaker
	require.Eventually(t, func() bool {
		for _, m := range []member{a, b} {
			if m.tdx().State() == runtime.HalfOpen {
				prober = m.tdx()
				return true
			}
		}
		return false
	}, within, time.Millisecond)
	require.NoError(t, prober.Do(context.Background(), func(context.Context) error { probes.Add(1); return nil }))
	for _, m := range []member{a, b} {
		require.Eventually(t, func() bool { return m.tdx().State() == runtime.Closed }, within, time.Millisecond)
	}
	assert.Equal(t, int32(1), probes.Load())
}

// TestOneProbeUnderSparseTraffic: with no call for several windows, the
// lease passes from member to member, each going back to OPEN when its
// share ends with no call to probe with, and never are two HALF_OPEN at
// once; a lease that ran out under a holder still HALF_OPEN let every
// member end HALF_OPEN, and one call on each made three probes. Then one
// call on each member at once reaches the upstream once, and its success
// closes every member.
func TestOneProbeUnderSparseTraffic(t *testing.T) {
	s := startServer(t, "")
	const reset = 300 * time.Millisecond
	ms := []member{attach(t, newClient(t, s), "a", reset), attach(t, newClient(t, s), "b", reset),
		attach(t, newClient(t, s), "c", reset)}
	tripBy(t, ms[0].tdx())
	for _, m := range ms[1:] {
		require.Eventually(t, func() bool { return m.tdx().State() == runtime.Open }, within, time.Millisecond)
	}
	lapses := func() (n int) {
		for _, m := range ms {
			for _, ev := range m.reg.Events(100) {
				if ev.From == runtime.HalfOpen && ev.To == runtime.Open && strings.Contains(ev.Reason, "probe lease") {
					n++
				}
			}
		}
		return n
	}
	halfOpen := func() (n int, one *runtime.Breaker) {
		for _, m := range ms {
			if m.tdx().State() == runtime.HalfOpen {
				n, one = n+1, m.tdx()
			}
		}
		return n, one
	}
	most := 0
	require.Eventually(t, func() bool {
		n, _ := halfOpen()
		most = max(most, n)
		return lapses() >= 2
	}, within, time.Millisecond, "the lease lapses, with no call")
	assert.LessOrEqual(t, most, 1, "never two members HALF_OPEN at once")

	// One call on each member at once, when one holds the lease.
	var upstream atomic.Int32
	require.Eventually(t, func() bool {
		if n, _ := halfOpen(); n == 0 {
			return false
		}
		var wg sync.WaitGroup
		for _, m := range ms {
			wg.Go(func() {
				_ = m.tdx().Do(context.Background(), func(context.Context) error { upstream.Add(1); return nil })
			})
		}
		wg.Wait()
		require.LessOrEqual(t, upstream.Load(), int32(1), "one probe per fleet")
		return upstream.Load() == 1 // 0: the holder's share ended just before the calls
	}, within, time.Millisecond)
	for _, m := range ms {
		require.Eventually(t, func() bool { return m.tdx().State() == runtime.Closed }, within, time.Millisecond,
			"the probe's success closes every member")
	}
	assert.Equal(t, int32(1), upstream.Load())
}

func TestUntrustedNotesAreIgnored(t *testing.T) {
	s := startServer(t, "")
	m := attach(t, newClient(t, s), "a", 10*time.Second)
	em := m.reg.Breaker(runtime.Config{Name: "em"})
	rdb := newClient(t, s)
	ctx := context.Background()
	for _, payload := range []string{
		`not json`,
		`{"v":2,"kind":"open","name":"tdx","origin":"x","reason":"r","ms":1000}`,
		`{"v":1,"kind":"open","name":"nosuch","origin":"x","reason":"r","ms":1000}`,
		`{"v":1,"kind":"open","name":"tdx","origin":"x","reason":"r","ms":86400001}`,
		`{"v":1,"kind":"open","name":"tdx","origin":"x","reason":"r","ms":0}`,
		`{"v":1,"kind":"shut","name":"tdx","origin":"x","reason":"r"}`,
		`{"v":1,"kind":"open","origin":"x","reason":"r","ms":1000}`,
	} {
		require.NoError(t, rdb.Publish(ctx, "breakergen:events", payload).Err())
	}
	// Messages arrive in order: once this one is applied, so are those.
	// Its note is there, as a peer writes it before it publishes.
	require.NoError(t, rdb.Set(ctx, "breakergen:open:em", `{"v":1,"origin":"x","reason":"r"}`, time.Minute).Err())
	require.NoError(t, rdb.Publish(ctx, "breakergen:events",
		`{"v":1,"kind":"open","name":"em","origin":"x","reason":"r","ms":60000}`).Err())
	require.Eventually(t, func() bool { return em.State() == runtime.Open }, within, time.Millisecond)
	assert.Equal(t, runtime.Closed, m.tdx().State())
	logs := m.log.String()
	for _, want := range []string{"not a note", "version 2", "unknown breaker", "more than 24h0m0s", "no window",
		"unknown kind", "names no breaker"} {
		assert.Contains(t, logs, want)
	}

	// A stored note asking for more than 24h is not ours either.
	rdb.Set(ctx, "breakergen:open:kline", `{"v":1,"origin":"x","reason":"r"}`, 48*time.Hour)
	rdb.Set(ctx, "breakergen:open:quote", `garbage`, time.Minute)
	assert.Equal(t, runtime.Closed, m.reg.Breaker(runtime.Config{Name: "kline"}).State())
	assert.Equal(t, runtime.Closed, m.reg.Breaker(runtime.Config{Name: "quote"}).State())
}

func TestAuth(t *testing.T) {
	s := startServer(t, "s3cret")
	a := attach(t, newClient(t, s), "a", 10*time.Second)
	b := attach(t, newClient(t, s), "b", 10*time.Second)
	assert.Equal(t, "ok", a.reg.Health().Fleet.Redis)
	tripBy(t, a.tdx())
	require.Eventually(t, func() bool { return b.tdx().State() == runtime.Open }, within, time.Millisecond)

	wrong := redis.NewClient(&redis.Options{Addr: s.addr(), Password: "wrong"})
	defer wrong.Close()
	c := attach(t, wrong, "c", 10*time.Second)
	assert.Equal(t, "down", c.reg.Health().Fleet.Redis, "a refused AUTH is Redis away")
	require.NoError(t, c.tdx().Do(context.Background(), func(context.Context) error { return nil }))
}

func TestHealthEndpointShowsTheFleet(t *testing.T) {
	s := startServer(t, "")
	m := attach(t, newClient(t, s), "a", time.Minute)
	srv := httptest.NewServer(httphealth.New(m.reg))
	defer srv.Close()
	// The whole health, and the paged answer the dashboard polls.
	for _, path := range []string{"/health/datasources", "/health/datasources?page=1"} {
		res, err := srv.Client().Get(srv.URL + path)
		require.NoError(t, err)
		var h struct {
			Fleet map[string]any `json:"fleet"`
		}
		require.NoError(t, json.NewDecoder(res.Body).Decode(&h))
		res.Body.Close()
		assert.Equal(t, map[string]any{"redis": "ok", "members": 1.0}, h.Fleet, path)
	}
}

func TestCloseLeavesTheFleet(t *testing.T) {
	s := startServer(t, "")
	rdb := newClient(t, s)
	a := attach(t, newClient(t, s), "a", time.Minute)
	reg := runtime.NewRegistry(runtime.WithoutEnv())
	b, err := redisstate.Attach(reg, newClient(t, s), redisstate.WithOrigin("b"))
	require.NoError(t, err)
	assert.Equal(t, "b", b.Origin())
	members := func() []string { return rdb.ZRange(context.Background(), "breakergen:members", 0, -1).Val() }
	assert.Equal(t, []string{"a", "b"}, members())
	require.NoError(t, b.Close())
	require.NoError(t, b.Close(), "twice is fine")
	assert.Equal(t, []string{"a"}, members(), "b left at once")
	assert.Nil(t, reg.Health().Fleet, "detached")
	require.Eventually(t, func() bool { return a.reg.Health().Fleet.Members == 1 }, within, time.Millisecond)
}

// TestDefaultOriginsDiffer: two registries of one process attached with
// the default origin are two members of the fleet, each following the
// other's trips: were their origins equal, each would drop the other's
// news as its own. Only the first Attach of the process (maybe another
// test's) has the plain "<host>:<pid>".
func TestDefaultOriginsDiffer(t *testing.T) {
	s := startServer(t, "")
	fleets := make([]*redisstate.Fleet, 2)
	regs := make([]*runtime.Registry, 2)
	for i := range regs {
		regs[i] = runtime.NewRegistry(runtime.WithoutEnv(), runtime.WithLogger(slog.New(slog.DiscardHandler)))
		regs[i].Breaker(runtime.Config{Name: "tdx", FailureThreshold: 1, ResetTimeout: time.Minute})
		f, err := redisstate.Attach(regs[i], newClient(t, s), redisstate.WithTimeout(time.Second),
			redisstate.WithLogger(slog.New(slog.DiscardHandler)))
		require.NoError(t, err)
		t.Cleanup(func() { assert.NoError(t, f.Close()) })
		fleets[i] = f
	}
	assert.NotEqual(t, fleets[0].Origin(), fleets[1].Origin())
	host, _ := os.Hostname()
	assert.True(t, strings.HasPrefix(fleets[0].Origin(), fmt.Sprintf("%s:%d", host, os.Getpid())), fleets[0].Origin())
	assert.True(t, strings.HasPrefix(fleets[1].Origin(), fmt.Sprintf("%s:%d-", host, os.Getpid())), fleets[1].Origin())

	a, _ := regs[0].Lookup("tdx")
	b, _ := regs[1].Lookup("tdx")
	tripBy(t, a)
	require.Eventually(t, func() bool { return b.State() == runtime.Open }, within, time.Millisecond)
	require.Eventually(t, func() bool { return regs[0].Health().Fleet.Members == 2 }, within, time.Millisecond)
}

// TestAttachRefusesAnOriginInUse: an origin that a live member uses
// already is refused, starting nothing, since each would drop the other's
// news as its own; once that member has left, it is free again.
func TestAttachRefusesAnOriginInUse(t *testing.T) {
	s := startServer(t, "")
	reg := runtime.NewRegistry(runtime.WithoutEnv())
	a, err := redisstate.Attach(reg, newClient(t, s), redisstate.WithOrigin("same"), redisstate.WithTimeout(time.Second))
	require.NoError(t, err)

	twin := runtime.NewRegistry(runtime.WithoutEnv())
	f, err := redisstate.Attach(twin, newClient(t, s), redisstate.WithOrigin("same"), redisstate.WithTimeout(time.Second))
	require.ErrorContains(t, err, `origin "same" is in use by another live member`)
	assert.Nil(t, f)
	assert.Nil(t, twin.Health().Fleet, "not attached")
	assert.Equal(t, 1, reg.Health().Fleet.Members)

	require.NoError(t, a.Close())
	f, err = redisstate.Attach(twin, newClient(t, s), redisstate.WithOrigin("same"), redisstate.WithTimeout(time.Second))
	require.NoError(t, err, "free once its member has left")
	assert.NoError(t, f.Close())
}

// TestAttachAfterACrash: a process that crashed left the claim of its
// origin with up to 2s to run, and restarts at once under the same origin
// (a container restarted in place: same host name, pid 1 again). Its
// Attach finds that claim, which no heartbeat renews, waits for it to run
// out, and attaches, where a live member's claim would still be held.
func TestAttachAfterACrash(t *testing.T) {
	s := startServer(t, "")
	rdb := newClient(t, s)
	plantCrashedClaim(t, rdb, "vm:1")

	reg := runtime.NewRegistry(runtime.WithoutEnv())
	f, err := redisstate.Attach(reg, rdb, redisstate.WithOrigin("vm:1"), redisstate.WithTimeout(time.Second))
	require.NoError(t, err, "the crashed process's claim ran out")
	assert.Empty(t, reg.Health().Fleet.DuplicateOrigin)
	assert.NoError(t, f.Close())
}

// TestRestartedMemberFollowsItsFormerSelf: a member with a stable origin
// (a StatefulSet's pod) trips and restarts, a new registry under the same
// origin. It comes up OPEN for what is left of its former self's trip,
// as a new member does: it skipped every note of its own origin as its
// own, and came up CLOSED for a source the rest of the fleet kept out. A
// note of its origin that an earlier version wrote (with no Attach named)
// is followed too.
func TestRestartedMemberFollowsItsFormerSelf(t *testing.T) {
	s := startServer(t, "")
	rdb := newClient(t, s)
	peer := attach(t, rdb, "quotes-0", time.Minute)
	former := attach(t, rdb, "quotes-1", time.Minute)
	tripBy(t, former.tdx())
	stateIs(t, runtime.Open, peer)
	require.NoError(t, former.fleet.Close())

	restarted := attach(t, rdb, "quotes-1", time.Minute)
	require.Equal(t, runtime.Open, restarted.tdx().State(), "open when Attach returns")
	assert.Equal(t, "peer quotes-1: 403 banned", restarted.reg.Events(1)[0].Reason)
	assert.WithinDuration(t, former.tdx().Stats().NextProbe, restarted.tdx().Stats().NextProbe, time.Second,
		"the window left, not a new one")

	require.NoError(t, rdb.Set(context.Background(), "breakergen:open:em",
		`{"v":1,"origin":"quotes-1","reason":"banned"}`, time.Minute).Err())
	em := restarted.reg.Breaker(runtime.Config{Name: "em"})
	assert.Equal(t, runtime.Open, em.State(), "an earlier version's note of the origin")
}

// TestFleetsOnTwoDatabasesDoNotTalk: staging and production share one
// Redis server, staging in database 1 and production in database 2, both
// with the default prefix. Each fleet follows its own members alone:
// Redis pub/sub ignores the database, so production followed staging's
// trips and modes (and a staging probe's success closed a production
// breaker).
func TestFleetsOnTwoDatabasesDoNotTalk(t *testing.T) {
	s := startServer(t, "")
	db := func(n int) *redis.Client {
		c := redis.NewClient(&redis.Options{Addr: s.addr(), DB: n})
		t.Cleanup(func() { _ = c.Close() })
		return c
	}
	staging, stagingPeer := attach(t, db(1), "staging-1", time.Minute), attach(t, db(1), "staging-2", time.Minute)
	prod, prodPeer := attach(t, db(2), "prod-1", time.Minute), attach(t, db(2), "prod-2", time.Minute)
	em := runtime.Config{Name: "em", FailureThreshold: 1, ResetTimeout: time.Minute}
	prodEM := prod.reg.Breaker(em)

	tripBy(t, staging.tdx())
	staging.tdx().Isolate("staging maintenance")
	stateIs(t, runtime.Isolated, stagingPeer)
	// A production trip after staging's news: once production has it, it
	// has heard anything published before it on its channel.
	tripBy(t, prodPeer.reg.Breaker(em))
	require.Eventually(t, func() bool { return prodEM.State() == runtime.Open }, within, time.Millisecond)
	assert.Equal(t, runtime.Closed, prod.tdx().State(), "production followed staging")
	assert.Equal(t, runtime.Closed, prodPeer.tdx().State(), "production followed staging")
}

// TestTwinOriginsShowInHealth: two members that came to share an origin
// where Attach could not see it (Redis stalled while the second attached)
// are found by their heartbeats: both log it and report it in Health, and
// it clears when one leaves.
func TestTwinOriginsShowInHealth(t *testing.T) {
	s := startServer(t, "")
	a := attach(t, newClient(t, s), "same", time.Minute)
	s.signal(syscall.SIGSTOP)
	b := attach(t, newClient(t, s), "same", time.Minute, redisstate.WithTimeout(redisstate.DefaultTimeout))
	s.signal(syscall.SIGCONT)
	for _, m := range []member{a, b} {
		// The heartbeat records the twin, which Health shows, and then
		// logs it: wait for both.
		require.Eventually(t, func() bool {
			return m.reg.Health().Fleet.DuplicateOrigin == "same" &&
				strings.Contains(m.log.String(), `another live member uses this origin`)
		}, within, time.Millisecond, "Health and the log say so")
	}
	require.NoError(t, b.fleet.Close())
	require.Eventually(t, func() bool { return a.reg.Health().Fleet.DuplicateOrigin == "" }, within, time.Millisecond)
}

// TestAttachRefusesATimeoutUnder1ms: WithTimeout(1) is a slip of the unit
// (a Duration counts nanoseconds); taken as it is, every Redis operation
// would time out and the fleet would blame Redis for ever.
func TestAttachRefusesATimeoutUnder1ms(t *testing.T) {
	s := startServer(t, "")
	for _, d := range []time.Duration{1, 50, time.Millisecond - 1} {
		reg := runtime.NewRegistry(runtime.WithoutEnv())
		f, err := redisstate.Attach(reg, newClient(t, s), redisstate.WithTimeout(d))
		require.ErrorContains(t, err, "WithTimeout("+d.String()+"): want at least 1ms", d)
		assert.Nil(t, f)
	}
	reg := runtime.NewRegistry(runtime.WithoutEnv())
	f, err := redisstate.Attach(reg, newClient(t, s), redisstate.WithTimeout(time.Millisecond))
	require.NoError(t, err, "1ms is a timeout")
	assert.NoError(t, f.Close())
}

// firstScript signals once a script of the client has answered.
type firstScript struct {
	once sync.Once
	done chan struct{}
}

func (h *firstScript) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *firstScript) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		if (cmd.Name() == "evalsha" || cmd.Name() == "eval") && err == nil {
			h.once.Do(func() { close(h.done) })
		}
		return err
	}
}

func (h *firstScript) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// TestAttachAfterACrashWithRedisGone: as in TestAttachAfterACrash, Attach
// finds a crashed process's claim of its origin and waits for it to run
// out, but Redis goes away meanwhile. Attach cannot tell, so attaches,
// and does not report the crashed claim as a live twin: the heartbeats
// count again once Redis answers.
func TestAttachAfterACrashWithRedisGone(t *testing.T) {
	s := startServer(t, "")
	rdb := newClient(t, s)
	plantCrashedClaim(t, rdb, "vm:1")
	hook := &firstScript{done: make(chan struct{})}
	rdb.AddHook(hook)

	killed := make(chan struct{})
	go func() {
		defer close(killed)
		<-hook.done // Attach's first beat found the claim
		assert.NoError(t, s.srv.Process().Kill())
	}()
	logs := &syncBuffer{}
	reg := runtime.NewRegistry(runtime.WithoutEnv())
	f, err := redisstate.Attach(reg, rdb, redisstate.WithOrigin("vm:1"), redisstate.WithTimeout(200*time.Millisecond),
		redisstate.WithLogger(slog.New(slog.NewTextHandler(logs, nil))))
	<-killed
	require.NoError(t, err)
	assert.Empty(t, reg.Health().Fleet.DuplicateOrigin, "no live member uses the origin as far as anyone knows")
	assert.NotContains(t, logs.String(), "another live member uses this origin")
	assert.NoError(t, f.Close())
}

// plantCrashedClaim leaves in Redis the claim of origin that a process
// which crashed during its Attach would have left: 1.5 s to run on the
// server's clock, which no heartbeat renews.
func plantCrashedClaim(t *testing.T, rdb *redis.Client, origin string) {
	t.Helper()
	ctx := context.Background()
	now, err := rdb.Time(ctx).Result()
	require.NoError(t, err)
	key := "breakergen:origin:" + origin
	require.NoError(t, rdb.ZAdd(ctx, key, redis.Z{Score: float64(now.Add(1500 * time.Millisecond).UnixMilli()), Member: "the crashed Attach"}).Err())
	require.NoError(t, rdb.PExpire(ctx, key, 2*time.Second).Err())
}
