package e2e

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/mock/gomock"

	"github.com/breakergen/breakergen/runtime"
	"github.com/breakergen/breakergen/runtime/breakerimpl"
)

var errDown = errors.New("upstream down")

func newRegistry() *runtime.Registry {
	return runtime.NewRegistry(runtime.WithLogger(slog.New(slog.DiscardHandler)))
}

func setup(t *testing.T) (*MockSource, *SourceBreaker, *runtime.Registry) {
	ctrl := gomock.NewController(t)
	m := NewMockSource(ctrl)
	reg := newRegistry()
	return m, NewSourceBreaker(m, reg), reg
}

func state(t *testing.T, reg *runtime.Registry, name string) runtime.State {
	b, ok := reg.Lookup(name)
	require.True(t, ok, name)
	return b.State()
}

func TestTripsAfterThresholdAndRejectsWithoutCalling(t *testing.T) {
	m, w, reg := setup(t)
	ctx := context.Background()
	m.EXPECT().Quote(ctx, "600519").Return(0.0, errDown).Times(3)
	for range 3 {
		_, err := w.Quote(ctx, "600519")
		require.ErrorIs(t, err, errDown)
	}
	assert.Equal(t, runtime.Open, state(t, reg, "quotes"))
	// The mock expects no fourth call: a rejection must not reach it.
	_, err := w.Quote(ctx, "600519")
	assert.ErrorIs(t, err, runtime.ErrOpen)
}

func TestExcludedErrorIsSuccess(t *testing.T) {
	m, w, reg := setup(t)
	m.EXPECT().Quote(gomock.Any(), "x").Return(0.0, ErrNotFound).Times(5)
	for range 5 {
		_, err := w.Quote(context.Background(), "x")
		assert.ErrorIs(t, err, ErrNotFound)
	}
	assert.Equal(t, runtime.Closed, state(t, reg, "quotes"))
}

func TestProbeAndRecovery(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m, w, reg := setup(t)
		ctx := context.Background()
		m.EXPECT().Quote(ctx, "a").Return(0.0, errDown).Times(3)
		for range 3 {
			w.Quote(ctx, "a")
		}
		require.Equal(t, runtime.Open, state(t, reg, "quotes"))
		time.Sleep(10*time.Second + time.Millisecond)
		synctest.Wait()
		assert.Equal(t, runtime.HalfOpen, state(t, reg, "quotes"))
		m.EXPECT().Quote(ctx, "a").Return(42.0, nil)
		v, err := w.Quote(ctx, "a")
		require.NoError(t, err)
		assert.Equal(t, 42.0, v)
		assert.Equal(t, runtime.Closed, state(t, reg, "quotes"))
	})
}

func TestFailedProbeReopens(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m, w, reg := setup(t)
		ctx := context.Background()
		m.EXPECT().Quote(ctx, "a").Return(0.0, errDown).Times(4)
		for range 3 {
			w.Quote(ctx, "a")
		}
		time.Sleep(11 * time.Second)
		_, err := w.Quote(ctx, "a")
		require.ErrorIs(t, err, errDown)
		assert.Equal(t, runtime.Open, state(t, reg, "quotes"))
		_, err = w.Quote(ctx, "a")
		assert.ErrorIs(t, err, runtime.ErrOpen)
	})
}

func TestRoutesAreIndependent(t *testing.T) {
	m, w, reg := setup(t)
	ctx := context.Background()
	m.EXPECT().Indep(ctx).Return(errDown)
	require.ErrorIs(t, w.Indep(ctx), errDown)
	assert.ErrorIs(t, w.Indep(ctx), runtime.ErrOpen)
	// Quote's breaker is untouched.
	m.EXPECT().Quote(ctx, "b").Return(1.0, nil)
	_, err := w.Quote(ctx, "b")
	assert.NoError(t, err)
	assert.Equal(t, runtime.Closed, state(t, reg, "quotes"))
}

func TestBreakerSharedByNameAcrossInterfaces(t *testing.T) {
	ctrl := gomock.NewController(t)
	src, mir := NewMockSource(ctrl), NewMockMirror(ctrl)
	reg := newRegistry()
	w, mw := NewSourceBreaker(src, reg), NewMirrorBreaker(mir, reg)
	ctx := context.Background()
	src.EXPECT().Quote(ctx, "c").Return(0.0, errDown).Times(3)
	for range 3 {
		w.Quote(ctx, "c")
	}
	// The mirror's mock expects nothing: the shared breaker is open.
	_, err := mw.Quote(ctx, "c")
	assert.ErrorIs(t, err, runtime.ErrOpen)
}

