package runtime_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/breakergen/breakergen/runtime"
	"github.com/breakergen/breakergen/runtime/breakerimpl"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestHealthLevelsAndJSON(t *testing.T) {
	reg, clk := newTestRegistry(t)
	assert.Equal(t, runtime.LevelOK, reg.Health().Status)
	reg.Breaker(runtime.Config{Name: "tencent"})
	tdx := reg.Breaker(runtime.Config{Name: "tdx", FailureThreshold: 1, ResetTimeout: time.Minute})
	em := reg.Breaker(runtime.Config{Name: "eastmoney", FailureThreshold: 1, ResetTimeout: time.Second})
	assert.Equal(t, runtime.LevelOK, reg.Health().Status)

	trip(t, em)
	clk.Advance(time.Second) // eastmoney HALF_OPEN
	h := reg.Health()
	assert.Equal(t, runtime.LevelDegraded, h.Status)
	trip(t, tdx)
	h = reg.Health()
	assert.Equal(t, runtime.LevelDown, h.Status, "the worst level wins")
	require.Len(t, h.Breakers, 3)
	assert.Equal(t, []runtime.Level{runtime.LevelDegraded, runtime.LevelDown, runtime.LevelOK},
		[]runtime.Level{h.Breakers[0].Status, h.Breakers[1].Status, h.Breakers[2].Status})

	raw, err := json.Marshal(h)
	require.NoError(t, err)
	var doc struct {
		Status   string `json:"status"`
		Breakers []struct {
			Name      string `json:"name"`
			State     string `json:"state"`
			Status    string `json:"status"`
			Failures  int    `json:"failures"`
			NextProbe string `json:"next_probe"`
		} `json:"breakers"`
	}
	require.NoError(t, json.Unmarshal(raw, &doc), string(raw))
	assert.Equal(t, "down", doc.Status)
	assert.Equal(t, "eastmoney", doc.Breakers[0].Name)
	assert.Equal(t, "HALF_OPEN", doc.Breakers[0].State)
	assert.Equal(t, "degraded", doc.Breakers[0].Status)
	assert.Equal(t, "tdx", doc.Breakers[1].Name)
	assert.Equal(t, "OPEN", doc.Breakers[1].State)
	assert.Equal(t, "down", doc.Breakers[1].Status)
	assert.Equal(t, 1, doc.Breakers[1].Failures)
	assert.Equal(t, "2026-03-02T09:31:01Z", doc.Breakers[1].NextProbe)
	assert.Equal(t, "CLOSED", doc.Breakers[2].State)
	assert.NotContains(t, string(raw), `"calls"`, "uncounted totals are left out")
}

// breakerJSON is the JSON of one breaker's Stats, as a map: which fields
// are there.
func breakerJSON(t *testing.T, b *runtime.Breaker) map[string]any {
	t.Helper()
	raw, err := json.Marshal(b.Stats())
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(raw, &m), string(raw))
	return m
}

