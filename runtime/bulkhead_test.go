package runtime_test

import (
	"context"
	"encoding/json"
	"errors"
	"math/rand/v2"
	goruntime "runtime"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/breakergen/breakergen/runtime"
)

// newLoadRegistry is a registry for tests inside a synctest bubble: the
// real clock, which the bubble fakes.
func newLoadRegistry(opts ...runtime.Option) *runtime.Registry {
	return runtime.NewRegistry(append([]runtime.Option{runtime.WithoutEnv(), runtime.WithLogger(discardLogger())}, opts...)...)
}

// hold starts a call through b that stays in flight until release is
// closed, and returns its error channel once the call is running.
func hold(t *testing.T, b *runtime.Breaker, release <-chan struct{}) <-chan error {
	t.Helper()
	done := make(chan error, 1)
	running := make(chan struct{})
	go func() {
		done <- b.Do(context.Background(), func(context.Context) error {
			close(running)
			<-release
			return nil
		})
	}()
	<-running
	return done
}

// notCalled is an upstream that a refused call must never reach.
func notCalled(t *testing.T) func(context.Context) error {
	return func(context.Context) error {
		t.Error("the upstream was called")
		return nil
	}
}

// TestBulkheadLimit: at most Concurrency calls are in flight; one over the
// limit waits for a slot until its ctx ends, then fails with an error that
// matches ErrBulkheadFull and the ctx's error, without reaching the
// upstream, and counts as neither success nor failure (nor as ignored).
func TestBulkheadLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newLoadRegistry().Breaker(runtime.Config{Name: "slow", Concurrency: 2})
		release := make(chan struct{})
		first, second := hold(t, b, release), hold(t, b, release)
		st := b.Stats()
		assert.Equal(t, 2, st.InFlight)
		assert.Equal(t, 2, st.Concurrency)

		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		start := time.Now()
		err := b.Do(ctx, notCalled(t))
		assert.ErrorIs(t, err, runtime.ErrBulkheadFull)
		assert.ErrorIs(t, err, context.DeadlineExceeded, "the ctx ended the wait")
		assert.Equal(t, time.Second, time.Since(start), "it waited until the deadline")
		assert.Contains(t, err.Error(), "breaker slow: bulkhead full")

		st = b.Stats()
		assert.Equal(t, uint64(1), st.BulkheadFull)
		assert.Zero(t, st.Failures)
		assert.Zero(t, st.Ignored, "a bulkhead refusal is not counted as ignored")
		assert.Equal(t, 2, st.InFlight)

		close(release)
		require.NoError(t, <-first)
		require.NoError(t, <-second)
		assert.Zero(t, b.Stats().InFlight)
	})
}

// TestBulkheadWaiters: calls over the limit wait and get the slots that
// finishing calls free, in the order they came.
func TestBulkheadWaiters(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newLoadRegistry().Breaker(runtime.Config{Name: "slow", Concurrency: 1})
		release := make(chan struct{})
		first := hold(t, b, release)

		var mu sync.Mutex
		var order []int
		var wg sync.WaitGroup
		for i := range 3 {
			wg.Go(func() {
				assert.NoError(t, b.Do(context.Background(), func(context.Context) error {
					mu.Lock()
					defer mu.Unlock()
					order = append(order, i)
					return nil
				}))
			})
			synctest.Wait() // queued before the next one starts
		}
		mu.Lock()
		assert.Empty(t, order, "no slot yet")
		mu.Unlock()
		close(release)
		require.NoError(t, <-first)
		wg.Wait()
		assert.Equal(t, []int{0, 1, 2}, order)
		st := b.Stats()
		assert.Zero(t, st.InFlight)
		assert.Zero(t, st.BulkheadFull)
	})
}

