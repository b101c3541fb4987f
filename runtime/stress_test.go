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
	"github.com/breakergen/breakergen/runtime/breakerimpl"
)

// TestStressManyGoroutines hammers one breaker and one route from many
// goroutines with mixed outcomes while time moves and hooks read back. Run
// under -race it checks the lock-free paths; its assertions check that the
// counters add up and the state machine never breaks its invariants. It
// runs in a bubble so that synctest.Wait can wait for the registry's
// goroutine that delivers a backlog of events to the hooks.
func TestStressManyGoroutines(t *testing.T) {
	synctest.Test(t, stressManyGoroutines)
}

func stressManyGoroutines(t *testing.T) {
	clk := newFakeClock()
	var hookEvents atomic.Int64
	var reg *runtime.Registry
	reg = runtime.NewRegistry(runtime.WithClock(clk), runtime.WithLogger(discardLogger()), runtime.WithCallCounts(),
		runtime.WithEventCapacity(1<<20),
		runtime.OnStateChange(func(ev runtime.Event) {
			hookEvents.Add(1)
			if b, ok := reg.Lookup(ev.Source); ok {
				_ = b.Stats()
			}
		}))
	rt := breakerimpl.NewRoute(reg, anyImpl, breakerimpl.RouteConfig{Breaker: runtime.Config{Name: "stress", FailureThreshold: 3, ResetTimeout: 50 * time.Millisecond, HalfOpenMax: 2}})
	b := rt.Breaker()

	const workers, calls = 16, 2000
	var admitted, rejected, maxProbes atomic.Int64
	var inProbe atomic.Int64
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range calls {
				if i%20 == 0 { // time moves with the work, timers firing on this goroutine
					clk.Advance(5 * time.Millisecond)
				}
				ctx := context.Background()
				// Half the workers go the generated wrappers' way:
				// EnterFast first, Enter only when it declines.
				call, ok := breakerimpl.Call{}, false
				if w%2 == 0 {
					call, ok = rt.EnterFast()
				}
				if !ok {
					var err error
					if call, err = rt.Enter(ctx); err != nil {
						require.ErrorIs(t, err, runtime.ErrOpen)
						rejected.Add(1)
						continue
					}
				}
				admitted.Add(1)
				probing := b.State() == runtime.HalfOpen
				if probing {
					n := inProbe.Add(1)
					for {
						m := maxProbes.Load()
						if n <= m || maxProbes.CompareAndSwap(m, n) {
							break
						}
					}
				}
				var callErr error
				if (i/100+w)%2 == 0 { // outages of 100 calls per worker
					callErr = errors.New("flaky")
				}
				call.Exit(ctx, &callErr)
				if probing {
					inProbe.Add(-1)
				}
			}
		})
	}
	wg.Wait()
	synctest.Wait() // a backlog's delivery goroutine, if any, has ended

	st := b.Stats()
	assert.Equal(t, uint64(admitted.Load()), st.Calls, "every admitted call counted once")
	assert.Equal(t, uint64(rejected.Load()), st.Rejections)
	assert.Equal(t, st.Calls, st.Successes+st.Failures+st.Ignored, "outcomes add up")
	assert.Equal(t, 0, st.ProbesInFlight)
	evs := reg.Events(1 << 20)
	assert.Equal(t, int(st.StateChanges), len(evs), "one event per transition")
	assert.Equal(t, int64(len(evs)), hookEvents.Load(), "one hook call per transition")
	for i := 1; i < len(evs); i++ {
		// Events chain: each starts where the previous (older) one ended.
		assert.Equal(t, evs[i].To, evs[i-1].From, "event %d", i)
	}
	require.GreaterOrEqual(t, len(evs), 3, "the run must trip and probe under load")

	// How far the run got past its last trip depends on the scheduler (a
	// goroutine that runs a timer can be descheduled while the others make
	// every call they have left), so recovery is checked after it: once the
	// reset has elapsed, one success closes the breaker.
	clk.Advance(time.Second)
	var ok error
	call, err := rt.Enter(context.Background())
	require.NoError(t, err, "a probe after the reset")
	call.Exit(context.Background(), &ok)
	assert.Equal(t, runtime.Closed, b.State(), "recovered")
	synctest.Wait()
	assert.Equal(t, int64(b.Stats().StateChanges), hookEvents.Load(), "one hook call per transition")
}

func TestZeroAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under -race: make allocs runs this test without it")
	}
	reg, _ := newTestRegistry(t)
	ctx := context.Background()
	ok := breakerimpl.NewRoute(reg, anyImpl, breakerimpl.RouteConfig{Breaker: runtime.Config{Name: "ok"}})
	failing := breakerimpl.NewRoute(reg, anyImpl, breakerimpl.RouteConfig{Breaker: runtime.Config{Name: "fail", FailureThreshold: 1 << 30}})
	open := breakerimpl.NewRoute(reg, anyImpl, breakerimpl.RouteConfig{Breaker: runtime.Config{Name: "open", FailureThreshold: 1}})
	trip(t, open.Breaker())
	upstream := errors.New("down")
	guarded := func(rt *breakerimpl.Route, callErr error) (err error) {
		call, err := rt.Enter(ctx)
		if err != nil {
			return err
		}
		defer call.Exit(ctx, &err)
		err = breakerimpl.PanicGuard
		return callErr
	}
	assert.Zero(t, testing.AllocsPerRun(1000, func() { _ = guarded(ok, nil) }), "success")
	assert.Zero(t, testing.AllocsPerRun(1000, func() { _ = guarded(failing, upstream) }), "failure")
	assert.Zero(t, testing.AllocsPerRun(1000, func() { _ = guarded(open, nil) }), "rejection")
	b := ok.Breaker()
	assert.Zero(t, testing.AllocsPerRun(1000, func() {
		tok, err := b.Acquire(ctx)
		if err == nil {
			b.Release(tok, nil)
		}
	}), "two-step API")
	l := reg.Limiter("free", 1e9, 1<<20)
	assert.Zero(t, testing.AllocsPerRun(1000, func() { _ = l.Wait(ctx, 0) }), "limiter with a token ready")
}
