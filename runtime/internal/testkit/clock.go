// Package testkit holds what the runtime's and breakerimpl's tests share:
// a clock whose time moves only when a test says so (timers fire in order,
// synchronously, on the goroutine that moves it), a registry on it, and a
// way to trip a breaker. Only tests import it.
package testkit

import (
	"sort"
	"sync"
	"time"

	"github.com/breakergen/breakergen/runtime"
)

// Clock is a [runtime.Clock] whose time moves only when Advance is called;
// timers due by then fire in order, synchronously, inside Advance.
type Clock struct {
	mu     sync.Mutex // guards now, seq, timers and each timer's done
	now    time.Time
	seq    int
	timers []*timer
}

type timer struct {
	c    *Clock
	when time.Time
	seq  int
	f    func()
	done bool
}

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// AfterFunc schedules f for d from now; Advance runs it.
func (c *Clock) AfterFunc(d time.Duration, f func()) runtime.Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seq++
	t := &timer{c: c, when: c.now.Add(d), seq: c.seq, f: f}
	c.timers = append(c.timers, t)
	return t
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

// Advance moves the clock forward by d, firing every timer that comes due,
// each at its own instant.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	end := c.now.Add(d)
	for {
		sort.SliceStable(c.timers, func(i, j int) bool {
			if !c.timers[i].when.Equal(c.timers[j].when) {
				return c.timers[i].when.Before(c.timers[j].when)
			}
			return c.timers[i].seq < c.timers[j].seq
		})
		var next *timer
		for len(c.timers) > 0 {
			t := c.timers[0]
			if t.done {
				c.timers = c.timers[1:]
				continue
			}
			if t.when.After(end) {
				break
			}
			next = t
			c.timers = c.timers[1:]
			break
		}
		if next == nil {
			break
		}
		next.done = true
		if next.when.After(c.now) {
			c.now = next.when
		}
		c.mu.Unlock()
		next.f()
		c.mu.Lock()
	}
	// Another goroutine's Advance may have moved the clock past end while
	// this one ran a timer: time never goes back.
	if end.After(c.now) {
		c.now = end
	}
	c.mu.Unlock()
}

// New returns a Clock that reads start until it is advanced.
func New(start time.Time) *Clock { return &Clock{now: start} }
