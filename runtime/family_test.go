package runtime_test

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
	"weak"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	br "github.com/breakergen/breakergen/runtime"
)

var errKeyDown = errors.New("key down")

func failOn(b *br.Breaker) {
	_ = b.Do(context.Background(), func(context.Context) error { return errKeyDown })
}

func quietRegistry(opts ...br.Option) *br.Registry {
	return br.NewRegistry(append([]br.Option{br.WithLogger(discardLogger()), br.WithoutEnv()}, opts...)...)
}

func TestFamilyNamesEachKey(t *testing.T) {
	reg := quietRegistry()
	f := reg.Family(br.Config{Name: "quote", FailureThreshold: 1}, br.FamilyConfig{Keys: 10})
	failOn(f.Breaker("600519"))
	b, ok := reg.Lookup("quote/600519")
	require.True(t, ok, "the key's breaker is in the registry")
	assert.Equal(t, br.Open, b.State())
	assert.Equal(t, br.Closed, f.Breaker("000001").State(), "another key is not touched")
	ev := reg.Events(1)
	require.Len(t, ev, 1)
	assert.Equal(t, "quote/600519", ev[0].Source)
	k := f.EnterInt(42)
	assert.Equal(t, "quote/42", k.Breaker().Name())
	k.Done()
}

func TestFamilyDropsLeastRecentlyUsedClosed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := quietRegistry()
		f := reg.Family(br.Config{Name: "f"}, br.FamilyConfig{Keys: 3})
		f.Breaker("a")
		f.Breaker("b")
		f.Breaker("c")
		f.Breaker("a") // a is now more recent than b
		f.Breaker("d")
		_, ok := reg.Lookup("f/b")
		assert.False(t, ok, "b, the least recently used, was dropped")
		for _, k := range []string{"a", "c", "d"} {
			_, ok := reg.Lookup("f/" + k)
			assert.True(t, ok, k)
		}
		assert.Equal(t, 3, f.Len())
		assert.Equal(t, uint64(1), f.Health().Dropped)
	})
}

func TestFamilyKeepsOpenUntilItsPeriodEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := quietRegistry()
		f := reg.Family(br.Config{Name: "f", FailureThreshold: 1, ResetTimeout: 10 * time.Second}, br.FamilyConfig{Keys: 1})
		failOn(f.Breaker("dead"))
		f.Breaker("x") // over the bound: dead is OPEN, x is in flight while it enters
		b, ok := reg.Lookup("f/dead")
		require.True(t, ok, "an OPEN key is never dropped")
		assert.Equal(t, br.Open, b.State())
		f.Breaker("y") // x is CLOSED and idle: it goes
		_, ok = reg.Lookup("f/x")
		assert.False(t, ok)
		assert.Equal(t, 2, f.Len(), "over the bound while the OPEN key cannot go")
		time.Sleep(10 * time.Second) // the OPEN period ends: HALF_OPEN
		synctest.Wait()
		f.Breaker("z") // y (CLOSED) goes first, then the HALF_OPEN one
		_, ok = reg.Lookup("f/y")
		assert.False(t, ok)
		_, ok = reg.Lookup("f/dead")
		assert.False(t, ok, "after its OPEN period a key may be dropped")
		assert.Equal(t, 1, f.Len(), "back within the bound")
		assert.Equal(t, uint64(3), f.Health().Dropped)
	})
}

func TestFamilyKeepsKeysWithCallsInFlight(t *testing.T) {
	reg := quietRegistry()
	f := reg.Family(br.Config{Name: "f"}, br.FamilyConfig{Keys: 1})
	a := f.Enter("a")
	f.Breaker("b")
	_, ok := reg.Lookup("f/a")
	assert.True(t, ok, "a call is in flight on a")
	a.Done()
	f.Breaker("c")
	_, ok = reg.Lookup("f/a")
	assert.False(t, ok, "once its call ended a may go")
	assert.Equal(t, a.Breaker(), a.Breaker(), "the dropped breaker stays usable by a caller holding it")
}

