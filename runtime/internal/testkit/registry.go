package testkit

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/breakergen/breakergen/runtime"
)

// T0 is the fixed instant every test clock starts at.
var T0 = time.Date(2026, 3, 2, 9, 30, 0, 0, time.UTC)

// Registry returns a registry on a new Clock at T0 that logs nothing, with
// opts applied after those.
func Registry(t testing.TB, opts ...runtime.Option) (*runtime.Registry, *Clock) {
	t.Helper()
	clk := New(T0)
	base := []runtime.Option{runtime.WithClock(clk), runtime.WithLogger(slog.New(slog.DiscardHandler))}
	return runtime.NewRegistry(append(base, opts...)...), clk
}

// Trip fails calls through b until it is OPEN.
func Trip(t testing.TB, b *runtime.Breaker) {
	t.Helper()
	for b.State() == runtime.Closed {
		_ = b.Do(context.Background(), func(context.Context) error { return errors.New("boom") })
	}
	require.Equal(t, runtime.Open, b.State())
}
