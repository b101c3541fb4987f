package runtime_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/breakergen/breakergen/runtime"
)

var errBoom = errors.New("boom")

func failOnce(b *runtime.Breaker) {
	_ = b.Do(context.Background(), func(context.Context) error { return errBoom })
}

func succeedOnce(b *runtime.Breaker) {
	_ = b.Do(context.Background(), func(context.Context) error { return nil })
}

// TestLastFailureRealClock: with the real clock the failure's time is the
// breaker's anchor plus the monotonic time since, so it falls between two
// wall-clock readings taken around the call (the wall clock is not stepped
// within a test), give or take the anchor's skew, and carries no monotonic
// reading, like a time read back from JSON.
func TestLastFailureRealClock(t *testing.T) {
	reg := runtime.NewRegistry(runtime.WithoutEnv(), runtime.WithLogger(discardLogger()), runtime.WithCallCounts())
	b := reg.Breaker(runtime.Config{Name: "real"})
	assert.True(t, b.Stats().LastFailure.IsZero(), "no failure yet")

	before := time.Now().Round(0).Add(-runtime.AnchorSkew)
	failOnce(b)
	succeedOnce(b)
	after := time.Now().Round(0)

	st := b.Stats()
	for name, got := range map[string]time.Time{"LastFailure": st.LastFailure, "LastSuccess": st.LastSuccess} {
		assert.False(t, got.Before(before), "%s %s is before the call (%s)", name, got, before)
		assert.False(t, got.After(after), "%s %s is after the call (%s)", name, got, after)
		assert.Equal(t, got, got.Round(0), "%s has no monotonic reading", name)
	}
	assert.False(t, st.LastSuccess.Before(st.LastFailure), "the success came after the failure")

	b.Reset()
	assert.True(t, b.Stats().LastFailure.IsZero(), "Reset clears it")
}

// TestLastFailureSynctest: inside a testing/synctest bubble a failure
// records the bubble's time, to the nanosecond, whether the breaker was
// created in the bubble or outside it (as Default's breakers may be).
func TestLastFailureSynctest(t *testing.T) {
	outside := runtime.NewRegistry(runtime.WithoutEnv(), runtime.WithLogger(discardLogger())).
		Breaker(runtime.Config{Name: "outside", FailureThreshold: 100})
	synctest.Test(t, func(t *testing.T) {
		reg := runtime.NewRegistry(runtime.WithoutEnv(), runtime.WithLogger(discardLogger()))
		inside := reg.Breaker(runtime.Config{Name: "inside", FailureThreshold: 100})
		for _, b := range []*runtime.Breaker{inside, outside} {
			time.Sleep(90*time.Minute + 7*time.Nanosecond)
			failOnce(b)
			want := time.Now()
			require.True(t, want.Equal(b.Stats().LastFailure), "%s: want %s, got %s", b.Name(), want, b.Stats().LastFailure)

			time.Sleep(time.Second)
			failOnce(b)
			assert.True(t, want.Add(time.Second).Equal(b.Stats().LastFailure), b.Name())
		}
	})
}

// TestLastFailureWithClock: a clock given with WithClock is read as it is:
// the failure's time is its Now, whatever the real clock says.
func TestLastFailureWithClock(t *testing.T) {
	reg, clk := newTestRegistry(t)
	b := reg.Breaker(runtime.Config{Name: "fake", FailureThreshold: 100})
	clk.Advance(42 * time.Hour)
	failOnce(b)
	assertTime(t, t0.Add(42*time.Hour), b.Stats().LastFailure)
}

// BenchmarkClockNow is the cost of one clock read on this machine, for
// reading the failure path's figure (it records the failure's time).
func BenchmarkClockNow(b *testing.B) {
	for b.Loop() {
		sinkTime = time.Now()
	}
}

// BenchmarkClockSince is a monotonic-only read (time.Since of a time with a
// monotonic reading): what a failure costs the real clock (see stamps in
// clock.go).
func BenchmarkClockSince(b *testing.B) {
	for b.Loop() {
		sinkDuration = time.Since(benchStart)
	}
}

var sinkTime time.Time

var sinkDuration time.Duration

var benchStart = time.Now()
