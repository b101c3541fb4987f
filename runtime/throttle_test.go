package runtime_test

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/breakergen/breakergen/runtime"
)

// draws is a rand.Source whose Float64 draws are the given values, in
// turn (each a multiple of 2⁻⁵³ in [0, 1), so that it comes back exact);
// it counts how many were taken.
type draws struct {
	vals  []float64
	taken int
}

func (d *draws) Uint64() uint64 {
	v := d.vals[d.taken%len(d.vals)]
	d.taken++
	return uint64(v * (1 << 53))
}

// sreProbability is the formula of SPEC §9, written out.
func sreProbability(requests, accepted int, k float64) float64 {
	return math.Max(0, (float64(requests)-k*float64(accepted))/float64(requests+1))
}

// call makes one call through b whose upstream returns err.
func call(b *runtime.Breaker, err error) error {
	return b.Do(context.Background(), func(context.Context) error { return err })
}

// TestThrottleProbability: the refusal probability is the SRE book's
// formula over the requests and accepted calls counted so far, exactly,
// and no draw is made while it is zero.
func TestThrottleProbability(t *testing.T) {
	src := &draws{vals: []float64{0.999}}
	reg, _ := newTestRegistry(t, runtime.WithRand(rand.New(src)))
	b := reg.Breaker(runtime.Config{Name: "flaky", Throttle: 2, FailureThreshold: 1000})

	requests, accepted := 0, 0
	for i := range 40 {
		var err error
		if i%3 != 0 {
			err = errBoom // two in three fail
		}
		got := call(b, err)
		if errors.Is(got, runtime.ErrThrottled) {
			t.Fatalf("call %d throttled with draw 0.999 at probability %v", i, b.Stats().ThrottleProbability)
		}
		requests++
		if err == nil {
			accepted++
		}
		assert.Equal(t, sreProbability(requests, accepted, 2), b.Stats().ThrottleProbability, "after call %d", i)
	}
	assert.Positive(t, b.Stats().ThrottleProbability)

	fresh := reg.Breaker(runtime.Config{Name: "healthy", Throttle: 2})
	taken := src.taken
	for range 10 {
		require.NoError(t, call(fresh, nil))
	}
	assert.Zero(t, fresh.Stats().ThrottleProbability)
	assert.Equal(t, taken, src.taken, "no draw while the probability is zero")
}

// TestThrottleRefuses: a call is refused when the draw falls below the
// probability, computed before the call is counted; the refused call
// counts in the requests, never reaches the upstream, and counts as
// neither success nor failure (nor as ignored).
func TestThrottleRefuses(t *testing.T) {
	src := &draws{vals: []float64{0.75}}
	reg, _ := newTestRegistry(t, runtime.WithRand(rand.New(src)))
	b := reg.Breaker(runtime.Config{Name: "flaky", Throttle: 1, FailureThreshold: 1000})
	for range 3 {
		require.ErrorIs(t, call(b, errBoom), errBoom) // p: 0, 1/2, 2/3 < 0.75
	}
	require.NoError(t, call(b, nil), "p = 3/4, admitted by a draw of 0.75")
	require.Equal(t, sreProbability(4, 1, 1), b.Stats().ThrottleProbability) // 3/5

	src.vals = []float64{0.5} // below 3/5: refused
	err := b.Do(context.Background(), notCalled(t))
	require.ErrorIs(t, err, runtime.ErrThrottled)
	assert.Contains(t, err.Error(), "breaker flaky: throttled")
	st := b.Stats()
	assert.Equal(t, uint64(1), st.Throttled)
	assert.Equal(t, uint64(3), st.Failures, "a refusal is no failure")
	assert.Zero(t, st.Ignored, "nor ignored")
	assert.Zero(t, st.ConsecutiveFailures, "nor does it touch the count")
	assert.Equal(t, sreProbability(5, 1, 1), st.ThrottleProbability, "the refused call counts in R")

	src.vals = []float64{0.6} // below 4/6: refused
	require.ErrorIs(t, call(b, nil), runtime.ErrThrottled)
	require.Equal(t, sreProbability(6, 1, 1), b.Stats().ThrottleProbability) // 5/7

	src.vals = []float64{0.75} // not below 5/7: admitted
	require.NoError(t, call(b, nil))
	assert.Equal(t, sreProbability(7, 2, 1), b.Stats().ThrottleProbability)
	assert.Equal(t, uint64(2), b.Stats().Throttled)
	assert.Equal(t, 6, src.taken, "one draw per call but the first, whose probability was zero")
}