func TestFamilyMaxOpen(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := quietRegistry()
		f := reg.Family(br.Config{Name: "f", FailureThreshold: 1}, br.FamilyConfig{Keys: 10, MaxOpen: 20})
		for i := range 10 {
			f.Breaker(strconv.Itoa(i))
		}
		failOn(f.Breaker("0"))
		failOn(f.Breaker("1"))
		failOn(f.Breaker("2")) // 20% of 10 keys: two may be OPEN
		assert.Equal(t, br.Open, f.Breaker("0").State())
		assert.Equal(t, br.Open, f.Breaker("1").State())
		assert.Equal(t, br.Closed, f.Breaker("2").State(), "past maxopen the key stays CLOSED")
		assert.Zero(t, f.Breaker("2").Stats().ConsecutiveFailures, "with a fresh count")
		ev := reg.Events(1)[0]
		assert.Equal(t, "f/2", ev.Source)
		assert.Equal(t, br.Closed, ev.From)
		assert.Equal(t, br.Closed, ev.To)
		assert.Contains(t, ev.Reason, "maxopen 20%")
		assert.Contains(t, ev.Reason, "key down")
		h := f.Health()
		assert.Equal(t, 2, h.Open)
		assert.Equal(t, uint64(1), h.KeptShut)
	})
}

// TestFamilyMaxOpenWhenKeysFailAtOnce: every key of a family fails at the
// same moment, the outage maxopen is for, each on a goroutine of its own:
// no more keys than maxopen allows go OPEN, and the family's counts agree
// with the keys' states.
func TestFamilyMaxOpenWhenKeysFailAtOnce(t *testing.T) {
	const keys, allowed = 100, 10 // maxopen 10% of 100 keys
	for round := range 20 {
		reg := quietRegistry()
		f := reg.Family(br.Config{Name: "f", FailureThreshold: 1}, br.FamilyConfig{Keys: keys, MaxOpen: 10})
		bs := make([]*br.Breaker, keys)
		for i := range bs {
			bs[i] = f.Breaker(strconv.Itoa(i))
		}
		var start, wg sync.WaitGroup
		start.Add(1)
		for _, b := range bs {
			wg.Go(func() {
				start.Wait()
				failOn(b)
			})
		}
		start.Done()
		wg.Wait()
		open := 0
		for _, b := range bs {
			if b.State() == br.Open {
				open++
			}
		}
		h := f.Health()
		require.Equal(t, allowed, open, "round %d: keys OPEN", round)
		require.Equal(t, open, h.Open, "round %d: the family's count", round)
		require.Equal(t, uint64(keys-allowed), h.KeptShut, "round %d: trips kept CLOSED", round)
	}
}

// TestFamilyMaxOpenAfterReset: a key reset while OPEN gives its share of
// maxopen back, so that another key may trip.
func TestFamilyMaxOpenAfterReset(t *testing.T) {
	reg := quietRegistry()
	f := reg.Family(br.Config{Name: "f", FailureThreshold: 1}, br.FamilyConfig{Keys: 10, MaxOpen: 10})
	a, b := f.Breaker("a"), f.Breaker("b")
	failOn(a)
	require.Equal(t, br.Open, a.State())
	a.Reset()
	assert.Zero(t, f.Health().Open, "a is CLOSED again")
	failOn(b)
	assert.Equal(t, br.Open, b.State(), "a's share is b's to take")
}

// TestFamilyMaxOpenHoldsForPeerNotes: a fleet's trip notes open a family's
// keys under the same maxopen as their own trips (SPEC §15): a note for a
// key past the family's share leaves it CLOSED, with its own counts, and
// the log says why.
func TestFamilyMaxOpenHoldsForPeerNotes(t *testing.T) {
	reg := quietRegistry()
	f := reg.Family(br.Config{Name: "f", FailureThreshold: 3}, br.FamilyConfig{Keys: 10, MaxOpen: 20})
	for i := range 10 {
		f.Breaker(strconv.Itoa(i))
	}
	require.True(t, f.Breaker("0").PeerOpen("peer-1", "boom", time.Minute))
	require.True(t, f.Breaker("1").PeerOpen("peer-1", "boom", time.Minute))
	two := f.Breaker("2")
	require.Error(t, two.Do(context.Background(), func(context.Context) error { return errors.New("down") }))
	assert.False(t, two.PeerOpen("peer-1", "boom", time.Minute), "20% of 10 keys: two may be OPEN")
	assert.Equal(t, br.Closed, two.State())
	assert.Equal(t, 1, two.Stats().ConsecutiveFailures, "its own count is kept")
	ev := reg.Events(1)[0]
	assert.Equal(t, "f/2", ev.Source)
	assert.Equal(t, br.Closed, ev.To)
	assert.Contains(t, ev.Reason, "maxopen 20%")
	assert.Contains(t, ev.Reason, "peer peer-1: boom")
	h := f.Health()
	assert.Equal(t, 2, h.Open)
	assert.Equal(t, uint64(1), h.KeptShut)
	f.Breaker("0").PeerClose("peer-1", "probe ok")
	assert.True(t, two.PeerOpen("peer-1", "boom", time.Minute), "0's share is 2's to take")
	assert.Equal(t, 2, f.Health().Open)
}

