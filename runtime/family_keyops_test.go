package runtime_test

import (
	"context"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

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
// left CLOSED: once Isolate (or Bypass) returns, the key's live breaker
// is in the mode. In odd rounds the churn makes more keys than the bound
// between the lookup and the mode (the key is dropped by then); in even
// ones the two race.
func TestFamilyIsolateRacesTheDrop(t *testing.T) {
	reg := quietRegistry()
	f := reg.Family(br.Config{Name: "quote"}, br.FamilyConfig{Keys: 4})
	var stop atomic.Bool
	var made atomic.Int64
	var wg sync.WaitGroup
	for g := range 2 {
		wg.Go(func() {
			for i := 0; !stop.Load(); i++ {
				f.Breaker(strconv.Itoa(g) + "-" + strconv.Itoa(i))
				made.Add(1)
			}
		})
	}
	defer func() { stop.Store(true); wg.Wait() }()
	for i := range 500 {
		b := f.Breaker("x")
		if i%2 == 1 {
			for n := made.Load(); made.Load() < n+8; {
				runtime.Gosched()
			}
		}
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

// TestFamilyKeyOwnSettings: settings given for one key of a family, by
// WithConfig or by the environment, apply to its breaker each time it is
// made (SPEC §5: a run-time setting is never silently ignored), over the
// family's settings and any Update of them; a key's own rate limit
// cannot apply (the keys share the family's limiter) and says so.
func TestFamilyKeyOwnSettings(t *testing.T) {
	restore := br.SetEnviron([]string{
		"BREAKER_QUOTE/B_THRESHOLD=9",
		"BREAKER_QUOTE/W_WINDOW=100",
		"BREAKER_FEED/W_WINDOW=100",
		"BREAKER_QUOTE/R_RATELIMIT=5/1",
		"BREAKER_QUOTE/Z_THRESHOLD=2",  // a key not live
		"BREAKER_QUOTES/Z_THRESHOLD=2", // no family's
	})
	defer restore()
	var logs logBuffer
	reg := br.NewRegistry(br.WithLogger(logs.logger()),
		br.WithConfig(br.Config{Name: "quote/c", FailureThreshold: 11}),
		br.WithConfig(br.Config{Name: "quote/b", ResetTimeout: time.Minute}))
	f := reg.Family(br.Config{Name: "quote", FailureThreshold: 3}, br.FamilyConfig{Keys: 10})
	check := func(when string) {
		t.Helper()
		b := f.Breaker("b")
		assert.Equal(t, 9, b.Config().FailureThreshold, "%s: the key's variable", when)
		assert.Equal(t, time.Minute, b.Config().ResetTimeout, "%s: and its WithConfig, field by field", when)
		assert.Equal(t, 11, f.Breaker("c").Config().FailureThreshold, "%s: the key's WithConfig", when)
		assert.Equal(t, 3, f.Breaker("a").Config().FailureThreshold, "%s: a key without its own: the family's", when)
		assert.Equal(t, "quote/c", f.Breaker("c").Config().Name)
	}
	check("made")
	for range 8 {
		failOn(f.Breaker("b"))
	}
	assert.Equal(t, br.Closed, f.Breaker("b").State(), "8 failures of the key's 9")
	failOn(f.Breaker("b"))
	assert.Equal(t, br.Open, f.Breaker("b").State(), "the key's own threshold trips it")
	f.Breaker("b").Resume("droppable again")

	for i := range 30 {
		f.Breaker("k" + strconv.Itoa(i))
	}
	for _, k := range []string{"a", "b", "c"} {
		_, ok := f.Lookup(k)
		require.False(t, ok, "%s was dropped", k)
	}
	check("made again")

	w := f.Breaker("w").Config()
	assert.Equal(t, 100, w.WindowCalls, "a key's window")
	assert.Equal(t, 3, w.FailureThreshold, "beside the threshold the family gave")
	feed := reg.Family(br.Config{Name: "feed"}, br.FamilyConfig{})
	w = feed.Breaker("w").Config()
	assert.Equal(t, 100, w.WindowCalls)
	assert.Zero(t, w.FailureThreshold, "a window alone, as for any breaker: no default threshold")

	require.NoError(t, reg.Update(br.Config{Name: "quote", FailureThreshold: 4, HalfOpenMax: 2}))
	for i := range 30 {
		f.Breaker("u" + strconv.Itoa(i))
	}
	c := f.Breaker("c").Config()
	assert.Equal(t, 11, c.FailureThreshold, "made after an Update of the family: the key's own still wins")
	assert.Equal(t, 2, c.HalfOpenMax, "over the family's settings as updated")
	assert.Equal(t, 4, f.Breaker("a").Config().FailureThreshold)

	f.Breaker("r")
	f.Breaker("r")
	assert.Equal(t, 1, strings.Count(logs.String(), "breaker[quote/r]: ignoring its own rate limit"), logs.String())
	assert.Equal(t, []string{"BREAKER_QUOTES/Z_*"}, reg.Unmatched(), "a key's own settings match its family, live or not")
}

// churnOut makes n keys of f named prefix0, prefix1, … and checks that
// key was dropped for them.
func churnOut(t *testing.T, f *br.Family, key, prefix string, n int) {
	t.Helper()
	for i := range n {
		f.Breaker(prefix + strconv.Itoa(i))
	}
	_, ok := f.Lookup(key)
	require.False(t, ok, "%s was dropped", key)
}

// TestFamilyKeyOwnSettingsAfterAnUnrelatedUpdate: an Update of a family
// changes the settings its keys' own are laid over by the fields it
// gives only: a key's own window over a family that gave no threshold
// still trips on the window alone, and keeps the minimum of calls its
// window gives, when it is made again after an Update of HalfOpenMax.
// Before, the Update stored the family's settings with defaults as those
// the keys' own are laid over: the key made again got the default
// threshold 5 beside its window, and the family's minimum of calls (10)
// for its window of 100 (20).
func TestFamilyKeyOwnSettingsAfterAnUnrelatedUpdate(t *testing.T) {
	restore := br.SetEnviron([]string{"BREAKER_FEED/W_WINDOW=100", "BREAKER_FEED/W_FAILRATE=50%", "BREAKER_TICK/W_WINDOW=100"})
	defer restore()
	reg := br.NewRegistry(br.WithLogger(discardLogger()))
	feed := reg.Family(br.Config{Name: "feed"}, br.FamilyConfig{Keys: 4})
	tick := reg.Family(br.Config{Name: "tick", WindowCalls: 5}, br.FamilyConfig{Keys: 4})
	before := feed.Breaker("w").Config()
	require.Zero(t, before.FailureThreshold, "a window alone")
	beforeTick := tick.Breaker("w").Config()

	require.NoError(t, reg.Update(br.Config{Name: "feed", HalfOpenMax: 2}, br.Config{Name: "tick", HalfOpenMax: 2}))
	churnOut(t, feed, "w", "k", 20)
	churnOut(t, tick, "w", "k", 20)
	again := feed.Breaker("w").Config()
	assert.Equal(t, 100, again.WindowCalls)
	assert.Zero(t, again.FailureThreshold, "no layer gave a threshold: the window alone trips")
	assert.Equal(t, 2, again.HalfOpenMax, "the Update's field")
	againTick := tick.Breaker("w").Config()
	assert.Equal(t, beforeTick.MinimumCalls, againTick.MinimumCalls, "the minimum of the key's window")
}

// TestFamilyKeyOwnSettingsOverALiveUpdate: a key's own settings win over
// an Update of its family on its live breaker too, as on the breaker made
// again after it: one key, one threshold. Before, the live key took the
// Update's threshold (4) and the same key made again its own (11).
func TestFamilyKeyOwnSettingsOverALiveUpdate(t *testing.T) {
	restore := br.SetEnviron([]string{"BREAKER_QUOTE/E_THRESHOLD=9"})
	defer restore()
	reg := br.NewRegistry(br.WithLogger(discardLogger()),
		br.WithConfig(br.Config{Name: "quote/c", FailureThreshold: 11}))
	f := reg.Family(br.Config{Name: "quote", FailureThreshold: 3}, br.FamilyConfig{Keys: 4})
	require.Equal(t, 11, f.Breaker("c").Config().FailureThreshold)
	require.Equal(t, 9, f.Breaker("e").Config().FailureThreshold)

	require.NoError(t, reg.Update(br.Config{Name: "quote", FailureThreshold: 4, HalfOpenMax: 2}))
	for _, k := range []struct {
		key  string
		want int
	}{{"c", 11}, {"e", 9}} {
		live := f.Breaker(k.key).Config()
		assert.Equal(t, k.want, live.FailureThreshold, "%s live: its own threshold", k.key)
		assert.Equal(t, 2, live.HalfOpenMax, "%s live: the Update's other field", k.key)
	}
	assert.Equal(t, 4, f.Breaker("a").Config().FailureThreshold, "a key without its own: the Update's")

	require.NoError(t, reg.Update(br.Config{Name: "quote", FailureThreshold: 6}, br.Config{Name: "quote/c", FailureThreshold: 7}))
	assert.Equal(t, 7, f.Breaker("c").Config().FailureThreshold, "an Update of the key's name after the family's changes it")
	assert.Equal(t, 9, f.Breaker("e").Config().FailureThreshold)

	churnOut(t, f, "c", "k", 20)
	assert.Equal(t, 11, f.Breaker("c").Config().FailureThreshold, "made again: its own")
}

// BenchmarkFamilyNewKeySettings is BenchmarkFamilyNewKeyChurn (every
// call makes a key and drops one) on registries with no setting of a
// key (none), with settings of other keys only (other: the family looks
// for the key's own and finds none), and with a WithConfig of every key
// it makes (own): what a key's own settings cost a new key.
func BenchmarkFamilyNewKeySettings(b *testing.B) {
	const keys = 2000 // twice the bound: each call makes a key
	own := make([]br.Option, 0, keys)
	for i := range keys {
		own = append(own, br.WithConfig(br.Config{Name: "f/" + strconv.Itoa(i), FailureThreshold: 9}))
	}
	for _, c := range []struct {
		name string
		opts []br.Option
	}{
		{"none", nil},
		{"other", []br.Option{br.WithConfig(br.Config{Name: "f/other", FailureThreshold: 9})}},
		{"own", own},
	} {
		b.Run(c.name, func(b *testing.B) {
			f := quietRegistry(c.opts...).Family(br.Config{Name: "f"}, br.FamilyConfig{Keys: 1000})
			var i int64
			for b.Loop() {
				f.EnterInt(i % keys).Done()
				i++
			}
		})
	}
}
