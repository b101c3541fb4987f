package runtime_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	goruntime "runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/breakergen/breakergen/runtime"
)

// TestHookOnTimerGoroutine: the OPEN → HALF_OPEN move is made by a timer
// when nobody looks at the state, so its hook runs on the timer's
// goroutine, beside the caller's. What the hook writes is read under the
// hook's lock, after the bubble has settled; make test runs this many
// times under -race.
func TestHookOnTimerGoroutine(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex // guards seen
		var seen []string
		reg := runtime.NewRegistry(runtime.WithoutEnv(), runtime.WithLogger(discardLogger()),
			runtime.OnStateChange(func(ev runtime.Event) {
				mu.Lock()
				defer mu.Unlock()
				seen = append(seen, ev.From.String()+"→"+ev.To.String())
			}))
		hooked := func() []string {
			mu.Lock()
			defer mu.Unlock()
			return slices.Clone(seen)
		}
		b := reg.Breaker(runtime.Config{Name: "timer", FailureThreshold: 1, ResetTimeout: time.Second})
		err := b.Do(context.Background(), func(context.Context) error { return errors.New("down") })
		require.Error(t, err)
		assert.Equal(t, []string{"CLOSED→OPEN"}, hooked(), "the caller's goroutine ran the trip's hook")

		time.Sleep(time.Second)
		synctest.Wait() // the timer's goroutine has run the hook
		assert.Equal(t, []string{"CLOSED→OPEN", "OPEN→HALF_OPEN"}, hooked())
		assert.Len(t, reg.Events(0), 2)
	})
}