// TestHealthJSONLeavesOutWhatDoesNotApply: a field that does not apply is
// absent, not zero (docs/health.md); one that applies is there at zero.
func TestHealthJSONLeavesOutWhatDoesNotApply(t *testing.T) {
	reg, clk := newTestRegistry(t)
	win := reg.Breaker(runtime.Config{Name: "win", WindowCalls: 10})
	m := breakerJSON(t, win)
	assert.NotContains(t, m, "failure_threshold", "a window without an explicit threshold trips on its rate alone")
	assert.Contains(t, m, "window_calls")
	assert.Contains(t, m, "failure_rate_threshold")

	b := reg.Breaker(runtime.Config{Name: "b", FailureThreshold: 1, ResetTimeout: time.Minute})
	m = breakerJSON(t, b)
	assert.EqualValues(t, 1, m["failure_threshold"])
	for _, k := range []string{"opened_at", "next_probe", "counted", "calls", "successes",
		"consecutive_successes", "probes_in_flight", "window", "in_flight"} {
		assert.NotContains(t, m, k, "a new CLOSED breaker without call counts")
	}
	assert.Contains(t, m, "consecutive_failures")
	assert.Contains(t, m, "rejections", "counted with or without call counts")

	trip(t, b)
	m = breakerJSON(t, b)
	assert.Contains(t, m, "opened_at", "OPEN")
	assert.Contains(t, m, "next_probe", "OPEN")
	assert.NotContains(t, m, "probes_in_flight")
	clk.Advance(time.Minute)
	require.Equal(t, runtime.HalfOpen, b.State())
	m = breakerJSON(t, b)
	assert.Contains(t, m, "opened_at", "HALF_OPEN: the period it probes its way out of")
	assert.NotContains(t, m, "next_probe")
	assert.EqualValues(t, 0, m["consecutive_successes"], "HALF_OPEN: there at zero")
	assert.EqualValues(t, 0, m["probes_in_flight"], "HALF_OPEN: there at zero")
	require.NoError(t, b.Do(context.Background(), func(context.Context) error { return nil }))
	require.Equal(t, runtime.Closed, b.State())
	m = breakerJSON(t, b)
	assert.NotContains(t, m, "opened_at", "CLOSED again")
	assert.False(t, b.Stats().OpenedAt.IsZero(), "Stats still has it")
	trip(t, b)
	for _, mode := range []func(string){b.Bypass, b.Isolate} {
		mode("by hand")
		m = breakerJSON(t, b)
		assert.NotContains(t, m, "opened_at", "%v: an operator's mode runs no OPEN period", b.State())
	}
	b.Resume("done")

	counted, _ := newTestRegistry(t, runtime.WithCallCounts())
	m = breakerJSON(t, counted.Breaker(runtime.Config{Name: "c"}))
	assert.Equal(t, true, m["counted"])
	assert.EqualValues(t, 0, m["calls"], "counted: the totals are there at zero")
	assert.EqualValues(t, 0, m["successes"])
	assert.EqualValues(t, 0, m["rejections"])
}

func TestStatsCountTransitionsByPair(t *testing.T) {
	reg, clk := newTestRegistry(t)
	b := reg.Breaker(runtime.Config{Name: "tdx", FailureThreshold: 1, ResetTimeout: time.Second})
	ctx := context.Background()
	down := errors.New("down")
	fail := func(context.Context) error { return down }
	ok := func(context.Context) error { return nil }

	require.ErrorIs(t, b.Do(ctx, fail), down) // CLOSED → OPEN
	clk.Advance(time.Second)                  // OPEN → HALF_OPEN
	require.ErrorIs(t, b.Do(ctx, fail), down) // HALF_OPEN → OPEN
	clk.Advance(time.Second)                  // OPEN → HALF_OPEN
	require.NoError(t, b.Do(ctx, ok))         // HALF_OPEN → CLOSED
	require.ErrorIs(t, b.Do(ctx, fail), down) // CLOSED → OPEN

	st := b.Stats()
	var want [5][5]uint64
	want[runtime.Closed][runtime.Open] = 2
	want[runtime.Open][runtime.HalfOpen] = 2
	want[runtime.HalfOpen][runtime.Open] = 1
	want[runtime.HalfOpen][runtime.Closed] = 1
	assert.Equal(t, want, st.Transitions)
	var sum uint64
	for _, row := range st.Transitions {
		for _, n := range row {
			sum += n
		}
	}
	assert.Equal(t, st.StateChanges, sum, "StateChanges is their sum")

	raw, err := json.Marshal(st)
	require.NoError(t, err)
	assert.NotContains(t, string(raw), "transitions")

	b.Reset()
	assert.Equal(t, [5][5]uint64{}, b.Stats().Transitions, "a reset is a counter reset")
	assert.Len(t, reg.Events(0), 6, "and records no event")
}

