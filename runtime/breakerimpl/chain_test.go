package breakerimpl_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/breakergen/breakergen/runtime"
	"github.com/breakergen/breakergen/runtime/breakerimpl"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// chainCall is what the generator emits for one chain method: the primary
// through its route, then each fallback, then the stale cache.
func chainCall(ctx context.Context, primary *breakerimpl.Route, fbs []*breakerimpl.Route, impls []func() (int, error),
	valid func(int) bool, stale *breakerimpl.StaleCache[string, int], key string) (r int, err error) {
	var run breakerimpl.Chain
	if run.Start(ctx, primary) {
		defer run.Done()
	}
	retry := primary.Retry()
	for {
		call, ok := retry.EnterFast()
		if !ok {
			if call, err = retry.Enter(ctx, err); err != nil {
				break
			}
		}
		r, err = tryOnce(call, ctx, impls[0])
		if !retry.Again(ctx, err) {
			break
		}
	}
	if run.PrimaryValid(primary, retry.Tries(), err, err == nil && valid(r)) {
		if err == nil && stale != nil {
			stale.Put(key, r)
		}
		return r, err
	}
	for i, fb := range fbs {
		call, ok := run.Fallback(fb)
		if !ok {
			continue
		}
		r, err = tryOnce(call, ctx, impls[i+1])
		if run.AnsweredValid(fb, err, err == nil && valid(r)) {
			if err == nil && stale != nil {
				stale.Put(key, r)
			}
			return r, err
		}
	}
	if stale != nil {
		if v, age, ok := stale.Get(key); ok {
			run.Stale(age)
			return v, nil
		}
	}
	return 0, run.Err()
}

func tryOnce(call breakerimpl.Call, ctx context.Context, f func() (int, error)) (_ int, err error) {
	defer call.Exit(ctx, &err)
	err = breakerimpl.PanicGuard
	return f()
}

func TestChainPaths(t *testing.T) {
	reg, clk := newTestRegistry(t)
	primary := breakerimpl.NewRoute(reg, anyImpl, breakerimpl.RouteConfig{Breaker: runtime.Config{Name: "eastmoney", FailureThreshold: 1, ResetTimeout: time.Minute}})
	sina := breakerimpl.NewRoute(reg, anyImpl, breakerimpl.RouteConfig{Breaker: runtime.Config{Name: breakerimpl.FallbackName("sina"), FailureThreshold: 1, ResetTimeout: time.Minute}})
	stale := breakerimpl.NewStaleCache[string, int](reg, 24*time.Hour, 8)
	positive := func(v int) bool { return v > 0 }
	down := errors.New("HTTP 502")
	var emErr, sinaErr error
	emVal, sinaVal := 100, 200
	impls := []func() (int, error){
		func() (int, error) { return emVal, emErr },
		func() (int, error) { return sinaVal, sinaErr },
	}
	call := func() (int, *runtime.Provenance, error) {
		ctx, p := runtime.WithProvenance(context.Background())
		v, err := chainCall(ctx, primary, []*breakerimpl.Route{sina}, impls, positive, stale, "600519")
		return v, p, err
	}

	v, p, err := call()
	require.NoError(t, err)
	assert.Equal(t, 100, v)
	assert.Equal(t, "eastmoney", p.Source)
	assert.Equal(t, "live", p.String())
	assert.Equal(t, 1, p.Tries)

	emErr = down // primary error, then fallback
	v, p, err = call()
	require.NoError(t, err)
	assert.Equal(t, 200, v)
	assert.Equal(t, "fallback:sina (eastmoney error)", p.String())
	assert.Equal(t, 2, p.Tries)

	// eastmoney is open now: skipped without a try.
	v, p, err = call()
	require.NoError(t, err)
	assert.Equal(t, 200, v)
	assert.Equal(t, "fallback:sina (eastmoney open)", p.String())
	assert.Equal(t, 1, p.Tries)

	// Both fail: the stale value (the last valid one, 200) is served.
	clk.Advance(12 * time.Second)
	sinaErr = down
	v, p, err = call()
	require.NoError(t, err)
	assert.Equal(t, 200, v)
	assert.True(t, p.Stale)
	assert.Equal(t, 12*time.Second, p.Age)
	assert.Equal(t, "stale 12s (eastmoney open, fallback:sina error)", p.String())

	// Too old (and both breakers probing, failing again): the chain
	// error, naming every source and matching their errors.
	clk.Advance(24 * time.Hour)
	v, _, err = call()
	assert.Zero(t, v)
	var ce *runtime.ChainError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "breaker: every source failed: eastmoney: error: HTTP 502; fallback:sina: error: HTTP 502", err.Error())
	assert.ErrorIs(t, err, down)
	assert.NotErrorIs(t, err, runtime.ErrOpen)
	_, _, err = call()
	assert.Equal(t, "breaker: every source failed: eastmoney: open; fallback:sina: open", err.Error())
	assert.ErrorIs(t, err, runtime.ErrOpen, "every source was open")

	// Invalid answers are skipped and never cached.
	primary.Breaker().Reset()
	sina.Breaker().Reset()
	emErr, sinaErr = nil, nil
	emVal, sinaVal = 0, -1
	v, p, err = call()
	assert.ErrorIs(t, err, runtime.ErrInvalid)
	assert.Equal(t, "none (eastmoney invalid, fallback:sina invalid)", p.String())
	assert.Equal(t, runtime.Closed, primary.Breaker().State(), "an invalid answer is no failure")
	_, _, cached := stale.Get("600519")
	assert.False(t, cached, "the old entry aged out and no invalid one replaced it")
	assert.Zero(t, v)
}

