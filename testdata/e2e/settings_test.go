package e2e

import (
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/mock/gomock"

	"github.com/breakergen/breakergen/runtime"
)

func windowedConfig(t *testing.T, reg *runtime.Registry) runtime.Config {
	t.Helper()
	NewWindowedBreaker(NewMockWindowed(gomock.NewController(t)), reg)
	b, ok := reg.Lookup("windowed")
	require.True(t, ok)
	return b.Config()
}

// TestWindowKeysReachTheBreaker: the window and load keys of the
// annotation are the breaker's settings.
func TestWindowKeysReachTheBreaker(t *testing.T) {
	cfg := windowedConfig(t, runtime.NewRegistry(runtime.WithoutEnv()))
	assert.Equal(t, 100, cfg.WindowCalls)
	assert.Zero(t, cfg.WindowPeriod)
	assert.Equal(t, 0.25, cfg.FailureRate)
	assert.Equal(t, 10, cfg.MinimumCalls)
	assert.Equal(t, 2*time.Second, cfg.SlowCall)
	assert.Equal(t, 0.8, cfg.SlowRate)
	assert.Equal(t, time.Minute, cfg.InFlight)
	assert.Equal(t, 4, cfg.Concurrency)
	assert.Equal(t, 2.0, cfg.Throttle)
}

// TestEnvironmentOverridesWindowKeys: BREAKER_<NAME>_* override the
// annotation's window and load keys; a time window replaces the annotated
// count window, and WithConfig wins over both.
func TestEnvironmentOverridesWindowKeys(t *testing.T) {
	t.Setenv("BREAKER_WINDOWED_WINDOW", "60s")
	t.Setenv("BREAKER_WINDOWED_FAILRATE", "0.5")
	t.Setenv("BREAKER_WINDOWED_CONCURRENCY", "8")
	cfg := windowedConfig(t, runtime.NewRegistry(runtime.WithLogger(slog.New(slog.DiscardHandler)),
		runtime.WithConfig(runtime.Config{Name: "windowed", Throttle: 3})))
	assert.Zero(t, cfg.WindowCalls)
	assert.Equal(t, time.Minute, cfg.WindowPeriod)
	assert.Equal(t, 0.5, cfg.FailureRate)
	assert.Equal(t, 8, cfg.Concurrency)
	assert.Equal(t, 3.0, cfg.Throttle)
	assert.Equal(t, 10, cfg.MinimumCalls, "what no layer above gives stays the annotation's")
}