// TestFamilyUpdateWhileKeysDrop: Update reads a family's live keys while
// calls make new keys and drop old ones past the bound: it neither panics
// nor races.
func TestFamilyUpdateWhileKeysDrop(t *testing.T) {
	reg := quietRegistry()
	f := reg.Family(br.Config{Name: "f", FailureThreshold: 5}, br.FamilyConfig{Keys: 8})
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				_ = f.Breaker(strconv.Itoa(g*1_000_000+i)).Do(context.Background(), func(context.Context) error { return nil })
			}
		})
	}
	for i := range 4000 { // a drop's window is narrow: many Updates, under -race
		require.NoError(t, reg.Update(br.Config{Name: "f", FailureThreshold: 5 + i%2}))
	}
	close(stop)
	wg.Wait()
	assert.Equal(t, 6, f.Config().FailureThreshold)
}

func TestFamilyMaxOpenLetsTheFirstKeyTrip(t *testing.T) {
	reg := quietRegistry()
	f := reg.Family(br.Config{Name: "f", FailureThreshold: 1}, br.FamilyConfig{MaxOpen: 10})
	failOn(f.Breaker("only"))
	assert.Equal(t, br.Open, f.Breaker("only").State(), "at least one key may be OPEN")
}

func TestFamilyInHealthJSON(t *testing.T) {
	reg := quietRegistry()
	f := reg.Family(br.Config{Name: "f"}, br.FamilyConfig{Keys: 1})
	f.Breaker("a")
	f.Breaker("b")
	raw, err := json.Marshal(reg.Health())
	require.NoError(t, err)
	var h struct {
		Families []map[string]any `json:"families"`
		Breakers []struct {
			Name string `json:"name"`
		} `json:"breakers"`
	}
	require.NoError(t, json.Unmarshal(raw, &h))
	require.Len(t, h.Families, 1)
	assert.Equal(t, "f", h.Families[0]["name"])
	assert.EqualValues(t, 1, h.Families[0]["dropped"])
	assert.EqualValues(t, 1, h.Families[0]["keys"])
	require.Len(t, h.Breakers, 1)
	assert.Equal(t, "f/b", h.Breakers[0].Name)
}

func TestFamilyLiveKeyAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under -race: make allocs runs this test without it")
	}
	reg := quietRegistry()
	f := reg.Family(br.Config{Name: "f"}, br.FamilyConfig{})
	f.Breaker("600519")
	f.EnterInt(600519).Done()
	assert.Zero(t, testing.AllocsPerRun(100, func() { f.Enter("600519").Done() }))
	assert.Zero(t, testing.AllocsPerRun(100, func() { f.EnterInt(600519).Done() }))
}

func TestFamilyAllocatedHeapStaysBounded(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("a million keys: too slow under -race or -short")
	}
	reg := quietRegistry()
	f := reg.Family(br.Config{Name: "f"}, br.FamilyConfig{Keys: 1000})
	var ms runtime.MemStats
	heapAfter := func(n, from int) uint64 {
		for i := from; i < from+n; i++ {
			f.EnterInt(int64(i)).Done()
		}
		runtime.GC()
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	first := heapAfter(100_000, 0)
	last := heapAfter(900_000, 100_000)
	t.Logf("heap after 100,000 keys: %d KiB; after 1,000,000: %d KiB; live %d, dropped %d",
		first>>10, last>>10, f.Len(), f.Health().Dropped)
	assert.Equal(t, 1000, f.Len())
	assert.Equal(t, uint64(999_000), f.Health().Dropped)
	assert.Less(t, last, first+8<<20, "the heap does not grow with the keys seen")
}

// TestFamilyDroppedCellLetsGo: a dropped key's cell stays in its chunk of
// cells, which the live keys of that chunk keep alive; it must not keep
// the dropped key's breaker alive with it, or a family whose few
// long-lived keys sit among many dropped ones would hold every dropped
// breaker (with a wrapper's route, over a kilobyte each).
func TestFamilyDroppedCellLetsGo(t *testing.T) {
	reg := quietRegistry()
	f := reg.Family(br.Config{Name: "f"}, br.FamilyConfig{Keys: 2})
	hot := f.Enter("hot") // in flight: never dropped, and its chunk stays
	defer hot.Done()
	var dropped []weak.Pointer[br.Breaker]
	for i := range 40 {
		dropped = append(dropped, weak.Make(f.Breaker("k"+strconv.Itoa(i))))
	}
	require.Equal(t, 2, f.Len())
	require.Equal(t, uint64(39), f.Health().Dropped)
	runtime.GC()
	runtime.GC()
	alive := 0
	for _, w := range dropped[:39] { // the last key is live
		if w.Value() != nil {
			alive++
		}
	}
	assert.Zero(t, alive, "dropped keys' breakers still reachable")
	assert.NotNil(t, hot.Breaker(), "the key in flight lost its breaker")
}

