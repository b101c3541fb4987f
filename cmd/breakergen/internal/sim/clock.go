package sim

import (
	"container/heap"
	"sync"
	"time"

	"github.com/breakergen/breakergen/runtime"
)

// clock is the replay's synthetic clock: time moves only by advanceTo,
// which runs the timers that come due, in order of their instant and then
// of their creation, each at its instant, on the replay's goroutine.
type clock struct {
	mu     sync.Mutex // guards now, seq, timers
	start  time.Time
	now    time.Duration
	seq    int
	timers timerHeap
}

func newClock(start time.Time) *clock { return &clock{start: start} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.start.Add(c.now)
}

func (c *clock) AfterFunc(d time.Duration, f func()) runtime.Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seq++
	t := &timer{c: c, when: c.now + max(d, 0), seq: c.seq, f: f}
	if t.when < c.now { // past the end of time.Duration: it never fires
		return t
	}
	heap.Push(&c.timers, t)
	return t
}

// advanceTo moves the clock to d (never back), firing the timers due.
func (c *clock) advanceTo(d time.Duration) {
	c.mu.Lock()
	for len(c.timers) > 0 && c.timers[0].when <= d {
		t := heap.Pop(&c.timers).(*timer)
		if t.done {
			continue
		}
		t.done = true
		c.now = max(c.now, t.when)
		c.mu.Unlock()
		t.f()
		c.mu.Lock()
	}
	c.now = max(c.now, d)
	c.mu.Unlock()
}

type timer struct {
	c    *clock
	when time.Duration
	seq  int
	f    func()
	done bool // guarded by c.mu
}

func (t *timer) Stop() bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	if t.done {
		return false
	}
	t.done = true
	return true
}

type timerHeap []*timer

func (h timerHeap) Len() int { return len(h) }
func (h timerHeap) Less(i, j int) bool {
	if h[i].when != h[j].when {
		return h[i].when < h[j].when
	}
	return h[i].seq < h[j].seq
}
func (h timerHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *timerHeap) Push(x any)   { *h = append(*h, x.(*timer)) }
func (h *timerHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