// TestThrottleWindow: the counts are kept in 10-second buckets over two
// minutes: a call is forgotten between 110 and 120 seconds after it was
// counted.
func TestThrottleWindow(t *testing.T) {
	reg, clk := newTestRegistry(t, runtime.WithRand(rand.New(&draws{vals: []float64{0.999}})))
	b := reg.Breaker(runtime.Config{Name: "flaky", Throttle: 1, FailureThreshold: 1000})
	require.Zero(t, t0.UnixNano()%int64(10*time.Second), "t0 starts a bucket")
	for range 4 {
		require.Error(t, call(b, errBoom))
	}
	clk.Advance(60 * time.Second)
	require.Error(t, call(b, errBoom))
	assert.Equal(t, sreProbability(5, 0, 1), b.Stats().ThrottleProbability)

	clk.Advance(59*time.Second + 999*time.Millisecond) // t0 + 119.999s
	assert.Equal(t, sreProbability(5, 0, 1), b.Stats().ThrottleProbability)
	clk.Advance(time.Millisecond) // t0 + 120s: the first bucket leaves
	assert.Equal(t, sreProbability(1, 0, 1), b.Stats().ThrottleProbability)
	clk.Advance(time.Hour)
	assert.Zero(t, b.Stats().ThrottleProbability, "everything forgotten")

	require.Error(t, call(b, errBoom))
	assert.Equal(t, sreProbability(1, 0, 1), b.Stats().ThrottleProbability, "and counting again")
}

// TestThrottleReset: Reset forgets the window and the refusal count.
func TestThrottleReset(t *testing.T) {
	reg, _ := newTestRegistry(t, runtime.WithRand(rand.New(&draws{vals: []float64{0}})))
	b := reg.Breaker(runtime.Config{Name: "flaky", Throttle: 1, FailureThreshold: 1000})
	require.Error(t, call(b, errBoom))
	require.ErrorIs(t, call(b, nil), runtime.ErrThrottled)
	b.Reset()
	st := b.Stats()
	assert.Zero(t, st.ThrottleProbability)
	assert.Zero(t, st.Throttled)
	require.NoError(t, call(b, nil))
}

// TestThrottleConfig: K below 1 is taken as 1; NaN, infinite and
// non-positive values mean no throttle.
func TestThrottleConfig(t *testing.T) {
	reg, _ := newTestRegistry(t, runtime.WithRand(nil)) // ignored
	for i, k := range []float64{0, -1, math.NaN(), math.Inf(1)} {
		b := reg.Breaker(runtime.Config{Name: "none" + string(rune('a'+i)), Throttle: k, FailureThreshold: 1000})
		for range 5 {
			require.Error(t, call(b, errBoom))
		}
		assert.Zero(t, b.Stats().ThrottleProbability, "K=%v", k)
	}
	b := reg.Breaker(runtime.Config{Name: "half", Throttle: 0.5, FailureThreshold: 1000})
	require.NoError(t, call(b, nil))
	require.NoError(t, call(b, nil))
	require.Error(t, call(b, errBoom))
	assert.Equal(t, sreProbability(3, 2, 1), b.Stats().ThrottleProbability, "K=0.5 is K=1")
}

// TestThrottleTakesNoSlot: a throttled call never reaches the bulkhead.
func TestThrottleTakesNoSlot(t *testing.T) {
	reg, _ := newTestRegistry(t, runtime.WithRand(rand.New(&draws{vals: []float64{0}})))
	b := reg.Breaker(runtime.Config{Name: "flaky", Throttle: 1, Concurrency: 1, FailureThreshold: 1000})
	require.Error(t, call(b, errBoom))
	_, err := b.Acquire(context.Background())
	require.ErrorIs(t, err, runtime.ErrThrottled)
	st := b.Stats()
	assert.Zero(t, st.InFlight)
	assert.Zero(t, st.BulkheadFull)
}

