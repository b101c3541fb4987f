package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/breakergen/breakergen/runtime"
	"github.com/breakergen/breakergen/runtime/internal/testkit"
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

// countingClock counts its reads.
type countingClock struct {
	*testkit.Clock
	reads atomic.Int64
}

func (c *countingClock) Now() time.Time {
	c.reads.Add(1)
	return c.Clock.Now()
}

// TestClockReadsPerCall: SPEC §8's cost rules, counted on a clock that
// counts its reads. A CLOSED success reads no clock, a failure reads it
// once (its exact time) and a count window adds no read; a time window,
// slow and inflight read it at most twice a call (a duration needs both
// ends), failing or not, with exact call counts (WithCallCounts) or
// without.
func TestClockReadsPerCall(t *testing.T) {
	for _, tc := range []struct {
		name       string
		cfg        runtime.Config
		success    int64 // most reads a success takes
		failure    int64 // most reads a failure takes
		countedMax int64 // most reads either takes with WithCallCounts
	}{
		{"threshold", runtime.Config{}, 0, 1, 1},
		{"count-window", runtime.Config{WindowCalls: 100}, 0, 1, 1},
		{"time-window", runtime.Config{WindowPeriod: time.Minute}, 2, 2, 2},
		{"slow", runtime.Config{WindowCalls: 100, SlowCall: time.Second}, 2, 2, 2},
		{"slow-time-window", runtime.Config{WindowPeriod: time.Minute, SlowCall: time.Second}, 2, 2, 2},
		{"inflight", runtime.Config{InFlight: time.Minute}, 2, 2, 2},
	} {
		for _, counted := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/counted=%v", tc.name, counted), func(t *testing.T) {
				clk := &countingClock{Clock: testkit.New(testkit.T0)}
				opts := []runtime.Option{runtime.WithoutEnv(), runtime.WithLogger(discardLogger()), runtime.WithClock(clk)}
				if counted {
					opts = append(opts, runtime.WithCallCounts())
				}
				cfg := tc.cfg
				cfg.Name, cfg.FailureThreshold, cfg.ResetTimeout = "reads", 1000, time.Hour
				b := runtime.NewRegistry(opts...).Breaker(cfg)
				succeedOnce(b) // the first call of each kind makes what it needs
				failOnce(b)
				for _, o := range []struct {
					name string
					call func(*runtime.Breaker)
					most int64
				}{{"success", succeedOnce, tc.success}, {"failure", failOnce, tc.failure}} {
					if counted {
						o.most = tc.countedMax
					}
					before := clk.reads.Load()
					o.call(b)
					assert.LessOrEqual(t, clk.reads.Load()-before, o.most, "clock reads of a %s", o.name)
				}
				require.Equal(t, runtime.Closed, b.State())
			})
		}
	}
}