// TestBulkheadCanceledWait: a caller that gives up while it waits gets an
// error matching ErrBulkheadFull and context.Canceled, and leaves the
// queue: the next slot goes to the caller behind it.
func TestBulkheadCanceledWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newLoadRegistry().Breaker(runtime.Config{Name: "slow", Concurrency: 1})
		release := make(chan struct{})
		first := hold(t, b, release)

		ctx, cancel := context.WithCancel(context.Background())
		gaveUp := make(chan error, 1)
		go func() { gaveUp <- b.Do(ctx, notCalled(t)) }()
		synctest.Wait()
		later := make(chan error, 1)
		go func() { later <- b.Do(context.Background(), func(context.Context) error { return nil }) }()
		synctest.Wait()

		cancel()
		err := <-gaveUp
		assert.ErrorIs(t, err, runtime.ErrBulkheadFull)
		assert.ErrorIs(t, err, context.Canceled)
		close(release)
		require.NoError(t, <-first)
		require.NoError(t, <-later, "the slot went to the caller still waiting")
		st := b.Stats()
		assert.Equal(t, uint64(1), st.BulkheadFull)
		assert.Zero(t, st.Ignored)
		assert.Zero(t, st.InFlight)

		// A ctx already done never queues.
		release = make(chan struct{})
		first = hold(t, b, release)
		err = b.Do(ctx, notCalled(t))
		assert.ErrorIs(t, err, runtime.ErrBulkheadFull)
		assert.ErrorIs(t, err, context.Canceled)
		close(release)
		require.NoError(t, <-first)
	})
}

// TestBulkheadFreedOnEveryExit: the slot is given back however the call
// ends: success, failure, panic, runtime.Goexit, an Acquire released with
// Release or Record.
func TestBulkheadFreedOnEveryExit(t *testing.T) {
	b := newLoadRegistry().Breaker(runtime.Config{Name: "one", Concurrency: 1, FailureThreshold: 100})
	ctx := context.Background()
	exits := map[string]func(){
		"success": func() { require.NoError(t, b.Do(ctx, func(context.Context) error { return nil })) },
		"failure": func() {
			require.Error(t, b.Do(ctx, func(context.Context) error { return errors.New("boom") }))
		},
		"panic": func() {
			assert.PanicsWithValue(t, "boom", func() {
				_ = b.Do(ctx, func(context.Context) error { panic("boom") })
			})
		},
		"goexit": func() {
			done := make(chan struct{})
			go func() {
				defer close(done)
				_ = b.Do(ctx, func(context.Context) error { goruntime.Goexit(); return nil })
			}()
			<-done
		},
		"release": func() {
			tok, err := b.Acquire(ctx)
			require.NoError(t, err)
			assert.Equal(t, 1, b.Stats().InFlight)
			b.Release(tok, errors.New("boom"))
		},
		"record": func() {
			tok, err := b.Acquire(ctx)
			require.NoError(t, err)
			b.Record(tok, runtime.Ignored, nil)
		},
	}
	for name, exit := range exits {
		exit()
		st := b.Stats()
		assert.Zero(t, st.InFlight, name)
		assert.Zero(t, st.BulkheadFull, name)
	}
	st := b.Stats()
	assert.Equal(t, uint64(3), st.Failures, "failure, panic and Release's error")
	assert.Equal(t, uint64(2), st.Ignored, "Goexit and Record's Ignored")
}

