package runtime_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/breakergen/breakergen/runtime"
)

// fakeSharer records what a registry tells its fleet and answers the
// probe gate and limiter waits as the test says.
type fakeSharer struct {
	mu      sync.Mutex // guards the fields below
	created []string
	moves   []string // "name FROM→TO window"
	probes  int
	allow   bool          // Probe's answer
	retry   time.Duration // Probe's retry
	onNew   func(b *runtime.Breaker)
	waitErr error
	waits   int
	shared  map[string]bool // limiter names whose waits it takes
}

func (s *fakeSharer) Created(b *runtime.Breaker) {
	s.mu.Lock()
	s.created = append(s.created, b.Name())
	on := s.onNew
	s.mu.Unlock()
	if on != nil {
		on(b)
	}
}

func (s *fakeSharer) Transition(b *runtime.Breaker, ev runtime.Event, window time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.moves = append(s.moves, ev.Source+" "+ev.From.String()+"→"+ev.To.String()+" "+window.String())
}

func (s *fakeSharer) Probe(b *runtime.Breaker) (bool, time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.probes++
	return s.allow, s.retry
}

func (s *fakeSharer) Wait(ctx context.Context, l *runtime.Limiter, maxWait time.Duration) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.shared[l.Name()] {
		return false, nil
	}
	s.waits++
	return true, s.waitErr
}

func (s *fakeSharer) Health() runtime.FleetHealth {
	return runtime.FleetHealth{Redis: "ok", Members: 3}
}

func (s *fakeSharer) snapshot() (moves []string, probes int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.moves...), s.probes
}

func shared(t *testing.T, s *fakeSharer) (*runtime.Registry, *fakeClock) {
	t.Helper()
	reg, clk := newTestRegistry(t)
	stop, err := reg.Share(s)
	require.NoError(t, err)
	t.Cleanup(stop)
	return reg, clk
}

func TestShareOneSharerAtATime(t *testing.T) {
	reg, _ := newTestRegistry(t)
	_, err := reg.Share(nil)
	require.Error(t, err)
	stop, err := reg.Share(&fakeSharer{})
	require.NoError(t, err)
	_, err = reg.Share(&fakeSharer{})
	require.Error(t, err, "a second sharer")
	stop()
	stop2, err := reg.Share(&fakeSharer{})
	require.NoError(t, err, "after stop")
	stop2()
}

func TestShareSeesOwnTransitionsNotPeers(t *testing.T) {
	s := &fakeSharer{allow: true}
	reg, clk := shared(t, s)
	b := reg.Breaker(runtime.Config{Name: "tdx", FailureThreshold: 1, ResetTimeout: 10 * time.Second})
	trip(t, b)
	clk.Advance(10 * time.Second) // the gate allows: HALF_OPEN
	require.Equal(t, runtime.HalfOpen, b.State())
	require.NoError(t, b.Do(context.Background(), func(context.Context) error { return nil }))
	require.Equal(t, runtime.Closed, b.State())

	assert.True(t, b.PeerOpen("host:1", "retry after 30s: banned", 30*time.Second))
	assert.True(t, b.PeerClose("host:1", "probe succeeded"))
	moves, probes := s.snapshot()
	assert.Equal(t, []string{"tdx CLOSED→OPEN 10s", "tdx OPEN→HALF_OPEN 0s", "tdx HALF_OPEN→CLOSED 0s"}, moves,
		"peer moves are not passed back")
	assert.Equal(t, 1, probes)
	evs := reg.Events(2)
	require.Len(t, evs, 2)
	assert.Equal(t, "peer host:1: probe succeeded", evs[0].Reason)
	assert.Equal(t, "peer host:1: retry after 30s: banned", evs[1].Reason)
}

