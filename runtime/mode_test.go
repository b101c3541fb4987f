package runtime_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/breakergen/breakergen/runtime"
)

// hookLog records the events the registry's hooks see.
type hookLog struct {
	mu  sync.Mutex
	evs []runtime.Event
}

func (h *hookLog) hook(ev runtime.Event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.evs = append(h.evs, ev)
}

func (h *hookLog) moves() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for _, ev := range h.evs {
		out = append(out, ev.From.String()+"→"+ev.To.String()+" "+ev.Reason)
	}
	return out
}

// TestIsolateRefusesEveryCall: SPEC §14. ISOLATED refuses with an
// *OpenError matching ErrOpen that carries the operator's reason, calls
// nothing, takes no limiter token, has no timer and no probe; Resume puts
// it back to CLOSED with fresh counts. Each change is one Event and one
// hook call.
func TestIsolateRefusesEveryCall(t *testing.T) {
	var hooks hookLog
	reg, clk := newTestRegistry(t, runtime.OnStateChange(hooks.hook))
	b := reg.Breaker(runtime.Config{Name: "eastmoney", FailureThreshold: 2, ResetTimeout: time.Second})
	ctx := context.Background()
	down := errors.New("down")
	require.ErrorIs(t, b.Do(ctx, func(context.Context) error { return down }), down)

	b.Isolate("provider maintenance until 14:00")
	assert.Equal(t, runtime.Isolated, b.State())
	assert.Equal(t, runtime.Isolated, b.Mode())
	called := false
	err := b.Do(ctx, func(context.Context) error { called = true; return nil })
	require.ErrorIs(t, err, runtime.ErrOpen)
	assert.False(t, called, "the wrapped call is not made")
	var oe *runtime.OpenError
	require.ErrorAs(t, err, &oe)
	assert.Equal(t, runtime.Isolated, oe.State)
	assert.Equal(t, "isolated by operator: provider maintenance until 14:00", oe.Reason)
	assert.Equal(t, "breaker eastmoney: isolated by operator: provider maintenance until 14:00", err.Error())
	assert.True(t, oe.Until.IsZero(), "no probe is due")

	clk.Advance(time.Hour) // no timer: nothing moves
	assert.Equal(t, runtime.Isolated, b.State())
	st := b.Stats()
	assert.Equal(t, runtime.LevelDown, st.Status)
	assert.True(t, st.NextProbe.IsZero())
	assert.Equal(t, runtime.LevelDown, reg.Health().Status)

	b.Reset() // clears counters, keeps the mode
	assert.Equal(t, runtime.Isolated, b.State(), "only Resume ends a mode")

	b.Resume("maintenance over")
	assert.Equal(t, runtime.Closed, b.State())
	assert.Equal(t, runtime.Closed, b.Mode())
	require.NoError(t, b.Do(ctx, func(context.Context) error { return nil }))
	assert.Equal(t, 0, b.Stats().ConsecutiveFailures, "fresh counts")

	evs := reg.Events(0)
	require.Len(t, evs, 2)
	assert.Equal(t, runtime.Event{Time: evs[1].Time, Source: "eastmoney", From: runtime.Closed, To: runtime.Isolated,
		Reason: "isolated by operator: provider maintenance until 14:00"}, evs[1])
	assert.Equal(t, runtime.Event{Time: evs[0].Time, Source: "eastmoney", From: runtime.Isolated, To: runtime.Closed,
		Reason: "resumed by operator: maintenance over"}, evs[0])
	assert.Equal(t, []string{
		"CLOSED→ISOLATED isolated by operator: provider maintenance until 14:00",
		"ISOLATED→CLOSED resumed by operator: maintenance over",
	}, hooks.moves())
	assert.Equal(t, uint64(1), b.Stats().Transitions[runtime.Isolated][runtime.Closed])
}

