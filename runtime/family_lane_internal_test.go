package runtime

import (
	goruntime "runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/breakergen/breakergen/runtime/internal/core"
)

// laneCounts returns e's counts: [0] the cell's Inflight, [p+1] P p's lane.
func laneCounts(e *famEntry) []int32 {
	c := []int32{e.Inflight.Load()}
	for p := range famLaneN {
		c = append(c, atomic.LoadInt32(laneOf(e, p)))
	}
	return c
}

// TestFamilyHoldCountsOnItsTag: a hold counts one on exactly the counter
// its tag names (the cell for tag 0, lane tag-1 otherwise), a hold that
// finds the key dying takes its one off that same counter, and the end,
// on another goroutine, takes it off that counter too: each counter
// alone counts its calls, never below zero, which is what lets the
// family's sum of them, read one by one, stand for the calls in flight.
func TestFamilyHoldCountsOnItsTag(t *testing.T) {
	reg := NewRegistry(WithoutEnv())
	f := reg.Family(Config{Name: "tags"}, FamilyConfig{Keys: 4})
	k := f.Enter("a")
	e := untag(k.h)
	k.Done()
	for i := range 200 {
		before := laneCounts(e)
		h := f.hold(e)
		if h == nil || untag(h) != e {
			t.Fatalf("round %d: hold %p on cell %p", i, h, e)
		}
		tag := int(uintptr(h) & 63)
		if tag > famTagN {
			t.Fatalf("round %d: tag %d past famTagN %d", i, tag, famTagN)
		}
		want := slices.Clone(before)
		want[tag]++
		if got := laneCounts(e); !slices.Equal(got, want) {
			t.Fatalf("round %d: hold tagged %d counts %v, want %v", i, tag, got, want)
		}
		done := make(chan struct{})
		go func() { FamilyKey{h}.Done(); close(done) }()
		<-done
		if got := laneCounts(e); !slices.Equal(got, before) {
			t.Fatalf("round %d: after the end of hold tagged %d: %v, want %v", i, tag, got, before)
		}
		goruntime.Gosched()
	}
	e.Dead.Store(core.KeyDying)
	before := laneCounts(e)
	if f.hold(e) != nil {
		t.Fatal("a dying key admitted a call")
	}
	if got := laneCounts(e); !slices.Equal(got, before) {
		t.Fatalf("a refused call moved the counts: %v, want %v", got, before)
	}
	e.Dead.Store(0)
}

// TestFamilyHoldEndsOnAnotherP: holds begun on one goroutine end on
// another (as a hedged call's may), so that many end on another P than
// they began on; every lane and the cell stay at zero or above
// throughout, and are all zero at the end.
func TestFamilyHoldEndsOnAnotherP(t *testing.T) {
	if goruntime.GOMAXPROCS(0) < 2 || famTagN < 2 {
		t.Skip("needs two Ps with lanes")
	}
	reg := NewRegistry(WithoutEnv())
	f := reg.Family(Config{Name: "moves"}, FamilyConfig{Keys: 4})
	k := f.Enter("a")
	e := untag(k.h)
	k.Done()
	holds := make(chan FamilyKey, 64)
	var stop atomic.Bool
	var wg sync.WaitGroup
	neg := make(chan []int32, 1)
	wg.Go(func() { // watcher
		for !stop.Load() {
			if c := laneCounts(e); slices.Min(c) < 0 {
				select {
				case neg <- c:
				default:
				}
				return
			}
		}
	})
	var ends sync.WaitGroup
	for range 2 {
		ends.Go(func() {
			for k := range holds {
				k.Done()
			}
		})
	}
	rounds := 100000
	if underRace {
		rounds = 10000
	}
	var begins sync.WaitGroup
	for range 2 {
		begins.Go(func() {
			for range rounds {
				holds <- f.Enter("a")
			}
		})
	}
	begins.Wait()
	close(holds)
	ends.Wait()
	stop.Store(true)
	wg.Wait()
	select {
	case c := <-neg:
		t.Errorf("a count fell below zero: %v (cell, then each lane)", c)
	default:
	}
	if c := laneCounts(e); slices.Max(c) != 0 || slices.Min(c) != 0 {
		t.Errorf("after every call ended the counts are %v, want all zero", c)
	}
}

// TestFamilyHoldWithdraws: the withdraw path of the exchange (a hold
// that counted, then found the key dying) takes its one off the counter
// it counted on. One goroutine marks the key dying and live again
// (as foldDead does when it keeps a key) while others hold and end it;
// no counter may fall below zero, and all end at zero. A hold withdraws
// only when the mark lands between its count and its second look, so
// the test makes 40 million holds (0.2 s): a withdraw from another
// counter than the count's failed it in 10 runs of 10 here.
func TestFamilyHoldWithdraws(t *testing.T) {
	reg := NewRegistry(WithoutEnv())
	f := reg.Family(Config{Name: "withdraw"}, FamilyConfig{Keys: 4})
	k := f.Enter("a")
	e := untag(k.h)
	k.Done()
	var stop atomic.Bool
	var refused, admitted atomic.Int64
	var flip sync.WaitGroup
	flip.Go(func() {
		for !stop.Load() {
			e.Dead.Store(core.KeyDying)
			e.Dead.Store(0)
		}
	})
	rounds := 10_000_000
	if underRace {
		rounds = 20000
	}
	var calls sync.WaitGroup
	for range 4 {
		calls.Go(func() {
			for range rounds {
				if h := f.hold(e); h != nil {
					admitted.Add(1)
					countOut(h)
				} else {
					refused.Add(1)
				}
			}
		})
	}
	calls.Wait()
	stop.Store(true)
	flip.Wait()
	e.Dead.Store(0)
	if c := laneCounts(e); slices.Max(c) != 0 || slices.Min(c) != 0 {
		t.Errorf("after %d calls and %d refusals the counts are %v, want all zero", admitted.Load(), refused.Load(), c)
	}
}
