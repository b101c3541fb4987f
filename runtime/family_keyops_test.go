package runtime_test

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	br "github.com/breakergen/breakergen/runtime"
)

// modeSharer is a fakeSharer that records the breakers the registry
// passes to ModeSharer.Mode.
type modeSharer struct {
	fakeSharer
	mu    sync.Mutex
	modes []*br.Breaker
}

func (s *modeSharer) Mode(b *br.Breaker, mode br.State, reason string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.modes = append(s.modes, b)
}

// TestFamilyIsolateThroughADroppedBreaker: an operator's Isolate on a
// key's *Breaker that the family dropped since it was looked up isolates
// the key's live breaker, made again for it, rather than the dropped one,
// which no call goes through: the key refuses calls after it, Lookup
// gives the isolated breaker, the Event and the fleet name it, and it is
// never dropped. Resume through the dropped one reaches it too.
func TestFamilyIsolateThroughADroppedBreaker(t *testing.T) {
	reg := quietRegistry()
	sh := &modeSharer{}
	stop, err := reg.Share(sh)
	require.NoError(t, err)
	defer stop()
	f := reg.Family(br.Config{Name: "quote"}, br.FamilyConfig{Keys: 100})
	f.Breaker("x")
	stale, ok := reg.Lookup("quote/x")
	require.True(t, ok)
	for i := range 1000 {
		f.Breaker("k" + strconv.Itoa(i))
	}
	_, ok = reg.Lookup("quote/x")
	require.False(t, ok, "x was dropped by the churn")

	stale.Isolate("maintenance")
	live, ok := reg.Lookup("quote/x")
	require.True(t, ok, "the key was made again to take the operator's mode")
	assert.NotSame(t, stale, live)
	assert.Equal(t, br.Isolated, live.State(), "Lookup gives the isolated breaker")
	assert.Equal(t, br.Closed, stale.State(), "the dropped breaker, which guards nothing, is left alone")
	called := false
	err = f.Breaker("x").Do(context.Background(), func(context.Context) error { called = true; return nil })
	require.ErrorIs(t, err, br.ErrOpen, "a call on the key is refused")
	assert.False(t, called)
	ev := reg.Events(1)
	require.Len(t, ev, 1)
	assert.Equal(t, br.Event{Time: ev[0].Time, Source: "quote/x", From: br.Closed, To: br.Isolated,
		Reason: "isolated by operator: maintenance"}, ev[0])
	sh.mu.Lock()
	assert.Equal(t, []*br.Breaker{live}, sh.modes, "the fleet hears of the breaker that took the mode")
	sh.mu.Unlock()

	for i := range 1000 {
		f.Breaker("m" + strconv.Itoa(i))
	}
	got, ok := reg.Lookup("quote/x")
	require.True(t, ok, "a key in a mode is never dropped")
	assert.Same(t, live, got)

	stale.Resume("done")
	assert.Equal(t, br.Closed, live.State(), "Resume through the dropped breaker reaches the live one")
	assert.Equal(t, "resumed by operator: done", reg.Events(1)[0].Reason)
}

// TestFamilyIsolateRacesTheDrop: a key churned out of its family while
// an operator isolates it through a *Breaker looked up before is never
// left CLOSED: once Isolate returns, the key's live breaker is ISOLATED.
func TestFamilyIsolateRacesTheDrop(t *testing.T) {
	reg := quietRegistry()
	f := reg.Family(br.Config{Name: "quote"}, br.FamilyConfig{Keys: 4})
	var stop atomic.Bool
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := 0; !stop.Load(); i++ {
				f.Breaker(strconv.Itoa(g) + "-" + strconv.Itoa(i))
			}
		})
	}
	defer func() { stop.Store(true); wg.Wait() }()
	for i := range 500 {
		b := f.Breaker("x")
		if i%2 == 0 {
			b.Isolate("maintenance")
		} else {
			b.Bypass("watching")
		}
		live, ok := f.Lookup("x")
		require.True(t, ok, "round %d: the key in a mode is live", i)
		require.True(t, live.Mode() != br.Closed, "round %d: the live breaker took the mode", i)
		b.Resume("next round")
		if live.State() != br.Closed {
			// Resume through b reached live, unless live was resumed and
			// dropped already, then made again: then it is CLOSED too.
			t.Fatalf("round %d: Resume left the live breaker %s", i, live.State())
		}
	}
}
