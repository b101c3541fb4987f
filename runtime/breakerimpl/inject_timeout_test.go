package breakerimpl_test

import (
	"context"
	"log/slog"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/breakergen/breakergen/runtime"
	"github.com/breakergen/breakergen/runtime/breakerimpl"
)

// TestInjectedLatencyMeetsTheTimeout: injected latency longer than the
// route's per-try timeout ends at the timeout, as the timeout would end an
// upstream that slow: the try fails with context.DeadlineExceeded, counted
// as a failure, and the upstream is not called. It used to run whole
// (500ms against a 50ms timeout) and the call went on to succeed, so a
// rehearsal of a slow upstream never reached the timeout it rehearsed. A
// delay under the timeout still runs whole, and the call goes on.
func TestInjectedLatencyMeetsTheTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := runtime.NewRegistry(runtime.WithoutEnv(), runtime.WithLogger(slog.New(slog.DiscardHandler)),
			runtime.WithConfig(runtime.Config{Name: "slow", Latency: 500 * time.Millisecond}),
			runtime.WithConfig(runtime.Config{Name: "quick", Latency: 20 * time.Millisecond}))
		slow := breakerimpl.NewRoute(reg, anyImpl, breakerimpl.RouteConfig{Breaker: runtime.Config{Name: "slow", FailureThreshold: 2}, Timeout: 50 * time.Millisecond})
		start := time.Now()
		_, err := slow.Enter(context.Background())
		require.ErrorIs(t, err, context.DeadlineExceeded, "the try ends at its timeout")
		require.ErrorIs(t, err, runtime.ErrInjected, "and says it was injected")
		assert.Equal(t, 50*time.Millisecond, time.Since(start))
		b, _ := reg.Lookup("slow")
		assert.Equal(t, uint64(1), b.Stats().Failures, "a timeout is a failure")
		_, err = slow.Enter(context.Background())
		require.ErrorIs(t, err, context.DeadlineExceeded)
		assert.Equal(t, runtime.Open, b.State(), "threshold=2 timeouts trip it")

		quick := breakerimpl.NewRoute(reg, anyImpl, breakerimpl.RouteConfig{Breaker: runtime.Config{Name: "quick"}, Timeout: 50 * time.Millisecond})
		start = time.Now()
		call, err := quick.Enter(context.Background())
		require.NoError(t, err, "a delay under the timeout")
		assert.Equal(t, 20*time.Millisecond, time.Since(start))
		var none error
		call.Exit(context.Background(), &none)
	})
}

// TestInjectedTimeoutIsRetried: a try that injected latency timed out is
// retried as a real timeout is (attempts=3: three tries, each ending at
// the 50ms timeout), counted as an injected failure each, and the route's
// last error says so. It was returned as a refusal: one try, no retry.
func TestInjectedTimeoutIsRetried(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := runtime.NewRegistry(runtime.WithoutEnv(), runtime.WithLogger(slog.New(slog.DiscardHandler)),
			runtime.WithConfig(runtime.Config{Name: "slow", Latency: 500 * time.Millisecond}))
		rt := breakerimpl.NewRoute(reg, anyImpl, breakerimpl.RouteConfig{
			Breaker: runtime.Config{Name: "slow", FailureThreshold: 10},
			Timeout: 50 * time.Millisecond, Attempts: 3, Backoff: time.Millisecond,
		})
		start := time.Now()
		retry := rt.Retry()
		_, err := retry.Enter(context.Background(), nil)
		require.ErrorIs(t, err, context.DeadlineExceeded)
		require.ErrorIs(t, err, runtime.ErrInjected)
		assert.Equal(t, 3, retry.Tries(), "three tries")
		assert.GreaterOrEqual(t, time.Since(start), 150*time.Millisecond, "each ran to its timeout")
		b, _ := reg.Lookup("slow")
		st := b.Stats()
		assert.Equal(t, uint64(3), st.Failures)
		assert.Equal(t, uint64(3), st.Injected, "each an injected failure")
	})
}