// TestStalledSinkBoundsTheEventQueue: a hook that blocks (a stalled sink)
// while a storm of transitions goes on. The queue never holds more than
// its capacity, the oldest queued events are dropped and counted, the
// callers return while the hook is still blocked, and once it is released
// every event left in the queue is delivered, in order: the caller that
// was stuck in the hook delivers at most 16 events and a goroutine of the
// registry the rest.
func TestStalledSinkBoundsTheEventQueue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const capacity, storm = 64, 5000
		var logs logBuffer
		var mu sync.Mutex // guards delivered
		var delivered []runtime.Event
		stalled := make(chan int)         // the hook is blocked on its nth call
		release := make(chan struct{}, 2) // lets a blocked hook return
		reg := runtime.NewRegistry(runtime.WithoutEnv(), runtime.WithLogger(logs.logger()),
			runtime.WithEventCapacity(storm+1), runtime.WithEventQueueCapacity(capacity),
			runtime.OnStateChange(func(ev runtime.Event) {
				mu.Lock()
				delivered = append(delivered, ev)
				n := len(delivered)
				mu.Unlock()
				if n == 1 || n == 17 { // the stuck caller's first, the goroutine's first
					stalled <- n
					<-release
				}
			}))
		got := func() []runtime.Event {
			mu.Lock()
			defer mu.Unlock()
			return slices.Clone(delivered)
		}
		boom := errors.New("boom")

		// A caller trips "first" and is stuck in the hook of its transition.
		first := reg.Breaker(runtime.Config{Name: "first", FailureThreshold: 1})
		firstDone := make(chan struct{})
		go func() {
			defer close(firstDone)
			_ = first.Do(context.Background(), func(context.Context) error { return boom })
		}()
		require.Equal(t, 1, <-stalled)

		// The storm: every Release trips a breaker while the hook is blocked,
		// and returns; the queue stays within its capacity.
		var breakers []*runtime.Breaker
		for _, name := range []string{"a", "b", "c", "d"} {
			breakers = append(breakers, reg.Breaker(runtime.Config{Name: name, FailureThreshold: 1}))
		}
		maxLen := 0
		for i := range storm {
			b := breakers[i%len(breakers)]
			tok, err := b.Acquire(context.Background())
			require.NoError(t, err)
			b.Release(tok, boom) // CLOSED → OPEN, queued
			b.Reset()            // records no event
			maxLen = max(maxLen, reg.QueueLen())
		}
		assert.Equal(t, capacity, maxLen, "the queue never holds more than its capacity")
		assert.Len(t, got(), 1, "the hook is still blocked on the first event")
		assert.Equal(t, uint64(storm-capacity), reg.DroppedEvents(), "the oldest queued events were dropped")
		h := reg.Health()
		assert.Equal(t, uint64(storm-capacity), h.DroppedEvents)
		js, err := json.Marshal(h)
		require.NoError(t, err)
		assert.Contains(t, string(js), fmt.Sprintf(`"dropped_events":%d`, storm-capacity))
		var heap goruntime.MemStats
		goruntime.GC()
		goruntime.ReadMemStats(&heap)
		t.Logf("stalled sink, %d transitions offered: queue %d/%d, %d dropped, heap %d KB",
			storm+1, reg.QueueLen(), capacity, reg.DroppedEvents(), heap.HeapAlloc>>10)

		// Released, the stuck caller delivers 15 more (16 in all) and hands
		// the rest to a goroutine, whose first hook call blocks: the caller
		// returns all the same.
		release <- struct{}{}
		require.Equal(t, 17, <-stalled)
		synctest.Wait()
		select {
		case <-firstDone:
		default:
			t.Fatal("the caller is still delivering events beyond its 16")
		}
		release <- struct{}{}
		synctest.Wait() // the goroutine has delivered the rest and ended

		// Delivered: the first event, then the newest capacity events of the
		// storm, in the order they were recorded; offered = delivered +
		// dropped; the log has every event.
		events := reg.Events(storm + 1) // newest first
		require.Len(t, events, storm+1, "the log keeps every event, dropped or not")
		slices.Reverse(events)
		want := append(events[:1:1], events[len(events)-capacity:]...)
		assert.Equal(t, want, got())
		assert.Equal(t, storm+1, len(got())+int(reg.DroppedEvents()), "offered = delivered + dropped")
		assert.Zero(t, reg.QueueLen())
		assert.Equal(t, 1, strings.Count(logs.String(), "dropped from the full event queue"), logs.String())
		assert.Contains(t, logs.String(), fmt.Sprintf("dropped=%d", storm-capacity))
		assert.Equal(t, capacity+1, strings.Count(logs.String(), "from=CLOSED to=OPEN"), "one log line per delivered event")

		// With the sink keeping up again, nothing more is dropped.
		trip(t, breakers[0])
		assert.Equal(t, uint64(storm-capacity), reg.DroppedEvents())
		assert.Len(t, got(), capacity+2)
	})
}

// BenchmarkStalledSinkStorm makes b.N transitions while the registry's one
// hook is blocked, with the default queue and log capacities, and reports
// the heap after the storm (after a GC), the events dropped and the events
// left queued. Run with a fixed count to compare, e.g.
// go test -run '^$' -bench StalledSinkStorm -benchtime 1000000x ./runtime/
func BenchmarkStalledSinkStorm(b *testing.B) {
	stalled, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	reg := runtime.NewRegistry(runtime.WithoutEnv(), runtime.WithLogger(discardLogger()),
		runtime.OnStateChange(func(runtime.Event) { once.Do(func() { close(stalled); <-release }) }))
	stuck := reg.Breaker(runtime.Config{Name: "stuck", FailureThreshold: 1})
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = stuck.Do(context.Background(), func(context.Context) error { return errors.New("down") })
	}()
	<-stalled
	var breakers []*runtime.Breaker
	for i := range 4 {
		breakers = append(breakers, reg.Breaker(runtime.Config{Name: fmt.Sprintf("storm%d", i), FailureThreshold: 1}))
	}
	boom := errors.New("boom")
	ctx := context.Background()
	i := 0
	for b.Loop() {
		br := breakers[i%len(breakers)]
		i++
		tok, err := br.Acquire(ctx)
		if err != nil {
			b.Fatal(err)
		}
		br.Release(tok, boom) // CLOSED → OPEN
		br.Reset()
	}
	var mem goruntime.MemStats
	goruntime.GC()
	goruntime.ReadMemStats(&mem)
	b.ReportMetric(float64(mem.HeapAlloc)/(1<<20), "heap-MiB")
	b.ReportMetric(float64(reg.DroppedEvents()), "dropped")
	b.ReportMetric(float64(reg.QueueLen()), "queued")
	close(release)
	<-done
}

