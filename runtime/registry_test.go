package runtime_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/breakergen/breakergen/runtime"
)

func TestRegistryFirstConfigWins(t *testing.T) {
	var logs logBuffer
	reg := runtime.NewRegistry(runtime.WithLogger(logs.logger()))
	a := reg.Breaker(runtime.Config{Name: "tencent", FailureThreshold: 5})
	b := reg.Breaker(runtime.Config{Name: "tencent", FailureThreshold: 5, ResetTimeout: 30 * time.Second})
	assert.Same(t, a, b, "same settings after defaults: same breaker, no warning")
	assert.Empty(t, logs.String())

	c := reg.Breaker(runtime.Config{Name: "tencent", FailureThreshold: 9})
	d := reg.Breaker(runtime.Config{Name: "tencent", FailureThreshold: 9})
	assert.Same(t, a, c)
	assert.Same(t, a, d)
	assert.Equal(t, 5, c.Config().FailureThreshold)
	assert.Equal(t, 1, strings.Count(logs.String(), "level=WARN"), "one warning per differing config: %s", logs.String())

	got, ok := reg.Lookup("tencent")
	assert.True(t, ok)
	assert.Same(t, a, got)
	_, ok = reg.Lookup("missing")
	assert.False(t, ok)
}

func TestRegistryDefaultsAndBadInput(t *testing.T) {
	reg := runtime.NewRegistry(nil, runtime.WithClock(nil), runtime.WithLogger(nil), runtime.WithEventCapacity(0), runtime.OnStateChange(nil))
	b := reg.Breaker(runtime.Config{FailureThreshold: -3, ResetTimeout: -time.Second})
	assert.Equal(t, runtime.Config{Name: "default", FailureThreshold: 5, ResetTimeout: 30 * time.Second, HalfOpenMax: 1, SuccessThreshold: 1}, b.Config())
	l := reg.Limiter("x", -1, 0)
	r, burst := l.Rate()
	assert.True(t, r > 1e300, "a non-positive rate means no limit")
	assert.Equal(t, 1, burst)
	assert.Same(t, runtime.Default(), runtime.Default())
	assert.Empty(t, reg.Events(10))
}

func TestBreakersInNameOrder(t *testing.T) {
	reg, _ := newTestRegistry(t)
	for _, n := range []string{"tencent", "eastmoney", "tdx", "push2ex"} {
		reg.Breaker(runtime.Config{Name: n})
	}
	var names []string
	for _, b := range reg.Breakers() {
		names = append(names, b.Name())
	}
	assert.Equal(t, []string{"eastmoney", "push2ex", "tdx", "tencent"}, names)
}

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

func TestStateStrings(t *testing.T) {
	assert.Equal(t, "CLOSED", runtime.Closed.String())
	assert.Equal(t, "HALF_OPEN", runtime.HalfOpen.String())
	assert.Equal(t, "OPEN", runtime.Open.String())
	assert.Equal(t, "State(7)", runtime.State(7).String())
	for _, s := range []runtime.State{runtime.Closed, runtime.HalfOpen, runtime.Open} {
		txt, err := s.MarshalText()
		require.NoError(t, err)
		var back runtime.State
		require.NoError(t, back.UnmarshalText(txt))
		assert.Equal(t, s, back)
	}
	_, err := runtime.State(7).MarshalText()
	assert.Error(t, err)
	var s runtime.State
	assert.Error(t, s.UnmarshalText([]byte("AJAR")))
}

func TestEventsRing(t *testing.T) {
	reg, clk := newTestRegistry(t, runtime.WithEventCapacity(5))
	b := reg.Breaker(runtime.Config{Name: "ring", FailureThreshold: 1, ResetTimeout: time.Second})
	assert.Empty(t, reg.Events(0))
	for range 4 { // each cycle: CLOSED>OPEN, OPEN>HALF_OPEN, HALF_OPEN>CLOSED
		trip(t, b)
		clk.Advance(time.Second)
		require.NoError(t, b.Do(context.Background(), func(context.Context) error { return nil }))
	}
	evs := reg.Events(100)
	require.Len(t, evs, 5, "capped at the capacity")
	for i := 1; i < len(evs); i++ {
		assert.False(t, evs[i].Time.After(evs[i-1].Time), "newest first")
	}
	assert.Equal(t, runtime.Closed, evs[0].To)
	assert.Len(t, reg.Events(2), 2)
	assert.Len(t, reg.Events(-1), 5, "limit <= 0 means 50, capped at capacity")
}

func TestEventsDefaultLimit(t *testing.T) {
	reg, clk := newTestRegistry(t)
	b := reg.Breaker(runtime.Config{Name: "many", FailureThreshold: 1, ResetTimeout: time.Second})
	for range 40 {
		trip(t, b)
		clk.Advance(time.Second)
		require.NoError(t, b.Do(context.Background(), func(context.Context) error { return nil }))
	}
	assert.Len(t, reg.Events(0), 50)
	assert.Len(t, reg.Events(1000), 100, "capacity 100 by default")
}

type statusError struct{ code int }

func (e *statusError) Error() string { return "upstream answered " + http(e.code) }

func http(code int) string { return map[int]string{502: "502 Bad Gateway"}[code] }

type emptyError struct{}

func (emptyError) Error() string { return "" }

func TestBrief(t *testing.T) {
	long := strings.Repeat("行情", 200)
	tests := []struct {
		err  error
		want string
	}{
		{nil, ""},
		{errors.New("connection refused"), "connection refused"},
		{fmtErr("dial %s: %w", "quote.example", errors.New("refused")), "dial quote.example: refused"},
		{&statusError{502}, "runtime_test.statusError: upstream answered 502 Bad Gateway"},
		{emptyError{}, "runtime_test.emptyError"},
		{errors.New("line one\n\tline  two "), "line one line two"},
		{errors.Join(errors.New("a"), errors.New("b")), "a b"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, runtime.Brief(tt.err))
	}
	got := runtime.Brief(errors.New(long))
	assert.Equal(t, 160, len([]rune(got)))
	assert.True(t, strings.HasSuffix(got, "…"))
	assert.True(t, strings.HasPrefix(long, strings.TrimSuffix(got, "…")), "cut on a rune boundary")
}

func TestReasonCappedAt200(t *testing.T) {
	reg, _ := newTestRegistry(t, runtime.WithCallCounts())
	b := reg.Breaker(runtime.Config{Name: "long", FailureThreshold: 1})
	// The panic is recorded as "panic: <value>" (API moved: PanicError is
	// no longer exported, so the panic itself makes the reason).
	assert.Panics(t, func() {
		_ = b.Do(context.Background(), func(context.Context) error { panic(strings.Repeat("数据", 300)) })
	})
	r := reg.Events(1)[0].Reason
	assert.LessOrEqual(t, len([]rune(r)), 200)
	assert.True(t, strings.HasPrefix(r, "panic: 数据"))
}