// TestBulkheadRejectionTakesNoSlot: the breaker decides first; a call it
// rejects never reaches the bulkhead, and a probe the bulkhead refuses
// gives its probe slot back.
func TestBulkheadRejectionTakesNoSlot(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newLoadRegistry().Breaker(runtime.Config{Name: "flaky", Concurrency: 2, FailureThreshold: 1,
			ResetTimeout: 10 * time.Second, HalfOpenMax: 2})
		release := make(chan struct{})
		admittedClosed := hold(t, b, release) // admitted in CLOSED, still running
		require.Error(t, b.Do(context.Background(), func(context.Context) error { return errors.New("boom") }))
		require.Equal(t, runtime.Open, b.State())

		err := b.Do(context.Background(), notCalled(t))
		assert.ErrorIs(t, err, runtime.ErrOpen)
		assert.NotErrorIs(t, err, runtime.ErrBulkheadFull)
		assert.Equal(t, 1, b.Stats().InFlight, "the rejection took no slot")

		time.Sleep(10 * time.Second) // the reset passes (virtual time)
		synctest.Wait()
		require.Equal(t, runtime.HalfOpen, b.State())
		probe := hold(t, b, release) // takes the last slot
		st := b.Stats()
		require.Equal(t, 1, st.ProbesInFlight)
		require.Equal(t, 2, st.InFlight)

		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		err = b.Do(ctx, notCalled(t)) // a second probe, refused by the bulkhead
		assert.ErrorIs(t, err, runtime.ErrBulkheadFull)
		st = b.Stats()
		assert.Equal(t, 1, st.ProbesInFlight, "the refused probe gave its probe slot back")
		assert.Equal(t, runtime.HalfOpen, st.State, "and counted as no failure")

		close(release)
		require.NoError(t, <-admittedClosed)
		require.NoError(t, <-probe)
		st = b.Stats()
		assert.Equal(t, runtime.Closed, st.State)
		assert.Zero(t, st.InFlight)
	})
}

// TestBulkheadLostProbe: a probe whose slot the breaker reclaims (it ran
// past the reset window) still holds its concurrency slot, since it is
// still running; it frees it, once, when it ends.
func TestBulkheadLostProbe(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newLoadRegistry().Breaker(runtime.Config{Name: "hung", Concurrency: 1, FailureThreshold: 1,
			ResetTimeout: 10 * time.Second})
		require.Error(t, b.Do(context.Background(), func(context.Context) error { return errors.New("boom") }))
		time.Sleep(10 * time.Second)
		synctest.Wait() // the breaker's timer has run
		release := make(chan struct{})
		probe := hold(t, b, release)
		time.Sleep(10 * time.Second) // the probe is lost: reclaimed as a failure
		synctest.Wait()
		st := b.Stats()
		require.Equal(t, runtime.Open, st.State)
		assert.Equal(t, uint64(2), st.Failures)
		assert.Equal(t, 1, st.InFlight, "the hung call still holds its slot")

		close(release)
		require.NoError(t, <-probe)
		st = b.Stats()
		assert.Zero(t, st.InFlight, "freed when the lost probe ended")
		assert.Equal(t, uint64(2), st.Failures, "its late outcome is not counted")

		time.Sleep(10 * time.Second)
		synctest.Wait()
		require.NoError(t, b.Do(context.Background(), func(context.Context) error {
			assert.Equal(t, 1, b.Stats().InFlight, "one slot, not two: freed exactly once")
			return nil
		}))
		assert.Equal(t, runtime.Closed, b.State())
	})
}

// TestBulkheadReset: Reset clears the refusal count but not the slots of
// calls still running, which free them when they end.
func TestBulkheadReset(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newLoadRegistry().Breaker(runtime.Config{Name: "slow", Concurrency: 1})
		release := make(chan struct{})
		first := hold(t, b, release)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		require.ErrorIs(t, b.Do(ctx, notCalled(t)), runtime.ErrBulkheadFull)
		require.Equal(t, uint64(1), b.Stats().BulkheadFull)

		b.Reset()
		st := b.Stats()
		assert.Zero(t, st.BulkheadFull)
		assert.Equal(t, 1, st.InFlight)
		close(release)
		require.NoError(t, <-first)
		assert.Zero(t, b.Stats().InFlight)
	})
}

// TestBulkheadConfig: no bulkhead unless Concurrency >= 1.
func TestBulkheadConfig(t *testing.T) {
	reg := newLoadRegistry()
	for _, n := range []int{0, -3} {
		b := reg.Breaker(runtime.Config{Name: "none", Concurrency: n})
		require.NoError(t, b.Do(context.Background(), func(context.Context) error {
			st := b.Stats()
			assert.Zero(t, st.Concurrency)
			assert.Zero(t, st.InFlight)
			return nil
		}))
	}
}

