package demo

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/breakergen/breakergen/examples/marketdata"
	"github.com/breakergen/breakergen/examples/marketdata/fakeupstream"
	"github.com/breakergen/breakergen/runtime"
)

// TestScenario plays the whole demo inside a synctest bubble, against the
// fake upstream's in-process transport: the scenario's waits take no real
// time, and every duration below is exact on the bubble's clock.
func TestScenario(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		up := fakeupstream.New()
		var out lockedBuffer
		sc := &Scenario{Up: up, Client: up.Client(), Reset: 2 * time.Second}
		start := time.Now()
		rep, err := sc.Run(t.Context(), &out)
		require.NoError(t, err, out.String())
		elapsed := time.Since(start)
		// Run returns once the live log has printed every transition; any
		// timer still pending must not print more.
		synctest.Wait()
		printed := out.String()

		// The outage trips tdx after its annotated threshold.
		assert.True(t, rep.TDXOpened)
		assert.Equal(t, 5, rep.TripCalls)
		// While OPEN nothing reaches the upstream.
		assert.Equal(t, 10, rep.Rejected)
		assert.Zero(t, rep.UpstreamWhileOpen)
		// The first probe fails and re-opens, the second closes.
		assert.True(t, rep.ProbeFailed)
		assert.True(t, rep.ProbeRecovered)

		// The limiter: a full bucket of 3, then one token every 1/1.5 s,
		// so 9 calls end (9-3)/1.5 = 4s after the first.
		assert.Equal(t, 9, rep.LimiterCalls)
		assert.Equal(t, int64(9), rep.LimiterUpstream)
		assert.InDelta(t, 4.0, rep.LimiterElapsed.Seconds(), 0.001)
		assert.InDelta(t, 1.5, rep.LimiterRate, 0.01)

		// The ban and the throttle arrive as typed errors.
		var ban, throttle *marketdata.StatusError
		require.ErrorAs(t, rep.Ban, &ban)
		assert.Equal(t, http.StatusForbidden, ban.Code)
		assert.False(t, ban.Retryable())
		assert.Equal(t, 2*time.Second, ban.Wait)
		require.ErrorAs(t, rep.Throttle, &throttle)
		assert.Equal(t, http.StatusTooManyRequests, throttle.Code)
		assert.Equal(t, 2*time.Second, throttle.Wait)
		assert.ErrorIs(t, rep.SlowErr, context.DeadlineExceeded)

		// Fund flows through the chain: live, the backup while eastmoney
		// is banned, the answer kept in scene 1, and an empty answer that
		// is passed over and never kept.
		assert.Equal(t, strings.Join([]string{
			"live",
			"fallback:sina hedged (eastmoney slow)",
			"fallback:sina (eastmoney open)",
			"stale Ns (eastmoney open, fallback:sina error)", // its age: see below
			"error: (eastmoney open, fallback:sina invalid)",
			"error: (eastmoney open, fallback:sina error)",
		}, "\n"), staleAge.ReplaceAllString(strings.Join(rep.Flows, "\n"), "stale Ns"))
		assert.False(t, rep.EmptyKept)
		// The bulkhead: 4 calls wait on the slow tdx, the others are
		// refused at maxwait without reaching it.
		assert.Equal(t, 4, rep.BulkheadAnswered)
		assert.Equal(t, BulkheadCalls-4, rep.BulkheadFull)
		assert.Equal(t, int64(4), rep.BulkheadUpstream)
		assert.Equal(t, 50*time.Millisecond, rep.BulkheadFullAfter, "refused at maxwait")

		// The throttle: push2ex failing every other request never opens
		// its breaker; some polls are refused locally and never reach it.
		assert.False(t, rep.ThrottleOpened)
		assert.Positive(t, rep.Throttled)
		assert.Equal(t, int64(rep.ThrottleCalls-rep.Throttled), rep.ThrottleUpstream, "a refused poll never reaches push2ex")
		assert.Less(t, rep.ThrottleUpstream, int64(ThrottlePolls))

		// The hedge: eastmoney slow, sina asked at 200ms and answering.
		assert.Equal(t, "fallback:sina hedged (eastmoney slow)", rep.HedgeFlow)
		assert.Equal(t, 200*time.Millisecond, rep.HedgeElapsed, "answered at the hedge delay")

		// Background failures: a consecutive count of 5 trips on the run
		// of five; the window of the last 50 calls rides it out.
		assert.Equal(t, strings.Index(backgroundPattern, "xxxxx")+5, rep.ConsecutiveTripAt)
		assert.True(t, rep.WindowRodeOut)
		assert.Equal(t, 50, rep.WindowFigures.WindowCalls)
		assert.Equal(t, strings.Count(backgroundPattern[len(backgroundPattern)-50:], "x"), rep.WindowFigures.WindowFailures)
		// The real outage trips it once half of the last 50 calls failed.
		window := []bool{}
		for _, c := range backgroundPattern {
			window = append(window, c == 'x')
		}
		want := 0
		for failed := 0; failed*2 < 50; {
			window, want = append(window[1:], true), want+1
			failed = 0
			for _, f := range window[len(window)-50:] {
				if f {
					failed++
				}
			}
		}
		assert.Equal(t, want, rep.OutageTripCalls)
		assert.Equal(t, "failure rate 50% (25 of the last 50 calls) >= 50%", rep.OutageReason)

		// Everything recovers, and the timeline tells the story.
		assert.True(t, rep.Recovered)
		assert.Equal(t, runtime.LevelOK, sc.Registry().Health().Status)
		// Per source, newest first (two resets that end at the same
		// instant may fire in either order, so sources are not interleaved).
		story := map[string][]string{}
		for _, ev := range sc.Registry().Events(0) {
			story[ev.Source] = append(story[ev.Source], ev.From.String()+"→"+ev.To.String()+" "+reasonHead(ev.Reason))
		}
		assert.Equal(t, map[string][]string{
			"tdx": {
				"HALF_OPEN→CLOSED half-open probe succeeded (1/1)",
				"OPEN→HALF_OPEN reset 2s elapsed, probing",
				"HALF_OPEN→OPEN marketdata.StatusError",
				"OPEN→HALF_OPEN reset 2s elapsed, probing",
				"CLOSED→OPEN marketdata.StatusError",
			},
			"eastmoney": { // the 403 ban cools it down at once; an operator isolates it last
				"ISOLATED→CLOSED resumed by operator",
				"CLOSED→ISOLATED isolated by operator",
				"HALF_OPEN→CLOSED half-open probe succeeded (1/1)",
				"OPEN→HALF_OPEN reset 2s elapsed, probing",
				"CLOSED→OPEN retry after 2s",
			},
			"tencent": { // its window rode out the background failures, not the outage
				"HALF_OPEN→CLOSED half-open probe succeeded (1/1)",
				"OPEN→HALF_OPEN reset 2s elapsed, probing",
				"CLOSED→OPEN failure rate 50% (25 of the last 50 calls) >= 50%",
			},
			"push2ex": { // so does the 429's Retry-After, before the threshold of 2
				"HALF_OPEN→CLOSED half-open probe succeeded (1/1)",
				"OPEN→HALF_OPEN reset 2s elapsed, probing",
				"CLOSED→OPEN retry after 2s",
			},
		}, story)

		// The operator's isolation (operator.go): a call refused with the
		// reason, the chain answering from sina and saying why, then
		// eastmoney again.
		var oe *runtime.OpenError
		require.ErrorAs(t, rep.IsolatedErr, &oe)
		assert.Equal(t, runtime.Isolated, oe.State)
		assert.Equal(t, "fallback:sina (eastmoney isolated)", rep.IsolatedFlow, "provenance says why: an operator, not failures")
		assert.Equal(t, "eastmoney: isolated by operator: "+IsolationReason, rep.IsolatedSkip)

		// The rehearsal: an injected fault never reaches eastmoney; a fund
		// flow both of whose tries were injected is answered by sina, and
		// its provenance says why eastmoney was passed over.
		assert.Len(t, rep.FaultFlows, FaultCalls)
		assert.Equal(t, 2, rep.FaultFallbacks, "the seeded draws: two fund flows had both tries injected")
		assert.Equal(t, "fallback:sina (eastmoney injected)", rep.FaultFlow)
		assert.Equal(t, int64(FaultCalls-rep.FaultFallbacks), rep.FaultUpstream, "each live answer took one request; no injected try reached eastmoney")
		assert.Equal(t, uint64(7), rep.FaultInjected, "2×2 tries of the fallbacks, and 3 first tries retried")
		assert.Equal(t, "live", rep.ResumedFlow)

		// The live log printed the transitions, the timeline and the health.
		for _, want := range []string{
			"▶ breaker[tdx] CLOSED → OPEN: marketdata.StatusError: tdx: HTTP 503",
			"▶ breaker[push2ex] HALF_OPEN → CLOSED",
			"0 while OPEN",
			"degradation timeline",
			`"status": "ok"`,
		} {
			assert.Contains(t, printed, want)
		}
		// A transition is printed after the row of the call that caused it;
		// the reset's end (OPEN → HALF_OPEN) before the probe's row.
		assert.Regexp(t, `tdx +Kline 600519 day×20 +fail +HTTP 503 Service Unavailable\n.*▶ breaker\[tdx\] CLOSED → OPEN`, printed)
		assert.Regexp(t, `▶ breaker\[tdx\] OPEN → HALF_OPEN: reset 2s elapsed, probing\n.*tdx +Kline 600519 \(probe\) +fail .*\n.*▶ breaker\[tdx\] HALF_OPEN → OPEN`, printed)
		assert.Regexp(t, `tencent +Quote 600519 \(outage #\d+\) +fail .*\n.*▶ breaker\[tencent\] CLOSED → OPEN`, printed)
		// Only eastmoney's calls retry (attempts=2): no other says a word of it.
		assert.NotContains(t, printed, "retryable")
		assert.Contains(t, printed, "HTTP 403 Forbidden, banned, cool down 2s · not retried", "eastmoney retries, but not a ban")
		for _, line := range strings.Split(printed, "\n") {
			if strings.Contains(line, "retried") {
				assert.Contains(t, line, "eastmoney", "a route without retries says nothing of them: %s", line)
			}
		}
		// One word for the OPEN period, the reset key's.
		assert.NotContains(t, strings.ToLower(printed), "open window")
		assert.Contains(t, printed, "reset         2s for every breaker")
		// Each Chinese sample value is glossed once, where it is first used.
		assert.Equal(t, 1, strings.Count(printed, "贵州茅台 (Kweichow Moutai)"))
		assert.Equal(t, 1, strings.Count(printed, "亿 (×100 million yuan)"))
		assert.Contains(t, printed, "工商银行 (ICBC)")
		assert.Equal(t, strings.Index(printed, "贵州茅台"), strings.Index(printed, "贵州茅台 (Kweichow Moutai)"), "glossed at its first use")
		// One time style: the health's times are offsets from the start too.
		health := printed[strings.Index(printed, "\nhealth ("):]
		assert.Regexp(t, `"last_failure": "\+\d+\.\d{3}s"`, health)
		assert.NotRegexp(t, `\d{4}-\d\d-\d\dT`, health, "no wall-clock time")
		assert.Equal(t, printed, out.String(), "nothing is printed after Run returns")
		// Well under a minute, even on the demo's clock.
		assert.Less(t, elapsed, 20*time.Second)
	})
}

