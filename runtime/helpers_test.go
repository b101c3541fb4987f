package runtime_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/breakergen/breakergen/runtime"
)

// anyImpl is the implementation a test's route guards: not nil, so that
// the route admits calls.
var anyImpl = struct{}{}

func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

// t0 is the fixed instant every fake clock starts at.
var t0 = time.Date(2026, 3, 2, 9, 30, 0, 0, time.UTC)

// fakeClock is a runtime.Clock whose time moves only when Advance is called;
// timers due by then fire in order, synchronously, inside Advance.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	seq    int
	timers []*fakeTimer
}

type fakeTimer struct {
	c    *fakeClock
	when time.Time
	seq  int
	f    func()
	done bool
}

func newFakeClock() *fakeClock { return &fakeClock{now: t0} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) AfterFunc(d time.Duration, f func()) runtime.Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seq++
	t := &fakeTimer{c: c, when: c.now.Add(d), seq: c.seq, f: f}
	c.timers = append(c.timers, t)
	return t
}

func (t *fakeTimer) Stop() bool {
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
func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	end := c.now.Add(d)
	for {
		sort.SliceStable(c.timers, func(i, j int) bool {
			if !c.timers[i].when.Equal(c.timers[j].when) {
				return c.timers[i].when.Before(c.timers[j].when)
			}
			return c.timers[i].seq < c.timers[j].seq
		})
		var next *fakeTimer
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
	c.now = end
	c.mu.Unlock()
}

// logBuffer captures a registry's log lines.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

func (l *logBuffer) logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(l, &slog.HandlerOptions{
		ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey && len(groups) == 0 {
				return slog.Attr{}
			}
			return a
		},
	}))
}

func newTestRegistry(t *testing.T, opts ...runtime.Option) (*runtime.Registry, *fakeClock) {
	t.Helper()
	clk := newFakeClock()
	return runtime.NewRegistry(append([]runtime.Option{runtime.WithClock(clk), runtime.WithLogger(discardLogger())}, opts...)...), clk
}

func trip(t *testing.T, b *runtime.Breaker) {
	t.Helper()
	for b.State() == runtime.Closed {
		_ = b.Do(context.Background(), func(context.Context) error { return errors.New("boom") })
	}
	require.Equal(t, runtime.Open, b.State())
}
