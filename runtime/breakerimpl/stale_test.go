package breakerimpl_test

import (
	"fmt"
	"math"
	goruntime "runtime"
	"sync"
	"testing"
	"time"

	"github.com/breakergen/breakergen/runtime/breakerimpl"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestStaleCacheLRUAndAge(t *testing.T) {
	reg, clk := newTestRegistry(t)
	c := breakerimpl.NewStaleCache[string, int](reg, time.Minute, 2)
	c.Put("a", 1)
	c.Put("b", 2)
	_, _, ok := c.Get("a") // a is now the most recently used
	require.True(t, ok)
	c.Put("c", 3) // evicts b
	_, _, ok = c.Get("b")
	assert.False(t, ok)
	v, age, ok := c.Get("a")
	assert.True(t, ok)
	assert.Equal(t, 1, v)
	assert.Zero(t, age)
	assert.Equal(t, 2, c.Len())
	clk.Advance(time.Minute)
	_, _, ok = c.Get("a")
	assert.False(t, ok, "never served past its age limit")

	ic := breakerimpl.NewStaleCache[any, int](reg, time.Minute, 2)
	assert.NotPanics(t, func() { ic.Put([]int{1}, 1) }, "an unhashable key is simply not cached")
	_, _, ok = ic.Get([]int{1})
	assert.False(t, ok)
}

// TestStaleCacheSizeIsABound: a stalesize is the most entries kept, not
// a reservation: a cache of 10,000,000 entries (a wrapper's constructor
// made one per method) or of math.MaxInt (it panicked: makeslice) takes
// next to no memory until it holds entries, and a cache past its first
// room still evicts at its bound.
func TestStaleCacheSizeIsABound(t *testing.T) {
	reg, _ := newTestRegistry(t)
	var before, after goruntime.MemStats
	goruntime.ReadMemStats(&before)
	big := breakerimpl.NewStaleCache[string, int](reg, time.Minute, 10_000_000)
	goruntime.ReadMemStats(&after)
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(1<<20), "bytes allocated by the constructor")
	big.Put("a", 1)
	_, _, ok := big.Get("a")
	assert.True(t, ok)

	var huge *breakerimpl.StaleCache[string, int]
	require.NotPanics(t, func() { huge = breakerimpl.NewStaleCache[string, int](reg, time.Minute, math.MaxInt) })
	huge.Put("a", 1)
	assert.Equal(t, 1, huge.Len())

	c := breakerimpl.NewStaleCache[string, int](reg, time.Minute, 100)
	for i := range 150 {
		c.Put(fmt.Sprint(i), i)
	}
	assert.Equal(t, 100, c.Len())
	_, _, ok = c.Get("49")
	assert.False(t, ok, "the least recently used went first")
	v, _, ok := c.Get("50")
	assert.True(t, ok)
	assert.Equal(t, 50, v)
}

func TestStaleCacheUpdateAllocatesNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under -race: make allocs runs this test without it")
	}
	reg, _ := newTestRegistry(t)
	c := breakerimpl.NewStaleCache[string, int](reg, time.Minute, 2)
	c.Put("a", 5)
	assert.Zero(t, testing.AllocsPerRun(100, func() { c.Put("a", 6) }), "updating an entry allocates nothing")
}

func TestStaleCacheConcurrent(t *testing.T) {
	reg, _ := newTestRegistry(t)
	c := breakerimpl.NewStaleCache[int, int](reg, time.Hour, 64)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 2000 {
				k := (g*7 + i) % 100
				c.Put(k, k*10)
				if v, _, ok := c.Get(k); ok && v != k*10 {
					t.Errorf("key %d holds %d", k, v)
				}
			}
		})
	}
	wg.Wait()
	assert.Equal(t, 64, c.Len(), "bounded by its size")
}