func TestPeerOpenOpensNeverShortensNeverCloses(t *testing.T) {
	reg, clk := shared(t, &fakeSharer{allow: true})
	b := reg.Breaker(runtime.Config{Name: "em", ResetTimeout: time.Minute})
	for _, tc := range []struct {
		name    string
		d       time.Duration
		changed bool
		next    time.Duration // NextProbe after t0+elapsed
	}{
		{"zero does nothing", 0, false, 0},
		{"negative does nothing", -time.Second, false, 0},
		{"opens a closed breaker", 20 * time.Second, true, 20 * time.Second},
		{"never shortens", 5 * time.Second, false, 20 * time.Second},
		{"lengthens", 40 * time.Second, true, 40 * time.Second},
		{"capped at MaxCooldown", 48 * time.Hour, true, runtime.MaxCooldown},
	} {
		changed := b.PeerOpen("p", "x", tc.d)
		assert.Equal(t, tc.changed, changed, tc.name)
		if tc.next == 0 {
			assert.Equal(t, runtime.Closed, b.State(), tc.name)
			continue
		}
		assert.Equal(t, runtime.Open, b.State(), tc.name)
		assert.Equal(t, t0.Add(tc.next), b.Stats().NextProbe, tc.name)
	}
	assert.Equal(t, uint64(1), b.Stats().StateChanges, "lengthening is not a transition")
	assert.Equal(t, t0, b.Stats().OpenedAt)
	clk.Advance(runtime.MaxCooldown) // never kept open past the note
	assert.Equal(t, runtime.HalfOpen, b.State())
	assert.True(t, b.PeerClose("p", "x"))
	assert.Equal(t, runtime.Closed, b.State(), "a peer's success closes")
	assert.False(t, b.PeerClose("p", "x"), "nothing to close")
}

func TestPeerOpenedCallsAreRejected(t *testing.T) {
	reg, _ := shared(t, &fakeSharer{})
	b := reg.Breaker(runtime.Config{Name: "em"})
	b.PeerOpen("p", "x", time.Second)
	called := false
	err := b.Do(context.Background(), func(context.Context) error { called = true; return nil })
	require.ErrorIs(t, err, runtime.ErrOpen)
	assert.False(t, called)
}

func TestProbeGateKeepsOpenUntilAllowed(t *testing.T) {
	s := &fakeSharer{retry: 2 * time.Second}
	reg, clk := shared(t, s)
	b := reg.Breaker(runtime.Config{Name: "tdx", FailureThreshold: 1, ResetTimeout: 10 * time.Second})
	trip(t, b)
	clk.Advance(10 * time.Second)
	assert.Equal(t, runtime.Open, b.State(), "a peer holds the lease")
	clk.Advance(3 * time.Second)
	assert.Equal(t, runtime.Open, b.State())
	_, probes := s.snapshot()
	assert.Equal(t, 2, probes, "asked again after retry")

	s.mu.Lock()
	s.allow = true
	s.mu.Unlock()
	clk.Advance(time.Second)
	assert.Equal(t, runtime.HalfOpen, b.State(), "the lease is ours")
}

func TestProbeGateWaitsForPeerResult(t *testing.T) {
	s := &fakeSharer{retry: 5 * time.Second}
	reg, clk := shared(t, s)
	b := reg.Breaker(runtime.Config{Name: "tdx", FailureThreshold: 1, ResetTimeout: 10 * time.Second})
	trip(t, b)
	clk.Advance(11 * time.Second)
	// The holder's probe failed: its new window reaches us as a note.
	require.True(t, b.PeerOpen("h", "probe failed", 10*time.Second))
	clk.Advance(9 * time.Second)
	assert.Equal(t, runtime.Open, b.State())
	_, probes := s.snapshot()
	assert.Equal(t, 1, probes, "the old period's retry timer was dropped")
	require.True(t, b.PeerClose("h", "probe succeeded"))
	assert.Equal(t, runtime.Closed, b.State())
}

func TestCreatedLaterStartsOpen(t *testing.T) {
	s := &fakeSharer{}
	reg, _ := newTestRegistry(t)
	reg.Breaker(runtime.Config{Name: "before"})
	s.onNew = func(b *runtime.Breaker) {
		if b.Name() == "tdx" {
			b.PeerOpen("p", "banned", 7*time.Second)
		}
	}
	stop, err := reg.Share(s)
	require.NoError(t, err)
	defer stop()
	b := reg.Breaker(runtime.Config{Name: "tdx"})
	assert.Equal(t, runtime.Open, b.State(), "open before Breaker returns")
	reg.Breaker(runtime.Config{Name: "tdx"})
	reg.Breaker(runtime.Config{Name: "other"})
	assert.Equal(t, []string{"tdx", "other"}, s.created, "once per breaker, only those created after Share")
}