// TestRegistryKeepsAnnotations: the demo shortens the reset and
// must keep every other annotated setting.
func TestRegistryKeepsAnnotations(t *testing.T) {
	annotated := runtime.NewRegistry(runtime.WithoutEnv(), runtime.WithLogger(discard()))
	demo := registry(2*time.Second, runtime.WithoutEnv(), runtime.WithLogger(discard()))
	for _, reg := range []*runtime.Registry{annotated, demo} {
		marketdata.NewStockSourceBreaker(nil, reg)
		marketdata.NewFundFlowSourceChain(nil, reg,
			runtime.Fallback[marketdata.FundFlowSource]{Name: marketdata.Sina})
	}
	for _, name := range shortened {
		want, ok := annotated.Lookup(name)
		require.True(t, ok, name)
		got, ok := demo.Lookup(name)
		require.True(t, ok, name)
		cfg := want.Config()
		cfg.ResetTimeout = 2 * time.Second
		assert.Equal(t, cfg, got.Config(), name)
	}
}

func TestRunFlags(t *testing.T) {
	var stdout, stderr bytes.Buffer
	assert.Error(t, Main(t.Context(), []string{"-reset", "0s"}, &stdout, &stderr))
	assert.Error(t, Main(t.Context(), []string{"extra"}, &stdout, &stderr))
	assert.Error(t, Main(t.Context(), []string{"-nope"}, &stdout, &stderr))
	assert.Contains(t, stderr.String(), "-serve addr")
	assert.Empty(t, stdout.String())
}