// TestIsolateAgainWithAnotherReason: the refusals of an isolated breaker
// carry the reason the operator gave last. It is no transition: no Event,
// no hook (SPEC §14 keeps the one Event that is not a transition for
// Update).
func TestIsolateAgainWithAnotherReason(t *testing.T) {
	var hooks hookLog
	reg, _ := newTestRegistry(t, runtime.OnStateChange(hooks.hook))
	b := reg.Breaker(runtime.Config{Name: "tdx"})
	b.Isolate("maintenance")
	b.Isolate("maintenance extended to 16:00")
	err := b.Do(context.Background(), func(context.Context) error { return nil })
	var oe *runtime.OpenError
	require.ErrorAs(t, err, &oe)
	assert.Equal(t, "isolated by operator: maintenance extended to 16:00", oe.Reason)
	assert.Equal(t, "breaker tdx: isolated by operator: maintenance extended to 16:00", err.Error())
	assert.Len(t, reg.Events(0), 1)
	assert.Equal(t, []string{"CLOSED→ISOLATED isolated by operator: maintenance"}, hooks.moves())
}

// TestIsolateTakesNoToken: an isolated breaker refuses before the limiter,
// so the rate limit's tokens stay for after the resume.
func TestIsolateTakesNoToken(t *testing.T) {
	reg, _ := newTestRegistry(t)
	b := reg.Breaker(runtime.Config{Name: "tdx"})
	l := reg.Limiter("tdx", 1, 1)
	b.Isolate("ban")
	for range 3 {
		_, err := b.Acquire(context.Background())
		require.ErrorIs(t, err, runtime.ErrOpen)
	}
	b.Resume("unbanned")
	// Allow takes a token only if one is there now: a wait bounded by a
	// real 1 ms deadline failed under load, before the limiter looked.
	require.True(t, l.Allow(), "the one token is still there")
}

// TestBypassAdmitsAndNeverTrips: BYPASSED admits every call, counts every
// outcome and never trips, whatever the failures, cooldowns and windows;
// Resume starts CLOSED afresh.
func TestBypassAdmitsAndNeverTrips(t *testing.T) {
	reg, _ := newTestRegistry(t)
	b := reg.Breaker(runtime.Config{Name: "sina", FailureThreshold: 2, WindowCalls: 10, MinimumCalls: 10, FailureRate: 0.5})
	b.Bypass("the breaker is too twitchy, watching by hand")
	assert.Equal(t, runtime.Bypassed, b.State())
	ctx := context.Background()
	down := errors.New("down")
	for range 30 {
		require.ErrorIs(t, b.Do(ctx, func(context.Context) error { return down }), down, "admitted and run")
	}
	ban := &retryAfterError{d: time.Hour}
	require.ErrorIs(t, b.Do(ctx, func(context.Context) error { return ban }), ban)
	st := b.Stats()
	assert.Equal(t, runtime.Bypassed, st.State)
	assert.Equal(t, runtime.LevelDegraded, st.Status)
	assert.Equal(t, uint64(31), st.Failures, "every outcome counted")
	assert.Equal(t, 31, st.ConsecutiveFailures)
	assert.Equal(t, 10, st.WindowCalls, "the window counts too")
	assert.Equal(t, uint64(1), st.StateChanges, "no trip: only the bypass")

	b.Resume("done")
	st = b.Stats()
	assert.Equal(t, runtime.Closed, st.State)
	assert.Zero(t, st.ConsecutiveFailures)
	assert.Zero(t, st.WindowCalls)
	require.ErrorIs(t, b.Do(ctx, func(context.Context) error { return down }), down)
	require.ErrorIs(t, b.Do(ctx, func(context.Context) error { return down }), down)
	assert.Equal(t, runtime.Open, b.State(), "automatic again")
}

type retryAfterError struct{ d time.Duration }

func (e *retryAfterError) Error() string             { return "banned" }
func (e *retryAfterError) RetryAfter() time.Duration { return e.d }

// TestModeOutcomesOfAnOlderPeriod: a call admitted before a mode change
// does not count after it (SPEC §4), and one admitted in a mode does not
// count after the Resume.
func TestModeOutcomesOfAnOlderPeriod(t *testing.T) {
	reg, _ := newTestRegistry(t)
	b := reg.Breaker(runtime.Config{Name: "slow", FailureThreshold: 1})
	ctx := context.Background()
	tok, err := b.Acquire(ctx)
	require.NoError(t, err)
	b.Bypass("x")
	tok2, err := b.Acquire(ctx)
	require.NoError(t, err)
	b.Release(tok, errors.New("late"))
	assert.Equal(t, runtime.Bypassed, b.State())
	b.Resume("y")
	b.Release(tok2, errors.New("late too"))
	assert.Equal(t, runtime.Closed, b.State(), "the bypassed call's failure is from an older period")
}

