package e2e

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/mock/gomock"

	"github.com/breakergen/breakergen/runtime"
)

// httpError is an upstream answer as a client would type it: 5xx are
// retryable, 4xx are not.
type httpError struct{ code int }

func (e *httpError) Error() string   { return fmt.Sprintf("HTTP %d", e.code) }
func (e *httpError) Retryable() bool { return e.code >= 500 }

// coolingError is a 429 or a ban: the upstream says when to come back.
type coolingError struct {
	httpError
	after time.Duration
}

func (e *coolingError) RetryAfter() time.Duration { return e.after }

func setupUpstream(t *testing.T, reg *runtime.Registry) (*MockUpstream, *UpstreamBreaker) {
	m := NewMockUpstream(gomock.NewController(t))
	return m, NewUpstreamBreaker(m, reg)
}

func stats(t *testing.T, reg *runtime.Registry, name string) runtime.Stats {
	b, ok := reg.Lookup(name)
	require.True(t, ok, name)
	return b.Stats()
}

func TestRetryEachTryCountedWithFixedBackoff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := newRegistry()
		m, w := setupUpstream(t, reg)
		ctx := context.Background()
		m.EXPECT().Fetch(ctx, "600519").Return("", errDown).Times(3)
		start := time.Now()
		_, err := w.Fetch(ctx, "600519")
		require.ErrorIs(t, err, errDown, "the last upstream error, not a refusal")
		assert.Equal(t, 2*time.Second, time.Since(start), "two waits of backoff=1s between three tries")
		s := stats(t, reg, "retried")
		assert.Equal(t, uint64(3), s.Failures, "every try is recorded on its own")
		assert.Equal(t, 3, s.ConsecutiveFailures)

		// A retry that succeeds returns the answer and clears the count.
		gomock.InOrder(
			m.EXPECT().Fetch(ctx, "a").Return("", &httpError{502}),
			m.EXPECT().Fetch(ctx, "a").Return("quote", nil),
		)
		v, err := w.Fetch(ctx, "a")
		require.NoError(t, err)
		assert.Equal(t, "quote", v)
		assert.Equal(t, 0, stats(t, reg, "retried").ConsecutiveFailures)
	})
}

func TestRetryJitteredBackoffStaysUnderItsCeilings(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m, w := setupUpstream(t, newRegistry())
		m.EXPECT().Jitter(gomock.Any()).Return(errDown).Times(4)
		start := time.Now()
		require.ErrorIs(t, w.Jitter(context.Background()), errDown)
		// Full jitter before tries 2, 3, 4: [0,1s], [0,2s], [0,3s] (capped).
		assert.LessOrEqual(t, time.Since(start), 6*time.Second)
	})
}

func TestRetryBackoffHonoursTheDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m, w := setupUpstream(t, newRegistry())
		ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
		defer cancel()
		// The second wait would end after the deadline: not started.
		m.EXPECT().Fetch(gomock.Any(), "x").Return("", errDown).Times(2)
		start := time.Now()
		_, err := w.Fetch(ctx, "x")
		require.ErrorIs(t, err, errDown)
		assert.Equal(t, time.Second, time.Since(start))
	})
}

func TestRetryNotRetryableIsTriedOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := newRegistry()
		m, w := setupUpstream(t, reg)
		forbidden := &httpError{403}
		m.EXPECT().Fetch(gomock.Any(), "x").Return("", fmt.Errorf("fetch: %w", forbidden)).Times(1)
		start := time.Now()
		_, err := w.Fetch(context.Background(), "x")
		assert.ErrorIs(t, err, forbidden)
		assert.Zero(t, time.Since(start), "no backoff after the last try")
		assert.Equal(t, uint64(1), stats(t, reg, "retried").Failures)
	})
}