func TestSharedLimiterWait(t *testing.T) {
	s := &fakeSharer{shared: map[string]bool{"em": true}}
	reg, _ := shared(t, s)
	em := reg.Limiter("em", 1, 1)
	local := reg.Limiter("local", 1, 1)
	ctx := context.Background()
	for range 3 {
		require.NoError(t, em.Wait(ctx, 0), "the sharer gives tokens")
	}
	s.mu.Lock()
	s.waitErr = runtime.ErrRateLimited
	s.mu.Unlock()
	err := em.Wait(ctx, time.Millisecond)
	var rl *runtime.RateLimitError
	require.ErrorAs(t, err, &rl, "the limiter's own refusal")
	assert.Equal(t, "em", rl.Name)
	require.NoError(t, local.Wait(ctx, 0))
	require.ErrorIs(t, local.Wait(ctx, time.Millisecond), runtime.ErrRateLimited, "not shared: the local bucket")
	assert.Equal(t, 4, s.waits)

	canceled, cancel := context.WithCancel(ctx)
	cancel()
	require.ErrorIs(t, em.Wait(canceled, 0), context.Canceled)
	assert.Equal(t, 4, s.waits, "an ended ctx asks nobody")
}

func TestHealthFleet(t *testing.T) {
	reg, _ := newTestRegistry(t)
	j, err := json.Marshal(reg.Health())
	require.NoError(t, err)
	assert.NotContains(t, string(j), "fleet", "no fleet attached")

	stop, err := reg.Share(&fakeSharer{})
	require.NoError(t, err)
	defer stop()
	h := reg.Health()
	require.NotNil(t, h.Fleet)
	j, err = json.Marshal(h)
	require.NoError(t, err)
	assert.Contains(t, string(j), `"fleet":{"redis":"ok","members":3}`)
}

// limitSharer is a fakeSharer that names the limiters it shares.
type limitSharer struct {
	fakeSharer
	names []string
}

func (s *limitSharer) SharedLimits() []string { return s.names }

// TestUnmatchedListsSharedLimitsNoLimiterHas: a fleet's shared name that
// no limiter has (a typo: the limiter stays local) is listed with the
// settings that name nothing, once when it is a setting too, until a
// limiter of that name is made; a Sharer that names none lists nothing.
func TestUnmatchedListsSharedLimitsNoLimiterHas(t *testing.T) {
	reg := runtime.NewRegistry(runtime.WithoutEnv(), runtime.WithLogger(discardLogger()),
		runtime.WithRateLimit("set", 1, 1))
	reg.Limiter("eastmoney", 1, 1)
	stop, err := reg.Share(&limitSharer{names: []string{"eastmony", "eastmoney", "set"}})
	require.NoError(t, err)
	assert.Equal(t, []string{`"eastmony"`, `"set"`}, reg.Health().Unmatched, "set and shared: listed once")
	reg.Limiter("eastmony", 1, 1)
	reg.Limiter("set", 1, 1)
	assert.Nil(t, reg.Unmatched())
	stop()

	plain, _ := newTestRegistry(t)
	stop, err = plain.Share(&fakeSharer{})
	require.NoError(t, err)
	defer stop()
	assert.Nil(t, plain.Unmatched())
}

// leaseSharer is a fakeSharer whose grant of a probe is a lease of lease
// (runtime.LeaseSharer), and which counts the leases given back.
type leaseSharer struct {
	fakeSharer
	lease  time.Duration // ProbeLease's lease when it grants
	lapsed int
}

func (s *leaseSharer) ProbeLease(b *runtime.Breaker) (bool, time.Duration, time.Duration) {
	probe, retry := s.Probe(b)
	return probe, s.lease, retry
}

func (s *leaseSharer) LeaseLapsed(b *runtime.Breaker) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lapsed++
}

func (s *leaseSharer) counts() (probes, lapsed int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.probes, s.lapsed
}