// TestModeOverridesPeers: a fleet's trip note or probe result never ends
// nor changes an operator's mode; a peer's mode and its Resume do.
func TestModeOverridesPeers(t *testing.T) {
	reg, _ := newTestRegistry(t)
	b := reg.Breaker(runtime.Config{Name: "tdx"})
	b.Isolate("ban")
	assert.False(t, b.PeerOpen("p2", "down", time.Minute))
	assert.False(t, b.PeerClose("p2", "probe ok"))
	assert.Equal(t, runtime.Isolated, b.State())
	assert.True(t, b.PeerMode("p2", runtime.Bypassed, "bypassed by operator: hand"))
	assert.Equal(t, runtime.Bypassed, b.State())
	assert.False(t, b.PeerOpen("p2", "down", time.Minute))
	assert.True(t, b.PeerMode("p2", runtime.Closed, "resumed by operator: ok"))
	assert.Equal(t, runtime.Closed, b.State())
	assert.False(t, b.PeerMode("p2", runtime.Closed, "resumed by operator: again"), "no mode to end")
	assert.False(t, b.PeerMode("p2", runtime.Open, "x"), "not a mode")
	assert.Equal(t, "peer p2: resumed by operator: ok", reg.Events(1)[0].Reason)
}

// TestResumeFromOpen: Resume lets a tripped source back at once.
func TestResumeFromOpen(t *testing.T) {
	reg, _ := newTestRegistry(t)
	b := reg.Breaker(runtime.Config{Name: "x", FailureThreshold: 1, ResetTimeout: time.Hour})
	require.Error(t, b.Do(context.Background(), func(context.Context) error { return errors.New("down") }))
	require.Equal(t, runtime.Open, b.State())
	b.Resume("fixed upstream")
	assert.Equal(t, runtime.Closed, b.State())
	assert.Equal(t, "resumed by operator: fixed upstream", reg.Events(1)[0].Reason)
	b.Resume("again")
	assert.Len(t, reg.Events(0), 2, "a Resume of a CLOSED breaker records nothing")
}

// TestResumeClosedStartsAfresh: a Resume of a CLOSED breaker gives it
// fresh counts (SPEC §14: "back to automatic, CLOSED, fresh counts"),
// consecutive and windowed alike, and keeps the totals; it records no
// Event, there being no transition.
func TestResumeClosedStartsAfresh(t *testing.T) {
	reg, _ := newTestRegistry(t)
	down := func(context.Context) error { return errors.New("down") }
	b := reg.Breaker(runtime.Config{Name: "x", FailureThreshold: 3})
	for range 2 {
		require.Error(t, b.Do(context.Background(), down))
	}
	require.Equal(t, 2, b.Stats().ConsecutiveFailures)
	b.Resume("start over")
	assert.Equal(t, 0, b.Stats().ConsecutiveFailures, "counts after Resume")
	assert.Equal(t, uint64(2), b.Stats().Failures, "the totals stay")
	require.Error(t, b.Do(context.Background(), down))
	assert.Equal(t, runtime.Closed, b.State(), "one failure after Resume, threshold 3")
	assert.Empty(t, reg.Events(0), "no transition, no Event")

	w := reg.Breaker(runtime.Config{Name: "w", WindowCalls: 10, MinimumCalls: 5, FailureRate: 0.5})
	for range 4 {
		require.Error(t, w.Do(context.Background(), down))
	}
	require.Equal(t, 4, w.Stats().WindowFailures)
	w.Resume("start over")
	assert.Zero(t, w.Stats().WindowCalls, "window after Resume")
	require.Error(t, w.Do(context.Background(), down))
	assert.Equal(t, runtime.Closed, w.State(), "one failure in a fresh window of at least 5 calls")
}

