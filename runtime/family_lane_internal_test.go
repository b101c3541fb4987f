package runtime

import (
	goruntime "runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/breakergen/breakergen/runtime/internal/core"
)

// TestFamilyHoldCountsOnItsCounter: a hold counts one on exactly the
// word it names (its P's of the key's bucket), a hold that finds the
// key dying takes its one off that same counter, and the end, on another
// goroutine, takes it off that counter too: each counter alone counts its
// calls, never below zero, which is what lets the family's sum of them,
// read one by one, stand for the calls in flight.
func TestFamilyHoldCountsOnItsCounter(t *testing.T) {
	reg := NewRegistry(WithoutEnv())
	f := reg.Family(Config{Name: "tags"}, FamilyConfig{Keys: 4})
	k := f.Enter("a")
	e := k.e
	k.Done()
	h := f.hashString("a")
	for i := range 200 {
		before := keyCounts(e)
		k := f.holdAt(e, h)
		if k.e != e {
			t.Fatalf("round %d: hold on cell %p, want %p", i, k.e, e)
		}
		lane := -1
		for p := range famLaneN {
			if k.w == famCount(p, famBucketOf(h)) {
				lane = p
			}
		}
		if lane < 0 {
			t.Fatalf("round %d: the hold counts in no word of the key's bucket", i)
		}
		want := slices.Clone(before)
		want[lane+1]++
		if got := keyCounts(e); !slices.Equal(got, want) {
			t.Fatalf("round %d: hold on lane %d counts %v, want %v", i, lane, got, want)
		}
		done := make(chan struct{})
		go func() { k.Done(); close(done) }()
		<-done
		if got := keyCounts(e); !slices.Equal(got, before) {
			t.Fatalf("round %d: after the end of the hold on lane %d: %v, want %v", i, lane, got, before)
		}
		goruntime.Gosched()
	}
	setDead(e, core.KeyDying)
	before := keyCounts(e)
	if f.holdAt(e, h).e != nil {
		t.Fatal("a dying key admitted a call")
	}
	if got := keyCounts(e); !slices.Equal(got, before) {
		t.Fatalf("a refused call moved the counts: %v, want %v", got, before)
	}
	setDead(e, 0)
}

// TestFamilyHoldEndsOnAnotherP: holds begun on one goroutine end on
// another (as a hedged call's may), so that many end on another P than
// they began on; every lane and the cell stay at zero or above
// throughout, and are all zero at the end.
func TestFamilyHoldEndsOnAnotherP(t *testing.T) {
	if goruntime.GOMAXPROCS(0) < 2 {
		t.Skip("needs two Ps")
	}
	reg := NewRegistry(WithoutEnv())
	f := reg.Family(Config{Name: "moves"}, FamilyConfig{Keys: 4})
	k := f.Enter("a")
	e := k.e
	k.Done()
	holds := make(chan FamilyKey, 64)
	var stop atomic.Bool
	var wg sync.WaitGroup
	neg := make(chan []int32, 1)
	wg.Go(func() { // watcher
		for !stop.Load() {
			if c := keyCounts(e); slices.Min(c) < 0 {
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
		t.Errorf("a count fell below zero: %v (cell, then each lane's word of its bucket)", c)
	default:
	}
	if c := keyCounts(e); slices.Max(c) != 0 || slices.Min(c) != 0 {
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
	e := k.e
	k.Done()
	h := f.hashString("a")
	var stop atomic.Bool
	var refused, admitted atomic.Int64
	var flip sync.WaitGroup
	flip.Go(func() {
		for !stop.Load() {
			setDead(e, core.KeyDying)
			setDead(e, 0)
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
				if k := f.holdAt(e, h); k.e != nil {
					admitted.Add(1)
					k.Done()
				} else {
					refused.Add(1)
				}
			}
		})
	}
	calls.Wait()
	stop.Store(true)
	flip.Wait()
	setDead(e, 0)
	if c := keyCounts(e); slices.Max(c) != 0 || slices.Min(c) != 0 {
		t.Errorf("after %d calls and %d refusals the counts are %v, want all zero", admitted.Load(), refused.Load(), c)
	}
}
