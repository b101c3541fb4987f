package breakerimpl_test

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/breakergen/breakergen/runtime"
	"github.com/breakergen/breakergen/runtime/internal/fakeclock"
)

// anyImpl is the implementation a test's route guards: not nil, so that
// the route admits calls.
var anyImpl = struct{}{}

func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

// t0 is the fixed instant every fake clock starts at.
var t0 = time.Date(2026, 3, 2, 9, 30, 0, 0, time.UTC)

// fakeClock is the tests' clock: time moves only when Advance is called,
// and timers due by then fire in order, synchronously, inside Advance.
type fakeClock = fakeclock.Clock

func newFakeClock() *fakeClock { return fakeclock.New(t0) }

var errUpstream = errors.New("upstream down")

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
