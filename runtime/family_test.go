package runtime_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

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

func TestFamilyLiveKeyAllocatesNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under -race")
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

// TestFamilyPropertyNoOpenKeyDropped drives a family with random calls on
// random keys and random time steps, and checks after every step that every
// key whose breaker is OPEN is still live, with the same breaker.
func TestFamilyPropertyNoOpenKeyDropped(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		clock := newFakeClock()
		reg := quietRegistry(br.WithClock(clock))
		limit := rapid.IntRange(1, 6).Draw(rt, "keys")
		maxOpen := rapid.SampledFrom([]int{0, 50, 100}).Draw(rt, "maxopen")
		f := reg.Family(br.Config{Name: "f", FailureThreshold: 1, ResetTimeout: 10 * time.Second},
			br.FamilyConfig{Keys: limit, MaxOpen: maxOpen})
		open := map[string]*br.Breaker{} // keys last seen OPEN
		for i := range rapid.IntRange(1, 80).Draw(rt, "steps") {
			switch rapid.IntRange(0, 2).Draw(rt, fmt.Sprint("op", i)) {
			case 0, 1:
				k := strconv.Itoa(rapid.IntRange(0, 12).Draw(rt, fmt.Sprint("key", i)))
				fail := rapid.Bool().Draw(rt, fmt.Sprint("fail", i))
				_ = f.Breaker(k).Do(context.Background(), func(context.Context) error {
					if fail {
						return errKeyDown
					}
					return nil
				})
			case 2:
				clock.Advance(time.Duration(rapid.IntRange(1, 6).Draw(rt, fmt.Sprint("dt", i))) * 2 * time.Second)
			}
			for k, b := range open {
				got, ok := reg.Lookup("f/" + k)
				if b.State() == br.Open && (!ok || got != b) {
					rt.Fatalf("key %s dropped while OPEN", k)
				}
			}
			clear(open)
			for _, b := range reg.Breakers() {
				if b.State() == br.Open {
					open[strings.TrimPrefix(b.Name(), "f/")] = b
				}
			}
		}
	})
}