// TestThrottleClassifier: what the breaker counts as a success is an
// accepted request, a classifier's verdict included.
func TestThrottleClassifier(t *testing.T) {
	errNotFound := errors.New("not found")
	reg, _ := newTestRegistry(t, runtime.WithClassifier("lookup", func(_ context.Context, err error) runtime.Outcome {
		if errors.Is(err, errNotFound) {
			return runtime.Success
		}
		return runtime.Failure
	}))
	b := reg.Breaker(runtime.Config{Name: "lookup", Throttle: 1})
	for range 5 {
		require.ErrorIs(t, call(b, errNotFound), errNotFound)
	}
	assert.Zero(t, b.Stats().ThrottleProbability, "5 requests, 5 accepted")
}

// TestLoadRefusalsProperty: whatever the sequence of calls, held calls and
// elapsed time, a call that the throttle or the bulkhead refuses never
// reaches the upstream and changes no count but its own (Throttled or
// BulkheadFull): not failures, successes, ignored calls, the consecutive
// count, the state or the slots in use. And the slots in use are always
// the calls in flight, never more than the limit.
func TestLoadRefusalsProperty(t *testing.T) {
	done, cancel := context.WithCancel(context.Background())
	cancel() // a slot wait with a done ctx is refused at once
	rapid.Check(t, func(t *rapid.T) {
		cfg := runtime.Config{
			Name:             "prop",
			FailureThreshold: rapid.IntRange(1, 6).Draw(t, "threshold"),
			ResetTimeout:     10 * time.Second,
			HalfOpenMax:      rapid.IntRange(1, 3).Draw(t, "halfopen"),
			Concurrency:      rapid.IntRange(0, 3).Draw(t, "concurrency"),
			Throttle:         rapid.SampledFrom([]float64{0, 1, 1.5, 2}).Draw(t, "throttle"),
		}
		seed := rapid.Uint64().Draw(t, "seed")
		clk := newFakeClock()
		reg := runtime.NewRegistry(runtime.WithClock(clk), runtime.WithLogger(discardLogger()), runtime.WithoutEnv(),
			runtime.WithCallCounts(), runtime.WithRand(rand.New(rand.NewPCG(seed, 1))))
		b := reg.Breaker(cfg)
		var held []runtime.Token
		refusal := func(before runtime.Stats, err error, called bool) {
			if !errors.Is(err, runtime.ErrThrottled) && !errors.Is(err, runtime.ErrBulkheadFull) {
				return
			}
			after := b.Stats()
			if called {
				t.Fatalf("refused call reached the upstream: %v", err)
			}
			if after.Throttled+after.BulkheadFull != before.Throttled+before.BulkheadFull+1 {
				t.Fatalf("refusal not counted: %+v -> %+v", before, after)
			}
			for _, f := range []struct {
				name          string
				before, after any
			}{
				{"failures", before.Failures, after.Failures},
				{"successes", before.Successes, after.Successes},
				{"ignored", before.Ignored, after.Ignored},
				{"consecutive failures", before.ConsecutiveFailures, after.ConsecutiveFailures},
				{"state", before.State, after.State},
				{"state changes", before.StateChanges, after.StateChanges},
				{"probes", before.ProbesInFlight, after.ProbesInFlight},
				{"slots", before.InFlight, after.InFlight},
			} {
				if f.before != f.after {
					t.Fatalf("a refusal (%v) changed %s: %v -> %v", err, f.name, f.before, f.after)
				}
			}
		}
		t.Repeat(map[string]func(*rapid.T){
			"call": func(t *rapid.T) {
				fail := rapid.Bool().Draw(t, "fail")
				before := b.Stats()
				called := false
				err := b.Do(done, func(context.Context) error {
					called = true
					if fail {
						return errBoom
					}
					return nil
				})
				refusal(before, err, called)
			},
			"hold": func(t *rapid.T) {
				before := b.Stats()
				tok, err := b.Acquire(done)
				if err == nil {
					held = append(held, tok)
				}
				refusal(before, err, false)
			},
			"finish": func(t *rapid.T) {
				if len(held) == 0 {
					t.Skip("nothing held")
				}
				i := rapid.IntRange(0, len(held)-1).Draw(t, "which")
				var err error
				if rapid.Bool().Draw(t, "fail") {
					err = errBoom
				}
				b.Release(held[i], err)
				held = append(held[:i], held[i+1:]...)
			},
			"advance": func(t *rapid.T) {
				clk.Advance(time.Duration(rapid.IntRange(1, 30).Draw(t, "seconds")) * time.Second)
			},
			"": func(t *rapid.T) {
				st := b.Stats()
				if cfg.Concurrency > 0 && st.InFlight != len(held) {
					t.Fatalf("%d slots in use, %d calls held", st.InFlight, len(held))
				}
				if st.InFlight > cfg.Concurrency {
					t.Fatalf("%d slots in use over a limit of %d", st.InFlight, cfg.Concurrency)
				}
			},
		})
	})
}