func TestRetryAfterOpensTheBreakerForThatLong(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := newRegistry()
		m, w := setupUpstream(t, reg)
		tooMany := &coolingError{httpError{429}, 90 * time.Second}
		m.EXPECT().Cooled(gomock.Any()).Return(tooMany).Times(1)
		assert.ErrorIs(t, w.Cooled(context.Background()), tooMany, "tried once: a RetryAfter is not retried")
		assert.Equal(t, runtime.Open, state(t, reg, "cooled"), "one 429 opens it, whatever the threshold")
		assert.ErrorIs(t, w.Cooled(context.Background()), runtime.ErrOpen)

		time.Sleep(90*time.Second - time.Millisecond)
		assert.Equal(t, runtime.Open, state(t, reg, "cooled"), "the cooldown, not reset=30s")
		time.Sleep(time.Millisecond)
		assert.Equal(t, runtime.HalfOpen, state(t, reg, "cooled"))
	})
}

func TestRetryRouteBudget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m, w := setupUpstream(t, newRegistry())
		m.EXPECT().Budgeted(gomock.Any()).Return(0, errDown).Times(2)
		_, err := w.Budgeted(context.Background())
		assert.ErrorIs(t, err, errDown, "budget=2 stops attempts=5 after two tries")
	})
}

func TestRetryBudgetSharedThroughTheContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m, w := setupUpstream(t, newRegistry())
		ctx := runtime.WithBudget(context.Background(), 4)
		m.EXPECT().Fetch(gomock.Any(), "a").Return("", errDown).Times(3)
		m.EXPECT().Fetch(gomock.Any(), "b").Return("", errDown).Times(1)
		_, err := w.Fetch(ctx, "a")
		require.ErrorIs(t, err, errDown)
		_, err = w.Fetch(ctx, "b")
		require.ErrorIs(t, err, errDown, "one try left for the second call")
		left, ok := runtime.BudgetLeft(ctx)
		require.True(t, ok)
		assert.Zero(t, left)
		// No try left: the refusal itself, and the mock is not called.
		_, err = w.Fetch(ctx, "c")
		assert.ErrorIs(t, err, runtime.ErrBudget)
	})
}

func TestRetryWithoutContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m, w := setupUpstream(t, newRegistry())
		gomock.InOrder(
			m.EXPECT().Plain("a").Return("", errDown),
			m.EXPECT().Plain("a").Return("ok", nil),
		)
		v, err := w.Plain("a")
		require.NoError(t, err)
		assert.Equal(t, "ok", v)
	})
}

func TestRetryEnvOverridesThreshold(t *testing.T) {
	t.Setenv("BREAKER_RETRIED_THRESHOLD", "2")
	synctest.Test(t, func(t *testing.T) {
		reg := newRegistry() // reads the environment
		m, w := setupUpstream(t, reg)
		// Two tries trip it; the third is rejected and not made.
		m.EXPECT().Fetch(gomock.Any(), "x").Return("", errDown).Times(2)
		_, err := w.Fetch(context.Background(), "x")
		assert.ErrorIs(t, err, errDown, "the last upstream error, not the rejection")
		assert.Equal(t, runtime.Open, state(t, reg, "retried"))
	})
}

func TestRetryMalformedEnvIsLoggedAndIgnored(t *testing.T) {
	t.Setenv("BREAKER_RETRIED_THRESHOLD", "two")
	synctest.Test(t, func(t *testing.T) {
		var log bytes.Buffer
		reg := runtime.NewRegistry(runtime.WithLogger(slog.New(slog.NewTextHandler(&log, nil))))
		assert.Contains(t, log.String(), "BREAKER_RETRIED_THRESHOLD")
		m, w := setupUpstream(t, reg)
		m.EXPECT().Fetch(gomock.Any(), "x").Return("", errDown).Times(3)
		_, err := w.Fetch(context.Background(), "x")
		assert.ErrorIs(t, err, errDown)
		s := stats(t, reg, "retried")
		assert.Equal(t, runtime.Closed, s.State)
		assert.Equal(t, 10, s.FailureThreshold, "the annotation's threshold stays")
	})
}