func TestStatsCanceledIsTheCallersCancelOnly(t *testing.T) {
	reg, _ := newTestRegistry(t)
	b := reg.Breaker(runtime.Config{Name: "em", FailureThreshold: 5})
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	require.ErrorIs(t, b.Do(canceled, func(ctx context.Context) error { return ctx.Err() }), context.Canceled)
	tok, err := b.Acquire(canceled)
	require.NoError(t, err)
	b.Release(tok, context.Canceled)
	st := b.Stats()
	assert.Equal(t, uint64(2), st.Canceled)
	assert.Equal(t, uint64(2), st.Ignored)

	// An invalid answer and a limiter's refusal are ignored too, but are
	// not the caller's cancel.
	ctx := context.Background()
	rt := breakerimpl.NewRoute(reg, anyImpl, breakerimpl.RouteConfig{
		Breaker: runtime.Config{Name: "em", FailureThreshold: 5}, Rate: 1e-3, Burst: 1, MaxWait: time.Millisecond,
	})
	call, err := rt.Enter(ctx)
	require.NoError(t, err, "the burst's token")
	invalid, callErr := false, error(nil)
	call.ExitValid(ctx, &callErr, &invalid)
	_, err = rt.Enter(ctx)
	require.ErrorIs(t, err, runtime.ErrRateLimited)
	st = b.Stats()
	assert.Equal(t, uint64(2), st.Canceled)
	assert.Equal(t, uint64(1), st.RateLimited)
	assert.Equal(t, uint64(4), st.Ignored)

	raw, err := json.Marshal(st)
	require.NoError(t, err)
	assert.Contains(t, string(raw), `"canceled":2`)
	b.Reset()
	assert.Zero(t, b.Stats().Canceled)
	raw, err = json.Marshal(b.Stats())
	require.NoError(t, err)
	assert.NotContains(t, string(raw), "canceled", "left out while zero")
}

func TestStatsCanceledCountsAClassifiersIgnored(t *testing.T) {
	reg, _ := newTestRegistry(t, runtime.WithClassifier("c", func(context.Context, error) runtime.Outcome { return runtime.Ignored }))
	b := reg.Breaker(runtime.Config{Name: "c"})
	down := errors.New("down")
	require.ErrorIs(t, b.Do(context.Background(), func(context.Context) error { return down }), down)
	st := b.Stats()
	assert.Equal(t, uint64(1), st.Canceled)
	assert.Equal(t, uint64(1), st.Ignored)
	assert.Zero(t, st.Failures)
}

// TestHealthListsUnmatchedSettings: a run-time setting whose name matches
// no breaker, family or limiter (a typo, most often) is listed in Health,
// where it would otherwise apply to nothing without a word.
func TestHealthListsUnmatchedSettings(t *testing.T) {
	restore := runtime.SetEnviron([]string{"BREAKER_QOUTES_THRESHOLD=3", "BREAKER_QUOTES_RESET=1m", "BREAKER_FAM_THRESHOLD=2"})
	defer restore()
	ignore := func(context.Context, error) runtime.Outcome { return runtime.Ignored }
	reg := runtime.NewRegistry(runtime.WithLogger(discardLogger()),
		runtime.WithConfig(runtime.Config{Name: "tdx2", FailureThreshold: 2}, runtime.Config{Name: "fam/a", FailureThreshold: 4}),
		runtime.WithRateLimit("lim", 1, 1),
		runtime.WithClassifier("qoutes", ignore), runtime.WithClassifier("fam", ignore), runtime.WithClassifier("quotes", ignore))
	assert.Equal(t, []string{`"fam"`, `"fam/a"`, `"lim"`, `"qoutes"`, `"quotes"`, `"tdx2"`, "BREAKER_FAM_*", "BREAKER_QOUTES_*", "BREAKER_QUOTES_*"}, reg.Health().Unmatched, "nothing made yet")

	reg.Breaker(runtime.Config{Name: "quotes"})
	reg.Family(runtime.Config{Name: "fam"}, runtime.FamilyConfig{})
	reg.Limiter("lim", 2, 2)
	h := reg.Health()
	assert.Equal(t, []string{`"qoutes"`, `"tdx2"`, "BREAKER_QOUTES_*"}, h.Unmatched, "a key's settings match its family; a classifier's name is a setting too")
	assert.Equal(t, h.Unmatched, reg.Unmatched(), "the list without the counters, for the dashboard's pages")
	js, err := json.Marshal(h)
	require.NoError(t, err)
	assert.Contains(t, string(js), `"unmatched_settings":["\"qoutes\"","\"tdx2\"","BREAKER_QOUTES_*"]`)

	plain := runtime.NewRegistry(runtime.WithLogger(discardLogger()), runtime.WithoutEnv())
	js, err = json.Marshal(plain.Health())
	require.NoError(t, err)
	assert.NotContains(t, string(js), "unmatched_settings", "left out when empty")
	assert.Nil(t, plain.Unmatched())
}