// TestLeaseLapsesWithNoCallToProbe: a breaker moved to HALF_OPEN by a
// lease of two windows that has no call to probe with goes back to OPEN
// after one window, quietly for the fleet (no Transition, no failed probe
// in the backoff), gives the lease back, and asks again a little after
// the lease would have ended; a probe admitted just before the lapse
// finishes inside the lease and its success is shared as usual, and no
// probe that could outlive the lease is admitted.
func TestLeaseLapsesWithNoCallToProbe(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &leaseSharer{fakeSharer: fakeSharer{allow: true}, lease: 2 * time.Second}
		reg := runtime.NewRegistry(runtime.WithoutEnv(), runtime.WithLogger(discardLogger()))
		stop, err := reg.Share(s)
		require.NoError(t, err)
		defer stop()
		b := reg.Breaker(runtime.Config{Name: "tdx", FailureThreshold: 1, ResetTimeout: time.Second,
			ResetMax: 8 * time.Second, HalfOpenMax: 2})
		fail := func(context.Context) error { return errors.New("down") }
		require.Error(t, b.Do(context.Background(), fail))
		time.Sleep(time.Second)
		synctest.Wait()
		require.Equal(t, runtime.HalfOpen, b.State(), "the lease is ours")

		time.Sleep(time.Second) // one window, no call
		synctest.Wait()
		require.Equal(t, runtime.Open, b.State(), "the lease lapsed")
		probes, lapsed := s.counts()
		assert.Equal(t, 1, probes)
		assert.Equal(t, 1, lapsed, "the lease is given back")
		moves, _ := s.snapshot()
		assert.Equal(t, []string{"tdx CLOSED→OPEN 1s", "tdx OPEN→HALF_OPEN 0s"}, moves, "the lapse is not news for the fleet")
		ev := reg.Events(1)[0]
		assert.Equal(t, runtime.HalfOpen, ev.From)
		assert.Equal(t, runtime.Open, ev.To)
		assert.Contains(t, ev.Reason, "probe lease")
		assert.Equal(t, time.Now().Add(time.Second+125*time.Millisecond), b.Stats().NextProbe,
			"asks again a window/8 after the lease's end")

		time.Sleep(time.Second + 124*time.Millisecond)
		synctest.Wait()
		probes, _ = s.counts()
		assert.Equal(t, 1, probes, "not before the lease would have ended")
		time.Sleep(time.Millisecond)
		synctest.Wait()
		probes, _ = s.counts()
		assert.Equal(t, 2, probes, "asks again")
		require.Equal(t, runtime.HalfOpen, b.State(), "a second lease")

		// A probe admitted just before the lapse holds the lease to its end.
		time.Sleep(time.Second - time.Millisecond)
		done := make(chan error)
		go func() {
			done <- b.Do(context.Background(), func(context.Context) error {
				time.Sleep(900 * time.Millisecond)
				return nil
			})
		}()
		synctest.Wait()
		time.Sleep(500 * time.Millisecond)
		synctest.Wait()
		assert.Equal(t, runtime.HalfOpen, b.State(), "no lapse with a probe in flight")
		err = b.Do(context.Background(), func(context.Context) error { return nil })
		assert.ErrorIs(t, err, runtime.ErrOpen, "a probe that could outlive the lease is not admitted, a slot free or not")
		require.NoError(t, <-done)
		assert.Equal(t, runtime.Closed, b.State())
		moves, _ = s.snapshot()
		assert.Equal(t, "tdx HALF_OPEN→CLOSED 0s", moves[len(moves)-1], "the probe's success is shared")
		_, lapsed = s.counts()
		assert.Equal(t, 1, lapsed)

		// The lapse was no failed probe: the next failed one is the first.
		require.Error(t, b.Do(context.Background(), fail))
		time.Sleep(time.Second)
		synctest.Wait()
		require.Equal(t, runtime.HalfOpen, b.State())
		require.Error(t, b.Do(context.Background(), fail))
		assert.Contains(t, reg.Events(1)[0].Reason, "(1st in a row)")
	})
}