// TestBulkheadConcurrent: under any number of goroutines, at most
// Concurrency calls reach the upstream at once, and every call gets its
// turn.
func TestBulkheadConcurrent(t *testing.T) {
	const limit, goroutines, calls = 3, 32, 50
	b := newLoadRegistry().Breaker(runtime.Config{Name: "busy", Concurrency: limit})
	var now, most, made atomic.Int64
	upstream := func(context.Context) error {
		n := now.Add(1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		goruntime.Gosched()
		made.Add(1)
		now.Add(-1)
		return nil
	}
	var wg sync.WaitGroup
	for range goroutines {
		wg.Go(func() {
			for range calls {
				assert.NoError(t, b.Do(context.Background(), upstream))
			}
		})
	}
	wg.Wait()
	assert.LessOrEqual(t, most.Load(), int64(limit))
	assert.Equal(t, int64(goroutines*calls), made.Load())
	assert.Zero(t, b.Stats().InFlight)
}

// TestLoadHealthJSON: the Health JSON shows the calls in flight against
// the limit, the refusals, and the throttle's probability.
func TestLoadHealthJSON(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := newLoadRegistry(runtime.WithRand(rand.New(&draws{vals: []float64{0.999}})))
		b := reg.Breaker(runtime.Config{Name: "slow", Concurrency: 2, Throttle: 1, FailureThreshold: 100})
		require.Error(t, b.Do(context.Background(), func(context.Context) error { return errors.New("boom") }))
		release := make(chan struct{})
		held := hold(t, b, release)

		raw, err := json.Marshal(reg.Health())
		require.NoError(t, err)
		var h struct {
			Breakers []map[string]any `json:"breakers"`
		}
		require.NoError(t, json.Unmarshal(raw, &h))
		require.Len(t, h.Breakers, 1)
		got := h.Breakers[0]
		assert.Equal(t, 1.0, got["in_flight"])
		assert.Equal(t, 2.0, got["concurrency"])
		assert.Equal(t, 2/3.0, got["throttle_probability"], "R 2 (the failure and the held call), A 0")
		assert.NotContains(t, got, "throttled", "left out while zero")
		close(release)
		require.NoError(t, <-held)
	})
}

// TestThrottleShownAtZero: a breaker with a throttle shows it (SPEC §9:
// "the throttle's current refusal probability") before it has refused
// anything: its K and a probability of zero are in the Stats and the
// Health JSON; without one, neither is; after Registry.Update turns it
// off, neither is again.
func TestThrottleShownAtZero(t *testing.T) {
	reg := newLoadRegistry()
	b := reg.Breaker(runtime.Config{Name: "throttled", Throttle: 2})
	plain := reg.Breaker(runtime.Config{Name: "plain"})
	require.NoError(t, b.Do(context.Background(), func(context.Context) error { return nil }))
	assert.Equal(t, 2.0, b.Stats().Throttle)

	breakers := func() map[string]map[string]any {
		raw, err := json.Marshal(reg.Health())
		require.NoError(t, err)
		var h struct {
			Breakers []map[string]any `json:"breakers"`
		}
		require.NoError(t, json.Unmarshal(raw, &h))
		out := map[string]map[string]any{}
		for _, s := range h.Breakers {
			out[s["name"].(string)] = s
		}
		return out
	}
	got := breakers()
	assert.Equal(t, 2.0, got["throttled"]["throttle"])
	assert.Contains(t, got["throttled"], "throttle_probability", "in the JSON at zero while there is a throttle")
	assert.Equal(t, 0.0, got["throttled"]["throttle_probability"])
	assert.NotContains(t, got["plain"], "throttle")
	assert.NotContains(t, got["plain"], "throttle_probability")
	assert.Zero(t, plain.Stats().Throttle)

	require.NoError(t, reg.Update(runtime.Config{Name: "throttled", Off: runtime.SettingThrottle}))
	got = breakers()
	assert.NotContains(t, got["throttled"], "throttle", "turned off")
	assert.NotContains(t, got["throttled"], "throttle_probability", "turned off")
}
