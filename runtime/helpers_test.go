package runtime_test

import (
	"bytes"
	"log/slog"
	"sync"
	"testing"

	"github.com/breakergen/breakergen/runtime"
	"github.com/breakergen/breakergen/runtime/internal/testkit"
)

// anyImpl is the implementation a test's route guards: not nil, so that
// the route admits calls.
var anyImpl = struct{}{}

func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

// t0 is the fixed instant every fake clock starts at.
var t0 = testkit.T0

// fakeClock is the tests' clock: time moves only when Advance is called,
// and timers due by then fire in order, synchronously, inside Advance.
type fakeClock = testkit.Clock

func newFakeClock() *fakeClock { return testkit.New(t0) }

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
	return testkit.Registry(t, opts...)
}

func trip(t *testing.T, b *runtime.Breaker) { testkit.Trip(t, b) }