// TestEventQueueCapacityBadInput: a capacity below 1 is ignored, and the
// default queue delivers every event while the hooks keep up.
func TestEventQueueCapacityBadInput(t *testing.T) {
	var seen []runtime.Event
	reg, clk := newTestRegistry(t, runtime.WithEventQueueCapacity(0), runtime.WithEventQueueCapacity(-1),
		runtime.OnStateChange(func(ev runtime.Event) { seen = append(seen, ev) }))
	b := reg.Breaker(runtime.Config{Name: "q", FailureThreshold: 1, ResetTimeout: time.Second})
	for range 3 * runtime.EventQueueCapacity {
		trip(t, b)
		clk.Advance(time.Second) // OPEN → HALF_OPEN, on this goroutine
		b.Reset()
	}
	assert.Len(t, seen, 6*runtime.EventQueueCapacity, "every transition hooked, on the caller's goroutine")
	assert.Zero(t, reg.DroppedEvents())
	assert.Zero(t, reg.Health().DroppedEvents)
}

// panicHandler is a slog handler that panics on every record.
type panicHandler struct{ slog.Handler }

func (panicHandler) Enabled(context.Context, slog.Level) bool  { return true }
func (panicHandler) Handle(context.Context, slog.Record) error { panic("handler broke") }

// TestPanickingLogHandler: a slog handler that panics loses its lines, but
// the caller does not see the panic and the hooks keep running.
func TestPanickingLogHandler(t *testing.T) {
	var mu sync.Mutex // guards seen
	seen := 0
	reg := runtime.NewRegistry(runtime.WithoutEnv(), runtime.WithLogger(slog.New(panicHandler{})),
		runtime.OnStateChange(func(runtime.Event) {
			mu.Lock()
			defer mu.Unlock()
			seen++
		}))
	for i := range 3 {
		b := reg.Breaker(runtime.Config{Name: "p" + strconv.Itoa(i), FailureThreshold: 1})
		assert.NotPanics(t, func() {
			_ = b.Do(context.Background(), func(context.Context) error { return errors.New("down") })
		})
	}
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, 3, seen, "every trip reached the hook")
}

// TestHooksInRecordOrderUnderLoad: eight breakers trip and resume at once,
// each on a goroutine of its own; the hooks see the 800 transitions in
// the order Registry.Events has them (fewer than the queue holds, so none
// is dropped). make test runs this many times under -race.
func TestHooksInRecordOrderUnderLoad(t *testing.T) {
	const breakers, rounds = 8, 50
	const total = breakers * rounds * 2
	var mu sync.Mutex
	var hooked []runtime.Event
	all := make(chan struct{})
	reg := runtime.NewRegistry(runtime.WithoutEnv(), runtime.WithEventCapacity(total), runtime.OnStateChange(func(ev runtime.Event) {
		mu.Lock()
		defer mu.Unlock()
		if hooked = append(hooked, ev); len(hooked) == total {
			close(all)
		}
	}))
	fail := func(context.Context) error { return errors.New("boom") }
	var wg sync.WaitGroup
	for i := range breakers {
		b := reg.Breaker(runtime.Config{Name: fmt.Sprintf("h%d", i), FailureThreshold: 1, ResetTimeout: time.Hour})
		wg.Go(func() {
			for range rounds {
				_ = b.Do(context.Background(), fail)
				b.Resume("again")
			}
		})
	}
	wg.Wait()
	<-all
	require.Zero(t, reg.DroppedEvents())
	logged := reg.Events(total) // newest first
	slices.Reverse(logged)
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, logged, total)
	for i := range logged {
		require.Equal(t, logged[i], hooked[i], "hook %d of %d", i, total)
	}
}