// TestHalfOpenHasNoIdleTimeoutWithoutALease: without a Sharer, with one
// that is no LeaseSharer, and with a LeaseSharer's grant that is no lease
// (lease 0: the fleet away), HALF_OPEN waits for its probe as long as it
// takes (SPEC §4).
func TestHalfOpenHasNoIdleTimeoutWithoutALease(t *testing.T) {
	for name, s := range map[string]runtime.Sharer{
		"no sharer":      nil,
		"plain sharer":   &fakeSharer{allow: true},
		"grant no lease": &leaseSharer{fakeSharer: fakeSharer{allow: true}},
	} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				reg := runtime.NewRegistry(runtime.WithoutEnv(), runtime.WithLogger(discardLogger()))
				if s != nil {
					stop, err := reg.Share(s)
					require.NoError(t, err)
					defer stop()
				}
				b := reg.Breaker(runtime.Config{Name: "tdx", FailureThreshold: 1, ResetTimeout: time.Second})
				require.Error(t, b.Do(context.Background(), func(context.Context) error { return errors.New("down") }))
				time.Sleep(time.Second)
				synctest.Wait()
				require.Equal(t, runtime.HalfOpen, b.State())
				time.Sleep(time.Hour)
				synctest.Wait()
				assert.Equal(t, runtime.HalfOpen, b.State(), "no idle timeout")
				if ls, ok := s.(*leaseSharer); ok {
					_, lapsed := ls.counts()
					assert.Zero(t, lapsed)
				}
				require.NoError(t, b.Do(context.Background(), func(context.Context) error { return nil }))
				assert.Equal(t, runtime.Closed, b.State())
			})
		})
	}
}

// TestPeerNoteAtAKeysMakingWithinMaxOpen: a key's new breaker reads its
// fleet's note as it is made (Sharer.Created), before its family takes it
// in; the note opens it only within the family's MaxOpen (SPEC §15), as
// for a live key, and the family's count of keys OPEN is exact.
func TestPeerNoteAtAKeysMakingWithinMaxOpen(t *testing.T) {
	s := &fakeSharer{onNew: func(b *runtime.Breaker) { b.PeerOpen("peer-1", "503", time.Minute) }}
	reg, _ := shared(t, s)
	f := reg.Family(runtime.Config{Name: "quote", FailureThreshold: 3, ResetTimeout: time.Minute},
		runtime.FamilyConfig{Keys: 10, MaxOpen: 20})
	open := 0
	for i := range 10 {
		if f.Breaker(string(rune('a'+i))).State() == runtime.Open {
			open++
		}
	}
	h := f.Health()
	assert.Equal(t, 10, h.Keys)
	assert.Equal(t, 2, open, "20% of 10 keys")
	assert.Equal(t, 2, h.Open, "the family's count")
	assert.NotZero(t, h.KeptShut)
}

// TestPeerNotesAtAKeysMakingCountOnce: a key's breaker opened by a note as
// it is made, closed and opened again before its family takes it in,
// counts once among the family's keys OPEN; and at the family's bound a
// new key takes the place of a dropped one, so the cap is that of the
// bound, not of one key more.
func TestPeerNotesAtAKeysMakingCountOnce(t *testing.T) {
	s := &fakeSharer{}
	reg, _ := shared(t, s)
	f := reg.Family(runtime.Config{Name: "quote", FailureThreshold: 1, ResetTimeout: time.Minute},
		runtime.FamilyConfig{Keys: 10, MaxOpen: 20})
	for i := range 9 {
		f.Breaker(fmt.Sprint("k", i))
	}
	s.mu.Lock()
	s.onNew = func(b *runtime.Breaker) {
		b.PeerOpen("p", "503", time.Minute)
		b.PeerClose("p", "probe ok")
		b.PeerOpen("p", "503", time.Minute)
	}
	s.mu.Unlock()
	require.Equal(t, runtime.Open, f.Breaker("x").State())
	assert.Equal(t, 1, f.Health().Open)
	f.Breaker("x").PeerClose("p", "probe ok")
	assert.Zero(t, f.Health().Open, "no key OPEN, none counted")

	s.mu.Lock()
	s.onNew = nil
	s.mu.Unlock()
	g := reg.Family(runtime.Config{Name: "bound", FailureThreshold: 1, ResetTimeout: time.Minute},
		runtime.FamilyConfig{Keys: 9, MaxOpen: 20})
	for i := range 9 {
		g.Breaker(fmt.Sprint("k", i))
	}
	_ = g.Breaker("k0").Do(context.Background(), func(context.Context) error { return errors.New("down") })
	require.Equal(t, 1, g.Health().Open, "20% of 9 keys: one")
	s.mu.Lock()
	s.onNew = func(b *runtime.Breaker) { b.PeerOpen("p", "503", time.Minute) }
	s.mu.Unlock()
	assert.Equal(t, runtime.Closed, g.Breaker("new").State(), "at the bound it takes a dropped key's place: still 9 keys")
	h := g.Health()
	assert.Equal(t, 9, h.Keys)
	assert.Equal(t, 1, h.Open)
}
