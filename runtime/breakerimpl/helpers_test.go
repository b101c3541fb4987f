package breakerimpl_test

import (
	"errors"
	"log/slog"
	"testing"

	"github.com/breakergen/breakergen/runtime"
	"github.com/breakergen/breakergen/runtime/internal/testkit"
)

// anyImpl is the implementation a test's route guards: not nil, so that
// the route admits calls.
var anyImpl = struct{}{}

func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

// fakeClock is the tests' clock: time moves only when Advance is called,
// and timers due by then fire in order, synchronously, inside Advance.
type fakeClock = testkit.Clock

var errUpstream = errors.New("upstream down")

func newTestRegistry(t *testing.T, opts ...runtime.Option) (*runtime.Registry, *fakeClock) {
	return testkit.Registry(t, opts...)
}

func trip(t *testing.T, b *runtime.Breaker) { testkit.Trip(t, b) }
