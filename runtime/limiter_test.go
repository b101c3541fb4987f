package runtime_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/breakergen/breakergen/runtime"
)

func TestLimiterBurstThenRate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := runtime.NewRegistry(runtime.WithLogger(discardLogger()))
		l := reg.Limiter("eastmoney", 1.5, 3)
		start := time.Now()
		var at []time.Duration
		for range 6 {
			require.NoError(t, l.Wait(context.Background(), 0))
			at = append(at, time.Since(start))
		}
		// The burst of 3 is immediate; then one token every 1/1.5 s.
		step := time.Second * 2 / 3
		want := []time.Duration{0, 0, 0, step, 2 * step, 3 * step}
		for i := range want {
			assert.InDelta(t, want[i], at[i], float64(time.Millisecond), "call %d", i)
		}
	})
}

func TestLimiterRefusesAtOnceWhenTokenComesTooLate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := runtime.NewRegistry(runtime.WithLogger(discardLogger()))
		l := reg.Limiter("em", 1, 1)
		require.True(t, l.Allow())
		start := time.Now()

		err := l.Wait(context.Background(), 500*time.Millisecond) // maxwait
		assert.ErrorIs(t, err, runtime.ErrRateLimited)
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		err = l.Wait(ctx, 0) // the ctx deadline
		assert.ErrorIs(t, err, runtime.ErrRateLimited)
		assert.Equal(t, start, time.Now(), "a refusal returns at once, without sleeping")

		// A refusal takes nothing: the token still arrives after 1s.
		require.NoError(t, l.Wait(context.Background(), time.Second))
		assert.Equal(t, time.Second, time.Since(start))
	})
}

func TestLimiterCanceledWaitGivesTokenBack(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := runtime.NewRegistry(runtime.WithLogger(discardLogger()))
		l := reg.Limiter("em", 1, 1)
		require.True(t, l.Allow())
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error)
		go func() { done <- l.Wait(ctx, 0) }()
		synctest.Wait() // the waiter is parked on its timer
		cancel()
		assert.ErrorIs(t, <-done, context.Canceled)
		start := time.Now()
		require.NoError(t, l.Wait(context.Background(), 0))
		assert.Equal(t, time.Second, time.Since(start), "the next caller gets the token the canceled one reserved")
		assert.False(t, l.Allow())
	})
}

func TestLimiterUnderContention(t *testing.T) {
	// 20 goroutines want a token (burst 5, 5/s) before a deadline 1s away:
	// exactly the ones that fit are admitted (the burst, then tokens at
	// 0.2s, 0.4s, 0.6s and 0.8s; the one at 1s comes too late), and nobody
	// is refused while a token could still come in time.
	synctest.Test(t, func(t *testing.T) {
		reg := runtime.NewRegistry(runtime.WithLogger(discardLogger()))
		l := reg.Limiter("contended", 5, 5)
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		var ok, limited atomic.Int32
		var wg sync.WaitGroup
		for range 20 {
			wg.Go(func() {
				switch err := l.Wait(ctx, 0); {
				case err == nil:
					ok.Add(1)
				case errors.Is(err, runtime.ErrRateLimited):
					limited.Add(1)
				default:
					t.Errorf("unexpected %v", err)
				}
			})
		}
		wg.Wait()
		assert.Equal(t, int32(9), ok.Load(), "burst 5 plus 4 more before the deadline")
		assert.Equal(t, int32(11), limited.Load())
	})
}

func TestBreakerTimersInsideSynctestBubble(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := runtime.NewRegistry(runtime.WithLogger(discardLogger()))
		b := reg.Breaker(runtime.Config{Name: "bubble", FailureThreshold: 1, ResetTimeout: 30 * time.Second})
		trip(t, b)
		time.Sleep(30 * time.Second)
		synctest.Wait()
		assert.Equal(t, runtime.HalfOpen, b.State())
		evs := reg.Events(0)
		require.Len(t, evs, 2)
		assert.Equal(t, "reset 30s elapsed, probing", evs[0].Reason, "the OPEN period, in the words of the reset key")
		b.Reset()
	})
}
