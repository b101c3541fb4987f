package httphealth

import (
	"bytes"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/breakergen/breakergen/runtime"
)

// loaded is a breaker with every figure of SPEC §8 and §9, as the branches
// that build them will fill in its Stats (the same figures as the browser
// test's fixture JSON, so that the server and the script are held to the
// same text).
var loaded = runtime.Stats{
	Name: "eastmoney", State: runtime.Closed, Status: runtime.LevelOK,
	Window: "1m0s", WindowCalls: 50, WindowFailures: 31, WindowSlow: 40,
	FailureRate: 0.62, FailureRateThreshold: 0.5, SlowRate: 0.8, SlowRateThreshold: 0.5,
	InFlight: 3, Concurrency: 10, ThrottleProbability: 0.12, Throttled: 7, BulkheadFull: 2,
}

func TestLoadRows(t *testing.T) {
	rows := func(s runtime.Stats) map[string]string {
		out := map[string]string{}
		for _, r := range loadRows(s) {
			if !r.Hidden {
				out[r.Key] = r.Value
			}
		}
		return out
	}
	assert.Empty(t, rows(runtime.Stats{Name: "tdx"}), "nothing configured: every row hidden")
	assert.Equal(t, map[string]string{
		"window":        "1m0s",
		"window_calls":  "50 (31 failed, 40 slow)",
		"failure_rate":  "62% (trips at 50%)",
		"slow_rate":     "80% (trips at 50%)",
		"in_flight":     "3 of 10",
		"throttle":      "12% of calls",
		"throttled":     "7",
		"bulkhead_full": "2",
	}, rows(loaded))

	// A window without slow calls, in-flight counting without a limit, a
	// throttle that refuses nothing yet but has refused before.
	assert.Equal(t, map[string]string{
		"window":       "100 calls",
		"window_calls": "0 (0 failed, 0 slow)",
		"failure_rate": "0% (trips at 50%)",
		"in_flight":    "2",
		"throttle":     "0% of calls",
		"throttled":    "1",
	}, rows(runtime.Stats{Window: "100 calls", FailureRateThreshold: 0.5, InFlight: 2, Throttled: 1}))

	// A throttle that has refused nothing yet (SPEC §9: its probability is
	// shown whenever there is one).
	assert.Equal(t, map[string]string{"throttle": "0% of calls"}, rows(runtime.Stats{Throttle: 2}))
}

func TestPercent(t *testing.T) {
	for f, want := range map[float64]string{0: "0%", 0.004: "0%", 0.005: "1%", 0.125: "13%", 0.5: "50%", 1: "100%"} {
		assert.Equal(t, want, percent(f), "%v", f)
	}
}

// TestDashboardLoadRowsRendered: the server renders the rows as the
// script fills them in, hidden where the breaker has nothing to show.
func TestDashboardLoadRowsRendered(t *testing.T) {
	h := New(runtime.NewRegistry(runtime.WithoutEnv()))
	p := breakerPage{Status: runtime.LevelOK, Page: 1, Pages: 1, PerPage: PageSize, Total: 2, Matched: 2,
		Breakers: []runtime.Stats{loaded, {Name: "tdx", State: runtime.Closed, Status: runtime.LevelOK}}}
	var buf bytes.Buffer
	require.NoError(t, dashboardTmpl.Execute(&buf, h.page(p, nil)))
	html := buf.String()
	card := func(name string) string {
		m := regexp.MustCompile(`(?s)<li class="card" data-name="` + name + `".*?</li>`).FindString(html)
		require.NotEmpty(t, m, name)
		return m
	}
	em := card("eastmoney")
	assert.Contains(t, em, `<div data-row="failure_rate"><dt>Failure rate</dt><dd data-f="failure_rate">62% (trips at 50%)</dd></div>`)
	assert.Contains(t, em, `<div data-row="slow_rate"><dt>Slow-call rate</dt><dd data-f="slow_rate">80% (trips at 50%)</dd></div>`)
	assert.Contains(t, em, `<div data-row="in_flight"><dt>In flight</dt><dd data-f="in_flight">3 of 10</dd></div>`)
	assert.Contains(t, em, `<div data-row="throttle"><dt>Throttle refuses</dt><dd data-f="throttle">12% of calls</dd></div>`)
	assert.Contains(t, card("tdx"), `<div data-row="window" hidden>`)
	assert.Contains(t, card("tdx"), `<div data-row="in_flight" hidden>`)
	// The pictures wait for the script, which draws them.
	assert.Contains(t, em, `<figure class="pic" data-f="band-fig" hidden>`)
	assert.Contains(t, em, `<figure class="pic" data-f="chart-fig" hidden>`)
	assert.Contains(t, html, `<div class="legend" data-f="legend" hidden>`)
	assert.Contains(t, html, `"band_ms":3600000,"band_limit":1000,"band_pages":5,"chart_points":60`)
}