func TestChainBudgetStopsFallbacks(t *testing.T) {
	reg := runtime.NewRegistry(runtime.WithLogger(discardLogger()), runtime.WithoutEnv()) // real clock: a 1ns backoff
	primary := breakerimpl.NewRoute(reg, anyImpl, breakerimpl.RouteConfig{Breaker: runtime.Config{Name: "p", FailureThreshold: 100}, Attempts: 2, Backoff: time.Nanosecond})
	fb := breakerimpl.NewRoute(reg, anyImpl, breakerimpl.RouteConfig{Breaker: runtime.Config{Name: "fallback:f"}})
	calls := 0
	impls := []func() (int, error){
		func() (int, error) { calls++; return 0, errors.New("flaky") },
		func() (int, error) { calls++; return 1, nil },
	}
	ctx, p := runtime.WithProvenance(runtime.WithBudget(context.Background(), 2))
	_, err := chainCall(ctx, primary, []*breakerimpl.Route{fb}, impls, func(int) bool { return true }, nil, "")
	assert.Equal(t, 2, calls, "the primary's two tries spent the budget")
	assert.ErrorIs(t, err, runtime.ErrBudget)
	assert.Equal(t, "none (p error, fallback:f budget)", p.String())
}

// TestChainCanceledSkipsAreRecorded: once the caller's ctx has ended no
// fallback is asked, and each says so, so that the error of a chain whose
// primary was OPEN does not claim every source was rejected.
func TestChainCanceledSkipsAreRecorded(t *testing.T) {
	reg, _ := newTestRegistry(t)
	primary := breakerimpl.NewRoute(reg, anyImpl, breakerimpl.RouteConfig{Breaker: runtime.Config{Name: "p", FailureThreshold: 1}})
	fb := breakerimpl.NewRoute(reg, anyImpl, breakerimpl.RouteConfig{Breaker: runtime.Config{Name: "fallback:f"}})
	trip(t, primary.Breaker())
	asked := false
	impls := []func() (int, error){
		func() (int, error) { return 0, nil },
		func() (int, error) { asked = true; return 1, nil },
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	ctx, p := runtime.WithProvenance(ctx)
	_, err := chainCall(ctx, primary, []*breakerimpl.Route{fb}, impls, func(int) bool { return true }, nil, "")
	assert.False(t, asked)
	assert.ErrorIs(t, err, context.Canceled)
	assert.NotErrorIs(t, err, runtime.ErrOpen, "the fallback was not rejected, only not asked")
	assert.Equal(t, "none (p open, fallback:f canceled)", p.String())
}

func TestProvenanceOnlyOutermostCallWrites(t *testing.T) {
	reg, _ := newTestRegistry(t)
	outer := breakerimpl.NewRoute(reg, anyImpl, breakerimpl.RouteConfig{Breaker: runtime.Config{Name: "outer"}})
	inner := breakerimpl.NewRoute(reg, anyImpl, breakerimpl.RouteConfig{Breaker: runtime.Config{Name: "inner"}})
	ctx, p := runtime.WithProvenance(context.Background())
	ok := func(v int) bool { return true }
	_, err := chainCall(ctx, outer, nil, []func() (int, error){func() (int, error) {
		// The primary itself calls another chain with the same ctx.
		return chainCall(ctx, inner, nil, []func() (int, error){func() (int, error) { return 1, nil }}, ok, nil, "")
	}}, ok, nil, "")
	require.NoError(t, err)
	assert.Equal(t, "outer", p.Source)
}

// TestWhy: every refusal a source can meet has its own word in the
// provenance, load control's included; an answer's error is an error.
func TestWhy(t *testing.T) {
	done, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tt := range []struct {
		ctx  context.Context
		err  error
		want string
	}{
		{context.Background(), runtime.ErrOpen, "open"},
		{context.Background(), &runtime.OpenError{Name: "em", State: runtime.Isolated}, "isolated"},
		{context.Background(), fmt.Errorf("try: %w", &runtime.OpenError{Name: "em", State: runtime.Isolated}), "isolated"},
		{context.Background(), &runtime.OpenError{Name: "em", State: runtime.Open}, "open"},
		{context.Background(), fmt.Errorf("wait: %w", runtime.ErrRateLimited), "ratelimited"},
		{context.Background(), runtime.ErrThrottled, "throttled"},
		{context.Background(), runtime.ErrBulkheadFull, "bulkhead"},
		{context.Background(), runtime.ErrBudget, "budget"},
		{done, context.Canceled, "canceled"},
		{context.Background(), context.Canceled, "error"}, // not the caller's
		{context.Background(), errors.New("502"), "error"},
	} {
		assert.Equal(t, tt.want, breakerimpl.Why(tt.ctx, tt.err, false), "%v", tt.err)
	}
	// A source that answered with one of these errors got it from a
	// guarded call of its own: the source failed, it was not refused.
	for _, err := range []error{runtime.ErrOpen, fmt.Errorf("inner: %w", runtime.ErrRateLimited), runtime.ErrBudget, runtime.ErrInjected} {
		assert.Equal(t, "error", breakerimpl.Why(context.Background(), err, true), "%v", err)
	}
	assert.Equal(t, "canceled", breakerimpl.Why(done, context.Canceled, true))
	assert.Equal(t, "error", breakerimpl.Why(context.Background(), context.Canceled, true), "not the caller's")
}

// TestChainIsolatedSource: SPEC §14. A source whose breaker an operator
// isolated is passed over as "isolated", not "open", in the provenance
// and the ChainError (which names the operator's reason and still
// matches ErrOpen: every source was refused); a BYPASSED source is asked
// as usual, and answers.
func TestChainIsolatedSource(t *testing.T) {
	reg, _ := newTestRegistry(t)
	primary := breakerimpl.NewRoute(reg, anyImpl, breakerimpl.RouteConfig{Breaker: runtime.Config{Name: "eastmoney", FailureThreshold: 1, ResetTimeout: time.Minute}})
	sina := breakerimpl.NewRoute(reg, anyImpl, breakerimpl.RouteConfig{Breaker: runtime.Config{Name: breakerimpl.FallbackName("sina"), FailureThreshold: 1, ResetTimeout: time.Minute}})
	var emCalls int
	var sinaErr error
	impls := []func() (int, error){
		func() (int, error) { emCalls++; return 100, nil },
		func() (int, error) { return 200, sinaErr },
	}
	call := func() (int, *runtime.Provenance, error) {
		ctx, p := runtime.WithProvenance(context.Background())
		v, err := chainCall(ctx, primary, []*breakerimpl.Route{sina}, impls, func(int) bool { return true }, nil, "600519")
		return v, p, err
	}

	primary.Breaker().Isolate("maintenance until 14:00")
	v, p, err := call()
	require.NoError(t, err)
	assert.Equal(t, 200, v)
	assert.Equal(t, "fallback:sina (eastmoney isolated)", p.String())
	require.Len(t, p.Skipped, 1)
	assert.ErrorIs(t, p.Skipped[0].Err, runtime.ErrOpen)
	assert.Zero(t, emCalls, "not asked")

	sinaErr = errors.New("HTTP 502")
	_, _, err = call()
	assert.Equal(t, "breaker: every source failed: eastmoney: isolated by operator: maintenance until 14:00; fallback:sina: error: HTTP 502", err.Error())
	assert.NotErrorIs(t, err, runtime.ErrOpen, "sina failed on its own")
	_, _, err = call() // sina is OPEN now
	assert.Equal(t, "breaker: every source failed: eastmoney: isolated by operator: maintenance until 14:00; fallback:sina: open", err.Error())
	assert.ErrorIs(t, err, runtime.ErrOpen, "every source refused by its breaker")

	primary.Breaker().Bypass("by hand")
	v, p, err = call()
	require.NoError(t, err)
	assert.Equal(t, 100, v)
	assert.Equal(t, "live", p.String(), "a bypassed source is asked as usual")
	assert.Equal(t, 1, emCalls)
}

// TestFallbacksOfOneName: a chain's fallbacks are copied, and two of one
// Name, which share a breaker, are warned of once; nameless ones are the
// registry's to warn of, and distinct names say nothing.
func TestFallbacksOfOneName(t *testing.T) {
	var logs strings.Builder
	reg := runtime.NewRegistry(runtime.WithoutEnv(), runtime.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	fbs := []runtime.Fallback[int]{{Name: "sina", Impl: 1}, {Name: "tdx", Impl: 2}, {Name: "sina", Impl: 3}, {Impl: 4}, {Impl: 5}}
	for range 2 {
		got := breakerimpl.Fallbacks(reg, fbs)
		require.Equal(t, fbs, got)
		got[0].Name = "changed"
		require.Equal(t, "sina", fbs[0].Name, "a copy")
	}
	assert.Equal(t, 1, strings.Count(logs.String(), `a chain has two runtime.Fallbacks named \"sina\": they share the breaker \"fallback:sina\"`), logs.String())
	assert.NotContains(t, logs.String(), "tdx")
	assert.NotContains(t, logs.String(), `named \"\"`)
	assert.Empty(t, breakerimpl.Fallbacks[int](nil, nil))
}

// TestKeyedChainAnswersCountTheFamily: a keyed chain's answers are counted
// under its family's name, as every other series of a family is (SPEC
// §15: label cardinality stays bounded), whichever key answered or failed
// to. They were counted by each key's breaker, in counters never freed:
// 100,000 tenants through keys=10 left 100,000 counters, and as many
// series in both exporters.
func TestKeyedChainAnswersCountTheFamily(t *testing.T) {
	reg, _ := newTestRegistry(t, runtime.WithCallCounts())
	fam := breakerimpl.NewFamily(reg, anyImpl, breakerimpl.RouteConfig{Breaker: runtime.Config{Name: "tenant", FailureThreshold: 1000}}, 10, 0)
	fb := breakerimpl.NewRoute(reg, anyImpl, breakerimpl.RouteConfig{Breaker: runtime.Config{Name: breakerimpl.FallbackName("cache"), FailureThreshold: 1000}})
	down := errors.New("HTTP 502")
	ok := func() (int, error) { return 1, nil }
	fail := func() (int, error) { return 0, down }
	always := func(int) bool { return true }
	const keys = 500
	for i := range keys {
		k := fam.Key(fmt.Sprint("t", i))
		impls := []func() (int, error){ok, ok} // the primary answers
		switch i % 3 {
		case 1:
			impls = []func() (int, error){fail, ok} // the fallback answers
		case 2:
			impls = []func() (int, error){fail, fail} // none answers
		}
		_, _ = chainCall(context.Background(), k.Route, []*breakerimpl.Route{fb}, impls, always, nil, "")
		k.Done()
	}
	got := map[string]uint64{}
	for _, a := range reg.ChainAnswers() {
		got[a.Source+" "+a.Kind] += a.Count
	}
	want := map[string]uint64{
		"tenant live": (keys + 2) / 3,
		breakerimpl.FallbackName("cache") + " fallback": (keys + 1) / 3,
		"tenant none": keys / 3,
	}
	if len(got) > len(want) {
		t.Fatalf("%d series of a keyed chain's answers, want %d: %v", len(got), len(want), firstKeys(got, 4))
	}
	assert.Equal(t, want, got, "a keyed chain's answers, by source and kind")
	assert.LessOrEqual(t, fam.Runtime().Len(), 10, "live keys")
}

// firstKeys returns the first n keys of m in order.
func firstKeys[V any](m map[string]V, n int) []string {
	keys := slices.Sorted(maps.Keys(m))
	return keys[:min(n, len(keys))]
}

// TestKeyedRecordedCountersStayBounded: a registry that records calls
// builds each key's route a recording clone, whose answer counters are
// the family's as its key's are: 500 keys through keys=10 made 500 live
// counters, never freed (the review of 93e5890).
func TestKeyedRecordedCountersStayBounded(t *testing.T) {
	reg, _ := newTestRegistry(t, runtime.WithCallCounts(), runtime.WithRecorder(io.Discard))
	fam := breakerimpl.NewFamily(reg, anyImpl, breakerimpl.RouteConfig{Breaker: runtime.Config{Name: "tenant"}}, 10, 0)
	before := breakerimpl.AnswerCounters(reg)
	for i := range 500 {
		k := fam.Key(fmt.Sprint("t", i))
		call, err := k.Route.Enter(context.Background())
		require.NoError(t, err)
		var none error
		call.Exit(context.Background(), &none)
		k.Done()
	}
	assert.LessOrEqual(t, breakerimpl.AnswerCounters(reg)-before, 1, "the family's one live counter")
}
