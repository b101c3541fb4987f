package httphealth_test

import (
	"sync"
	"time"

	"github.com/breakergen/breakergen/runtime"
)

// fakeClock is a clock the test steps by hand. Its timers never fire: the
// registry makes the moves time has made due whenever its state is read,
// as the health endpoints do.
type fakeClock struct {
	mu  sync.Mutex // guards now
	now time.Time
}

func newFakeClock(t time.Time) *fakeClock { return &fakeClock{now: t} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

func (c *fakeClock) AfterFunc(time.Duration, func()) runtime.Timer { return idleTimer{} }

type idleTimer struct{}

func (idleTimer) Stop() bool { return true }