func TestVariadicForwarding(t *testing.T) {
	m, w, _ := setup(t)
	ctx := context.Background()
	m.EXPECT().Log(ctx, "%d %s", 1, "two").Return(nil)
	m.EXPECT().Log(ctx, "none").Return(nil)
	assert.NoError(t, w.Log(ctx, "%d %s", 1, "two"))
	assert.NoError(t, w.Log(ctx, "none"))
	args := []any{"a", "b"}
	m.EXPECT().Log(ctx, "%s%s", "a", "b").Return(nil)
	assert.NoError(t, w.Log(ctx, "%s%s", args...))
}

func TestPanicCountsAndIsReraised(t *testing.T) {
	m, w, reg := setup(t)
	ctx := context.Background()
	m.EXPECT().Boom(ctx).DoAndReturn(func(context.Context) error { panic("kaboom") }).Times(3)
	for range 3 {
		assert.PanicsWithValue(t, "kaboom", func() { w.Boom(ctx) })
	}
	b, _ := reg.Lookup("quotes")
	assert.Equal(t, uint64(3), b.Stats().Failures)
	assert.Equal(t, runtime.Open, b.State())
}

func TestTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m, w, reg := setup(t)
		ctx := context.Background()
		m.EXPECT().Slow(gomock.Any()).DoAndReturn(func(ctx context.Context) error {
			dl, ok := ctx.Deadline()
			assert.True(t, ok)
			assert.Equal(t, 50*time.Millisecond, time.Until(dl))
			<-ctx.Done()
			return ctx.Err()
		})
		start := time.Now()
		err := w.Slow(ctx)
		assert.ErrorIs(t, err, context.DeadlineExceeded)
		assert.Equal(t, 50*time.Millisecond, time.Since(start))
		b, _ := reg.Lookup("slow")
		assert.Equal(t, uint64(1), b.Stats().Failures)
	})
}

// TestTimeoutNilCtx: a method with a timeout called with a nil ctx takes
// it as context.Background(), as every guarded call does: the upstream is
// called with the timeout's deadline, and its answer settles the call (a
// caller's nil is not the upstream's failure: it neither panics nor
// re-opens a HALF_OPEN breaker).
func TestTimeoutNilCtx(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctrl := gomock.NewController(t)
		m := NewMockSource(ctrl)
		reg := runtime.NewRegistry(runtime.WithLogger(slog.New(slog.DiscardHandler)),
			runtime.WithConfig(runtime.Config{Name: "slow", FailureThreshold: 1, ResetTimeout: time.Second}))
		w := NewSourceBreaker(m, reg)
		m.EXPECT().Slow(gomock.Any()).Return(errDown)
		require.ErrorIs(t, w.Slow(context.Background()), errDown)
		time.Sleep(time.Second)
		require.Equal(t, runtime.HalfOpen, state(t, reg, "slow"))
		m.EXPECT().Slow(gomock.Any()).DoAndReturn(func(ctx context.Context) error {
			require.NotNil(t, ctx)
			_, ok := ctx.Deadline()
			assert.True(t, ok, "the timeout's deadline")
			return nil
		})
		var nilCtx context.Context
		assert.NoError(t, w.Slow(nilCtx))
		assert.Equal(t, runtime.Closed, state(t, reg, "slow"), "the probe reached the upstream, which answered")
	})
}

func TestRateLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m, w, _ := setup(t)
		ctx := context.Background()
		m.EXPECT().Limited(ctx).Return(nil)
		require.NoError(t, w.Limited(ctx))
		// Burst 1 is spent; the next token is 1s away, beyond maxwait.
		err := w.Limited(ctx)
		assert.ErrorIs(t, err, runtime.ErrRateLimited)
		time.Sleep(time.Second)
		m.EXPECT().Limited(ctx).Return(nil)
		assert.NoError(t, w.Limited(ctx))
	})
}

func TestMethodWithoutContext(t *testing.T) {
	m, w, reg := setup(t)
	m.EXPECT().Sync("s").Return(0, errDown).Times(3)
	for range 3 {
		_, err := w.Sync("s")
		require.ErrorIs(t, err, errDown)
	}
	_, err := w.Sync("s")
	assert.ErrorIs(t, err, runtime.ErrOpen)
	assert.Equal(t, runtime.Open, state(t, reg, "quotes"))
}

func TestUnguardedAndNil(t *testing.T) {
	m, w, _ := setup(t)
	m.EXPECT().Name().Return("src")
	assert.Equal(t, "src", w.Name())
	var nilW = NewSourceBreaker(nil, newRegistry())
	_, err := nilW.Quote(context.Background(), "x")
	assert.ErrorIs(t, err, breakerimpl.ErrNilImpl)
}

func TestDefaultRegistry(t *testing.T) {
	m := NewMockMirror(gomock.NewController(t))
	w := NewMirrorBreaker(m, nil)
	m.EXPECT().Quote(gomock.Any(), "d").Return(2.0, nil)
	v, err := w.Quote(context.Background(), "d")
	require.NoError(t, err)
	assert.Equal(t, 2.0, v)
	_, ok := runtime.Default().Lookup("quotes")
	assert.True(t, ok)
}