// TestModeReasonCleaned: an operator's reason is cleaned as every reason:
// one line, no control characters, no credentials, 200 characters.
func TestModeReasonCleaned(t *testing.T) {
	reg, _ := newTestRegistry(t)
	b := reg.Breaker(runtime.Config{Name: "x"})
	b.Isolate("ban\x1b[31m\n see https://u:p@x.example/?token=abc " + strings.Repeat("é", 300))
	r := reg.Events(1)[0].Reason
	assert.NotContains(t, r, "\x1b")
	assert.NotContains(t, r, "\n")
	assert.NotContains(t, r, "abc")
	assert.NotContains(t, r, "u:p")
	assert.LessOrEqual(t, len([]rune(r)), 200)
	assert.True(t, strings.HasPrefix(r, "isolated by operator: ban\ufffd[31m see https://REDACTED@x.example/?token=REDACTED éé"), r)
	b.Bypass("")
	assert.Equal(t, "bypassed by operator", reg.Events(1)[0].Reason)
}

// TestModeStatesInJSON: the states marshal as their names in Stats and
// Health.
func TestModeStatesInJSON(t *testing.T) {
	reg, _ := newTestRegistry(t)
	reg.Breaker(runtime.Config{Name: "a"}).Isolate("x")
	reg.Breaker(runtime.Config{Name: "b"}).Bypass("y")
	raw, err := json.Marshal(reg.Health())
	require.NoError(t, err)
	var doc struct {
		Status   string `json:"status"`
		Breakers []struct {
			State  string `json:"state"`
			Status string `json:"status"`
		} `json:"breakers"`
	}
	require.NoError(t, json.Unmarshal(raw, &doc))
	assert.Equal(t, "down", doc.Status)
	require.Len(t, doc.Breakers, 2)
	assert.Equal(t, "ISOLATED", doc.Breakers[0].State)
	assert.Equal(t, "down", doc.Breakers[0].Status)
	assert.Equal(t, "BYPASSED", doc.Breakers[1].State)
	assert.Equal(t, "degraded", doc.Breakers[1].Status)
}

// TestEnvModeAndBackoff: BREAKER_<NAME>_MODE sets a mode when the breaker
// is created (an Event says which variable), _RESET=D..MAX and _JITTER
// reach the Config, and a bad value of each is warned about once, naming
// the variable, and ignored.
func TestEnvModeAndBackoff(t *testing.T) {
	var logs logBuffer
	restore := runtime.SetEnviron([]string{
		"BREAKER_EASTMONEY_MODE=isolate",
		"BREAKER_SINA_MODE=Bypass",
		"BREAKER_QUOTES_RESET=30s..10m",
		"BREAKER_QUOTES_JITTER=20%",
		"BREAKER_TDX_MODE=off",       // bad: warned
		"BREAKER_TDX_RESET=10m..30s", // cap below: warned
		"BREAKER_TDX_JITTER=150%",    // out of range: warned
	})
	defer restore()
	reg := runtime.NewRegistry(runtime.WithLogger(logs.logger()))
	em := reg.Breaker(runtime.Config{Name: "eastmoney"})
	assert.Equal(t, runtime.Isolated, em.State())
	assert.Equal(t, "isolated by operator: BREAKER_EASTMONEY_MODE=isolate", reg.Events(1)[0].Reason)
	assert.Equal(t, runtime.Bypassed, reg.Breaker(runtime.Config{Name: "sina"}).State())
	q := reg.Breaker(runtime.Config{Name: "quotes"}).Config()
	assert.Equal(t, 30*time.Second, q.ResetTimeout)
	assert.Equal(t, 10*time.Minute, q.ResetMax)
	assert.InDelta(t, 0.2, q.ResetJitter, 1e-12)
	tdx := reg.Breaker(runtime.Config{Name: "tdx", ResetTimeout: time.Minute})
	assert.Equal(t, runtime.Closed, tdx.State())
	assert.Equal(t, time.Minute, tdx.Config().ResetTimeout)
	assert.Zero(t, tdx.Config().ResetJitter)
	out := logs.String()
	for _, v := range []string{"BREAKER_TDX_MODE", "BREAKER_TDX_RESET", "BREAKER_TDX_JITTER"} {
		assert.Contains(t, out, v)
	}
	assert.Contains(t, out, "want isolate or bypass")
	assert.Equal(t, 3, strings.Count(out, "level=WARN"), out)
}