// TestFamilyCountsRaceTheDrop: calls on many goroutines enter and leave
// the keys of a small family while new keys force drops, so that the
// family's drop of a key races the calls that count themselves in and
// out of it (runtime/family.go, Family.hold). A key held by a call is never
// dropped: its breaker stays the registry's for as long as the call
// holds it. And no count is lost: once the calls end, every key can be
// dropped, which a leaked count would forbid.
func TestFamilyCountsRaceTheDrop(t *testing.T) {
	reg := quietRegistry()
	f := reg.Family(br.Config{Name: "race"}, br.FamilyConfig{Keys: 8})
	workers, rounds := 4, 4000
	if raceEnabled {
		rounds = 500
	}
	var wg sync.WaitGroup
	errs := make(chan string, workers)
	for w := range workers {
		wg.Go(func() {
			for i := range rounds {
				key := "k" + strconv.Itoa((i*7+w)%24)
				k := f.Enter(key)
				b := k.Breaker()
				if got, ok := reg.Lookup("race/" + key); !ok || got != b {
					errs <- "a held key was dropped: " + key
					k.Done()
					return
				}
				k.Done()
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	// Every count is back to zero: 8 new keys drop every old one.
	for i := range 8 {
		f.Enter("new" + strconv.Itoa(i)).Done()
	}
	assert.Equal(t, 8, f.Len())
	for i := range 24 {
		if _, ok := f.Lookup("k" + strconv.Itoa(i)); ok {
			t.Errorf("key k%d is still live: a count was lost", i)
		}
	}
}

// TestFamilyPropertyNoOpenKeyDropped drives a family with random calls
// (answered at once or held in flight), trips, operator modes, time and
// the evictions that new keys cause, and checks after every step that no
// breaker was dropped while it was OPEN (its OPEN period not over), in an
// operator's mode or with a call in flight, and that the family is within
// its bound whenever a CLOSED idle key could have gone, with bounds of 1
// to 6 keys and of 32 to 34 (where scans for victims are skipped after
// one found none). It runs 200 sequences of up to 300 steps by default,
// like TestOperatorsMatchModel (-rapid.checks and -rapid.steps to change).
func TestFamilyPropertyNoOpenKeyDropped(t *testing.T) {
	for name, n := range map[string]string{"rapid.checks": "200", "rapid.steps": "300"} {
		if f := flag.Lookup(name); f != nil && f.Value.String() == f.DefValue {
			_ = f.Value.Set(n)
			defer func() { _ = f.Value.Set(f.DefValue) }()
		}
	}
	rapid.Check(t, func(rt *rapid.T) {
		clock := newFakeClock()
		reg := quietRegistry(br.WithClock(clock))
		// Small bounds, or bounds past 31, where the family skips scans for
		// victims after one that found none (famStarved) and the clock of
		// uses moves every other new key.
		large := rapid.Bool().Draw(rt, "large")
		limit, keys, tick := rapid.IntRange(1, 6).Draw(rt, "keys"), 12, 2*time.Second
		if large {
			limit, keys, tick = rapid.IntRange(32, 34).Draw(rt, "keys"), 70, time.Millisecond
		}
		maxOpen := rapid.SampledFrom([]int{0, 50, 100}).Draw(rt, "maxopen")
		f := reg.Family(br.Config{Name: "f", FailureThreshold: rapid.IntRange(1, 2).Draw(rt, "threshold"),
			ResetTimeout: 10 * time.Second}, br.FamilyConfig{Keys: limit, MaxOpen: maxOpen})
		ctx := context.Background()
		type held struct {
			key br.FamilyKey
			tok br.Token
		}
		var inflight []held
		key := func(rt *rapid.T) string { return strconv.Itoa(rapid.IntRange(0, keys).Draw(rt, "key")) }
		last := "" // the key of the last call when it made the key (and evicted), in flight meanwhile
		enter := func(rt *rapid.T) br.FamilyKey {
			k := key(rt)
			if _, live := reg.Lookup("f/" + k); live {
				last = ""
			} else {
				last = k
			}
			return f.Enter(k)
		}

		// protected are the live breakers that must not go, with why.
		protected := func() map[*br.Breaker]string {
			out := map[*br.Breaker]string{}
			for _, b := range reg.Breakers() {
				switch st := b.State(); st {
				case br.Open, br.Isolated, br.Bypassed:
					out[b] = st.String()
				}
			}
			for _, h := range inflight {
				out[h.key.Breaker()] = "a call in flight"
			}
			return out
		}
		before := protected()
		check := func(rt *rapid.T) {
			for b, why := range before {
				got, ok := reg.Lookup(b.Name())
				if still := b.State(); (still == br.Open || still.String() == why || why == "a call in flight") && (!ok || got != b) {
					rt.Fatalf("%s dropped while %s (now %v)", b.Name(), why, still)
				}
			}
			before = protected()
			if f.Len() > limit && last != "" {
				for _, b := range reg.Breakers() {
					if st := b.State(); (st == br.Closed || st == br.HalfOpen) && before[b] == "" && b.Name() != "f/"+last {
						rt.Fatalf("%d keys live, bound %d, and %s (%v, idle) could have gone", f.Len(), limit, b.Name(), st)
					}
				}
			}
		}
		outcome := func(rt *rapid.T) error {
			if rapid.Bool().Draw(rt, "fail") {
				return errKeyDown
			}
			return nil
		}
		rt.Repeat(map[string]func(*rapid.T){
			"call": func(rt *rapid.T) {
				k := enter(rt)
				if tok, err := k.Breaker().Acquire(ctx); err == nil {
					k.Breaker().Release(tok, outcome(rt))
				}
				k.Done()
				check(rt)
			},
			"hold": func(rt *rapid.T) {
				k := enter(rt)
				tok, err := k.Breaker().Acquire(ctx)
				if err != nil {
					k.Done()
				} else {
					inflight = append(inflight, held{k, tok})
				}
				check(rt)
			},
			"answer": func(rt *rapid.T) {
				if len(inflight) == 0 {
					rt.Skip("nothing in flight")
				}
				i := rapid.IntRange(0, len(inflight)-1).Draw(rt, "held")
				h := inflight[i]
				inflight = append(inflight[:i], inflight[i+1:]...)
				h.key.Breaker().Release(h.tok, outcome(rt))
				h.key.Done()
				last = ""
				check(rt)
			},
			"time": func(rt *rapid.T) {
				clock.Advance(time.Duration(rapid.IntRange(1, 6).Draw(rt, "dt")) * tick)
				last = ""
				check(rt)
			},
			"operator": func(rt *rapid.T) {
				b, ok := reg.Lookup("f/" + key(rt))
				if !ok {
					rt.Skip("not live")
				}
				switch rapid.IntRange(0, 2).Draw(rt, "mode") {
				case 0:
					b.Isolate("test")
				case 1:
					b.Bypass("test")
				default:
					b.Resume("test")
				}
				last = ""
				check(rt)
			},
		})
	})
}

func TestFamilyNeverDropsAnIsolatedKey(t *testing.T) {
	reg := quietRegistry()
	f := reg.Family(br.Config{Name: "f"}, br.FamilyConfig{Keys: 2})
	f.Breaker("iso").Isolate("maintenance")
	f.Breaker("byp").Bypass("debugging")
	for i := range 10 {
		f.Breaker(strconv.Itoa(i))
	}
	for _, k := range []string{"iso", "byp"} {
		b, ok := reg.Lookup("f/" + k)
		require.True(t, ok, "%s is in an operator's mode: never dropped", k)
		assert.NotEqual(t, br.Closed, b.State())
	}
	assert.Equal(t, 3, f.Len(), "the two in a mode and the newest")
	assert.Zero(t, f.Health().Open, "a mode is not OPEN for maxopen")
	f.Breaker("iso").Resume("done")
	f.Breaker("byp").Resume("done")
	f.Breaker("x")
	assert.Equal(t, 2, f.Len(), "once resumed they may go again")
}

func TestFamilyUpdateAppliesToLiveAndLaterKeys(t *testing.T) {
	reg := quietRegistry()
	f := reg.Family(br.Config{Name: "quote", FailureThreshold: 5}, br.FamilyConfig{Keys: 10})
	a := f.Breaker("a")
	require.NoError(t, reg.Update(br.Config{Name: "quote", FailureThreshold: 2, ResetTimeout: time.Minute}))
	assert.Equal(t, 2, a.Config().FailureThreshold, "a live key")
	assert.Equal(t, time.Minute, a.Config().ResetTimeout)
	ev := reg.Events(1)
	require.Len(t, ev, 1)
	assert.Equal(t, "quote/a", ev[0].Source)
	assert.Contains(t, ev[0].Reason, "threshold 5→2")
	assert.Equal(t, 2, f.Breaker("b").Config().FailureThreshold, "a key made later")
	assert.Equal(t, "quote", f.Config().Name)
	assert.Equal(t, 2, f.Config().FailureThreshold)

	require.NoError(t, reg.Update(br.Config{Name: "quote/b", FailureThreshold: 7}), "one key's breaker alone")
	assert.Equal(t, 7, f.Breaker("b").Config().FailureThreshold)
	assert.Equal(t, 2, a.Config().FailureThreshold)

	err := reg.Update(br.Config{Name: "quote", FailureThreshold: 3}, br.Config{Name: "quote", WindowCalls: 5})
	require.Error(t, err, "a bad Config refuses the whole Update, for a family as for a breaker")
	assert.Contains(t, err.Error(), `Config 1 (Name "quote")`)
	assert.Equal(t, 2, a.Config().FailureThreshold, "all or nothing")
	assert.Equal(t, 2, f.Config().FailureThreshold)

	require.NoError(t, reg.Update(br.Config{Name: "quote", WindowCalls: 10}), "a change of shape applies to a family's keys")
	assert.Equal(t, 10, a.Config().WindowCalls, "a live key")
	assert.Equal(t, 10, f.Breaker("c").Config().WindowCalls, "a key made later")
	assert.Equal(t, 10, f.Config().WindowCalls)
}

func TestFamilyUpdateLowersTheThresholdOfAnOpenKey(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := quietRegistry()
		f := reg.Family(br.Config{Name: "f", FailureThreshold: 1, ResetTimeout: 10 * time.Second}, br.FamilyConfig{Keys: 1})
		failOn(f.Breaker("dead"))
		require.NoError(t, reg.Update(br.Config{Name: "f", ResetTimeout: time.Minute}))
		b, _ := reg.Lookup("f/dead")
		assert.Equal(t, br.Open, b.State(), "an OPEN key keeps its state and its window")
		time.Sleep(10 * time.Second)
		synctest.Wait()
		assert.Equal(t, br.HalfOpen, b.State(), "the period under way keeps its 10s")
	})
}

func TestFamilyIntegerAndStringFormsAreOneKey(t *testing.T) {
	reg := quietRegistry()
	f := reg.Family(br.Config{Name: "f"}, br.FamilyConfig{Keys: 10})
	b := f.Breaker("42")
	k := f.EnterInt(42)
	assert.Same(t, b, k.Breaker())
	k.Done()
	u := f.EnterUint(42)
	assert.Same(t, b, u.Breaker())
	u.Done()
	n := f.EnterInt(-7)
	assert.Same(t, n.Breaker(), f.Breaker("-7"))
	n.Done()
	big := f.EnterUint(1 << 63)
	assert.Equal(t, "f/9223372036854775808", big.Breaker().Name())
	assert.NotSame(t, big.Breaker(), f.EnterInt(-1<<63).Breaker(), "the same bits, another key")
	big.Done()
	assert.NotSame(t, b, f.Breaker("042"), "not an integer's decimal form: a key of its own")
	assert.Equal(t, 5, f.Len(), "42, -7, 1<<63, -1<<63 and 042")
}

func TestFamilyManyKeysStayFindable(t *testing.T) {
	reg := quietRegistry()
	f := reg.Family(br.Config{Name: "f"}, br.FamilyConfig{Keys: 5000})
	got := map[string]*br.Breaker{}
	for i := range 5000 {
		k := "k" + strconv.Itoa(i)
		got[k] = f.Breaker(k)
	}
	for k, b := range got {
		require.Same(t, b, f.Breaker(k), k)
	}
	for i := range 20_000 { // churn: tombstones, rebuilds
		f.EnterInt(int64(i)).Done()
	}
	assert.Equal(t, 5000, f.Len())
	dropped := f.Health().Dropped
	// The clock of uses moves once every 5000/16 new keys: the most
	// recent 5000 less that many are live for sure.
	for i := 15_000 + 5000/16; i < 20_000; i++ {
		b := f.EnterInt(int64(i))
		require.Equal(t, "f/"+strconv.Itoa(i), b.Breaker().Name())
		b.Done()
	}
	assert.Equal(t, dropped, f.Health().Dropped, "every one of them was live")
}

// TestFamilyConcurrentChurn: goroutines entering keys of one family at
// once, string and integer forms mixed, while new keys evict old ones:
// every hold is on the key asked for, and the family ends within its
// bound (-race checks the table's publication).
func TestFamilyConcurrentChurn(t *testing.T) {
	reg := quietRegistry()
	f := reg.Family(br.Config{Name: "f"}, br.FamilyConfig{Keys: 50})
	var wg sync.WaitGroup
	errs := make(chan string, 4)
	for g := range 4 {
		wg.Go(func() {
			for i := range 3000 {
				n := (i*7 + g*13) % 200
				var k br.FamilyKey
				if i%2 == 0 {
					k = f.Enter(strconv.Itoa(n))
				} else {
					k = f.EnterInt(int64(n))
				}
				if want := "f/" + strconv.Itoa(n); k.Breaker().Name() != want {
					errs <- k.Breaker().Name() + " for " + want
				}
				k.Done()
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	f.Breaker("last") // an eviction with no call in flight elsewhere
	assert.LessOrEqual(t, f.Len(), 50)
	assert.Equal(t, f.Len(), len(reg.Breakers()), "the registry holds the live keys' breakers only")
}

func TestFamilyFirstSettingsOfANameWin(t *testing.T) {
	var logs logBuffer
	reg := br.NewRegistry(br.WithLogger(logs.logger()), br.WithoutEnv())
	f := reg.Family(br.Config{Name: "f", FailureThreshold: 2}, br.FamilyConfig{Keys: 10})
	assert.Same(t, f, reg.Family(br.Config{Name: "f", FailureThreshold: 2}, br.FamilyConfig{Keys: 10}))
	assert.NotContains(t, logs.String(), "already exists")
	assert.Same(t, f, reg.Family(br.Config{Name: "f", FailureThreshold: 9}, br.FamilyConfig{Keys: 10}))
	assert.Contains(t, logs.String(), "family[f] already exists with other settings; keeping the first")
	assert.Equal(t, 2, f.Breaker("k").Config().FailureThreshold)
	assert.Len(t, reg.Health().Families, 1)
}

// TestFamilyKeysOfEveryLength: keys of 0 to 40 bytes, and for each the
// keys that differ from it in one byte, are each their own key (the
// lookup hashes and compares short keys by words).
func TestFamilyKeysOfEveryLength(t *testing.T) {
	reg := quietRegistry()
	f := reg.Family(br.Config{Name: "f"}, br.FamilyConfig{Keys: 100_000})
	seen := map[string]*br.Breaker{}
	for n := range 41 {
		base := strings.Repeat("k", n)
		keys := []string{base}
		for i := range n {
			keys = append(keys, base[:i]+"x"+base[i+1:])
		}
		for _, k := range keys {
			seen[k] = f.Breaker(k)
		}
	}
	for k, b := range seen {
		require.Same(t, b, f.Breaker(k), "%q", k)
		require.Equal(t, "f/"+k, b.Name())
	}
	assert.Equal(t, len(seen), f.Len())
}

func TestFamilyEnvModeReachesEveryKey(t *testing.T) {
	restore := br.SetEnviron([]string{"BREAKER_QUOTE_MODE=isolate"})
	defer restore()
	reg := br.NewRegistry(br.WithLogger(discardLogger()))
	f := reg.Family(br.Config{Name: "quote"}, br.FamilyConfig{Keys: 1})
	a := f.Breaker("a")
	assert.Equal(t, br.Isolated, a.State(), "a key made under the family's mode starts in it")
	assert.Equal(t, "isolated by operator: BREAKER_QUOTE_MODE=isolate", reg.Events(1)[0].Reason)
	a.Resume("checked")
	assert.Equal(t, br.Closed, f.Breaker("a").State(), "a live key the operator resumed stays resumed")
	assert.Equal(t, br.Isolated, f.Breaker("b").State())
}

// TestFamilyEnvModeResumeLastsWhileLive: an operator's Resume of a key
// BREAKER_<FAMILY>_MODE isolated lasts while the key is live: the resumed
// key is CLOSED, so the family may drop it, and its next breaker starts
// in the variable's mode again (SPEC §14: the mode is set when the
// breaker is created), as docs/keys.md says. Keeping the Resume would
// take memory for every key resumed, without a bound. ModeFromEnv tells
// the variable's mode from an operator's.
func TestFamilyEnvModeResumeLastsWhileLive(t *testing.T) {
	restore := br.SetEnviron([]string{"BREAKER_QUOTE_MODE=isolate"})
	defer restore()
	reg := br.NewRegistry(br.WithLogger(discardLogger()))
	f := reg.Family(br.Config{Name: "quote"}, br.FamilyConfig{Keys: 4})
	a := f.Breaker("a")
	assert.True(t, a.ModeFromEnv())
	a.Resume("this key is fine")
	assert.False(t, a.ModeFromEnv(), "in no mode")
	assert.Equal(t, br.Closed, f.Breaker("a").State())
	for i := range 20 {
		f.Breaker("k" + strconv.Itoa(i))
	}
	_, ok := f.Lookup("a")
	require.False(t, ok, "the resumed key was dropped")
	again := f.Breaker("a")
	assert.Equal(t, br.Isolated, again.State(), "made again: in the variable's mode")
	assert.True(t, again.ModeFromEnv())
	again.Isolate("by hand")
	assert.False(t, again.ModeFromEnv(), "the operator's mode now")
	assert.False(t, reg.Breaker(br.Config{Name: "plain"}).ModeFromEnv(), "no mode at all")
}

// TestFamilyClassifier: a classifier given for a family's name judges its
// keys' calls, as WithConfig's settings reach them; a key's own wins.
func TestFamilyClassifier(t *testing.T) {
	ignore := func(context.Context, error) br.Outcome { return br.Ignored }
	fail := func(context.Context, error) br.Outcome { return br.Failure }
	reg := quietRegistry(br.WithClassifier("kf", ignore), br.WithClassifier("kf/b", fail))
	f := reg.Family(br.Config{Name: "kf", FailureThreshold: 1}, br.FamilyConfig{})
	a, b := f.Breaker("a"), f.Breaker("b")
	failOn(a)
	failOn(b)
	assert.Equal(t, br.Closed, a.State(), "the family's classifier ignored the error")
	assert.Equal(t, uint64(1), a.Stats().Ignored)
	assert.Equal(t, br.Open, b.State(), "the key's own classifier wins")
	plain := reg.Breaker(br.Config{Name: "kfx", FailureThreshold: 1})
	failOn(plain)
	assert.Equal(t, br.Open, plain.State(), "a name that only starts like the family's is not its key")

	// Families made in code may nest by name: a key takes its own family's.
	nested := quietRegistry(br.WithClassifier("api", fail), br.WithClassifier("api/v1", ignore))
	nested.Family(br.Config{Name: "api", FailureThreshold: 1}, br.FamilyConfig{})
	v1 := nested.Family(br.Config{Name: "api/v1", FailureThreshold: 1}, br.FamilyConfig{})
	k := v1.Breaker("users")
	failOn(k)
	assert.Equal(t, br.Closed, k.State(), "api/v1's classifier, not api's")
}

// TestFamilyEnvModeKeysStayBounded: BREAKER_<FAMILY>_MODE puts every new
// key in the mode, and a key in a mode the environment gave it as it was
// made may be dropped, since it comes back in the same mode: the family
// stays within its bound (it grew without one: each key isolated, none
// ever dropped). A mode set by hand is the operator's decision, and that
// key is never dropped.
func TestFamilyEnvModeKeysStayBounded(t *testing.T) {
	restore := br.SetEnviron([]string{"BREAKER_ENVQ_MODE=isolate"})
	defer restore()
	reg := br.NewRegistry(br.WithLogger(discardLogger()))
	f := reg.Family(br.Config{Name: "envq"}, br.FamilyConfig{Keys: 50})
	first := f.Breaker("first")
	require.Equal(t, br.Isolated, first.State())
	hand := f.Breaker("hand")
	hand.Isolate("by hand")
	for i := range 1000 {
		require.Equal(t, br.Isolated, f.Breaker("k"+strconv.Itoa(i)).State())
	}
	assert.LessOrEqual(t, f.Len(), 50, "live keys")
	assert.GreaterOrEqual(t, f.Health().Dropped, uint64(950), "drops")
	got, ok := reg.Lookup("envq/hand")
	assert.True(t, ok && got == hand, "the key isolated by hand stays")
	_, ok = reg.Lookup("envq/first")
	require.False(t, ok, "the first key, isolated by the environment, was dropped")
	assert.Equal(t, br.Isolated, f.Breaker("first").State(), "and comes back isolated")
}

// TestFamilyBusyKeysGoOnceIdle: when every key had a call in flight as
// the family passed its bound, its scan for victims found none; once the
// calls end, the next new key drops idle CLOSED keys down to the bound,
// although no key moved (the family, skipping scans after one that found
// nothing, held up to max(Keys, live)/16 keys too many: 1,062 at a bound
// of 1,000).
func TestFamilyBusyKeysGoOnceIdle(t *testing.T) {
	for _, limit := range []int{6, 64, 1000} {
		reg := quietRegistry()
		f := reg.Family(br.Config{Name: "busy"}, br.FamilyConfig{Keys: limit})
		var held []br.FamilyKey
		for i := range limit + 1 {
			held = append(held, f.Enter("k"+strconv.Itoa(i)))
		}
		for _, k := range held {
			k.Done()
		}
		for i := range max(limit/16, 2) {
			f.Breaker("new" + strconv.Itoa(i))
			if n := f.Len(); n > limit {
				t.Fatalf("bound %d: %d keys live after new key %d, with idle CLOSED keys to drop", limit, n, i+1)
			}
		}
	}
}