// TestThrottleConcurrent: under many goroutines every call is either
// refused (and counted in Throttled) or reaches the upstream, whose
// failures are exactly the breaker's.
func TestThrottleConcurrent(t *testing.T) {
	const goroutines, calls = 16, 200
	reg := runtime.NewRegistry(runtime.WithoutEnv(), runtime.WithLogger(discardLogger()),
		runtime.WithRand(rand.New(rand.NewPCG(7, 7))))
	b := reg.Breaker(runtime.Config{Name: "busy", Throttle: 1.5, FailureThreshold: 1 << 30, Concurrency: 4})
	var made, failed atomic.Int64
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range calls {
				err := b.Do(context.Background(), func(context.Context) error {
					made.Add(1)
					if (g+i)%2 == 0 {
						failed.Add(1)
						return errBoom
					}
					return nil
				})
				if !errors.Is(err, runtime.ErrThrottled) && !errors.Is(err, errBoom) {
					assert.NoError(t, err)
				}
			}
		})
	}
	wg.Wait()
	st := b.Stats()
	assert.Equal(t, int64(goroutines*calls), made.Load()+int64(st.Throttled))
	assert.Positive(t, st.Throttled, "half the calls fail: some are shed")
	assert.Equal(t, uint64(failed.Load()), st.Failures)
	assert.Zero(t, st.Ignored)
	assert.Zero(t, st.InFlight)
}

// TestThrottleOffKeepsItsRefusals: a throttle turned off live takes its
// window with it but not its count of refusals: Stats.Throttled is a total
// since the breaker was made, as the metrics' counter is, and a throttle
// turned on again counts on from it. Reset clears it.
func TestThrottleOffKeepsItsRefusals(t *testing.T) {
	src := &draws{vals: []float64{0.75}}
	reg, _ := newTestRegistry(t, runtime.WithRand(rand.New(src)))
	b := reg.Breaker(runtime.Config{Name: "flaky", Throttle: 1, FailureThreshold: 1000})
	for range 3 {
		require.ErrorIs(t, call(b, errBoom), errBoom) // p: 0, 1/2, 2/3 < 0.75
	}
	src.vals = []float64{0.5} // below p = 3/4: refused
	require.ErrorIs(t, b.Do(context.Background(), notCalled(t)), runtime.ErrThrottled)
	require.Equal(t, uint64(1), b.Stats().Throttled)

	require.NoError(t, reg.Update(runtime.Config{Name: "flaky", Off: runtime.SettingThrottle}))
	assert.Equal(t, uint64(1), b.Stats().Throttled, "turned off: the refusal stays counted")
	assert.Zero(t, b.Stats().Throttle)

	require.NoError(t, reg.Update(runtime.Config{Name: "flaky", Throttle: 1}))
	src.vals = []float64{0.75}
	for range 3 {
		require.ErrorIs(t, call(b, errBoom), errBoom)
	}
	src.vals = []float64{0.5}
	require.ErrorIs(t, b.Do(context.Background(), notCalled(t)), runtime.ErrThrottled)
	assert.Equal(t, uint64(2), b.Stats().Throttled, "on again: counts on")

	b.Reset()
	assert.Zero(t, b.Stats().Throttled)
}
