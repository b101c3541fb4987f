package core

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestTallyCountsEveryAdd: adds from many goroutines at once, before and
// after the Tally is spread, are all in Load; Reset clears both.
func TestTallyCountsEveryAdd(t *testing.T) {
	var tl Tally
	add := func(goroutines, each int) {
		var wg sync.WaitGroup
		start := make(chan struct{}) // every goroutine alive at once, each on a stack of its own
		for range goroutines {
			wg.Go(func() {
				<-start
				for range each {
					tl.Add()
				}
			})
		}
		close(start)
		wg.Wait()
	}
	add(4, 1000)
	assert.Equal(t, uint64(4000), tl.Load())
	assert.Nil(t, tl.stripes.Load(), "one counter until spread")

	tl.Spread()
	s := tl.stripes.Load()
	tl.Spread()
	assert.Same(t, s, tl.stripes.Load(), "spread once")
	add(32, 1000)
	assert.Equal(t, uint64(36000), tl.Load())
	used := 0
	for i := range s {
		if s[i].n.Load() != 0 {
			used++
		}
	}
	assert.Greater(t, used, 1, "32 goroutines' stacks pick more than one stripe")

	tl.Reset()
	assert.Zero(t, tl.Load())
	tl.Add()
	assert.Equal(t, uint64(1), tl.Load())
}

// TestTallyAddAllocatesNothing: Add allocates nothing, spread or not.
func TestTallyAddAllocatesNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates; make test runs this without it")
	}
	var tl Tally
	assert.Zero(t, testing.AllocsPerRun(100, tl.Add))
	tl.Spread()
	assert.Zero(t, testing.AllocsPerRun(100, tl.Add))
}