func TestHealthMux(t *testing.T) {
	reg := runtime.NewRegistry(runtime.WithLogger(discard()))
	b := reg.Breaker(runtime.Config{Name: "tdx", FailureThreshold: 1})
	tok, err := b.Acquire(t.Context())
	require.NoError(t, err)
	b.Release(tok, assert.AnError)
	mux := HealthMux(reg)

	get := func(target string) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, target, nil))
		return rec
	}
	rec := get("/health/datasources")
	require.Equal(t, http.StatusOK, rec.Code)
	var h struct {
		Status   string `json:"status"`
		Breakers []struct {
			Name, State, Status string
		} `json:"breakers"`
	}
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &h))
	assert.Equal(t, "down", h.Status)
	require.Len(t, h.Breakers, 1)
	assert.Equal(t, "OPEN", h.Breakers[0].State)

	rec = get("/health/degradation-events?limit=5")
	require.Equal(t, http.StatusOK, rec.Code)
	var evs []struct {
		Source  string `json:"source"`
		ToState string `json:"to_state"`
	}
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &evs), rec.Body.String())
	require.Len(t, evs, 1)
	assert.Equal(t, "OPEN", evs[0].ToState)

	rec = get("/health/")
	require.Equal(t, http.StatusOK, rec.Code)
	assert.True(t, strings.Contains(rec.Body.String(), "通达信 TDX"), "the dashboard shows display names")
	assert.Equal(t, http.StatusFound, get("/").Code)

	assert.Equal(t, http.StatusBadRequest, get("/health/degradation-events?limit=x").Code)
	rec = httptest.NewRecorder()
	mux.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/health/datasources", nil))
	assert.Equal(t, http.StatusMethodNotAllowed, rec.Code)
}

// staleAge is the age in a stale answer's provenance ("stale 11s"): how
// long the scenes before it took, which TestScenario does not pin down.
var staleAge = regexp.MustCompile(`stale \d+s`)

// reasonHead is an event reason up to its first colon.
func reasonHead(reason string) string {
	head, _, _ := strings.Cut(reason, ":")
	return head
}
