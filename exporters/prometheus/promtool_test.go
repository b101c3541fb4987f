package prometheus_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/breakergen/breakergen/exporters/prometheus"
	"github.com/breakergen/breakergen/runtime"
	prom "github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// promtool runs Prometheus's promtool with args and stdin, and returns
// what it printed and whether it succeeded. Without promtool the test
// is skipped.
func promtool(t *testing.T, stdin io.Reader, args ...string) (string, bool) {
	t.Helper()
	path, err := exec.LookPath("promtool")
	if err != nil {
		t.Skip("missing component: promtool (apt-get install prometheus)")
	}
	cmd := exec.Command(path, args...)
	cmd.Stdin = stdin
	out, err := cmd.CombinedOutput()
	if _, exit := err.(*exec.ExitError); err != nil && !exit {
		require.NoError(t, err)
	}
	return string(out), err == nil
}

// fullRegistry is a registry with call counting and one breaker of each
// kind (plain, with a window, a concurrency limit, an inflight bound, a
// throttle), each with calls, and a Collector of it whose chains have
// answered in every way.
func fullRegistry(t *testing.T) (*runtime.Registry, *prometheus.Collector) {
	reg := newRegistry(runtime.WithCallCounts())
	ctx := context.Background()
	for _, cfg := range []runtime.Config{
		{Name: "tdx", FailureThreshold: 1},
		{Name: "windowed", WindowCalls: 100},
		{Name: "bulkhead", Concurrency: 4},
		{Name: "hung", InFlight: time.Minute},
		{Name: "throttled", Throttle: 2},
	} {
		b := reg.Breaker(cfg)
		require.NoError(t, b.Do(ctx, succeed))
	}
	fam := reg.Family(runtime.Config{Name: "quote", FailureThreshold: 1}, runtime.FamilyConfig{Keys: 2})
	for _, key := range []string{"600519", "000001", "000002"} { // one dropped
		require.NoError(t, fam.Breaker(key).Do(ctx, succeed))
	}
	require.ErrorIs(t, fam.Breaker("000002").Do(ctx, fail), errDown)
	tdx, _ := reg.Lookup("tdx")
	require.ErrorIs(t, tdx.Do(ctx, fail), errDown)
	require.ErrorIs(t, tdx.Do(ctx, succeed), runtime.ErrOpen)

	c := prometheus.NewCollector(reg)
	prometheus.SetChainAnswers(c, func() []runtime.ChainAnswer {
		var out []runtime.ChainAnswer
		for _, kind := range []string{"live", "fallback", "stale", "hedged", "none"} {
			out = append(out, runtime.ChainAnswer{Source: "tdx", Kind: kind, Count: 1})
		}
		return out
	})
	return reg, c
}

func TestScrapePassesPromtoolCheckMetrics(t *testing.T) {
	_, c := fullRegistry(t)
	r := prom.NewRegistry()
	r.MustRegister(c)
	scrape := scrapeOf(t, r)
	for _, line := range []string{
		`breakergen_breaker_state{breaker="tdx",state="open"} 1`,
		`breakergen_breaker_calls_total{breaker="tdx",outcome="rejected"} 1`,
		`breakergen_breaker_transitions_total{breaker="tdx",from="closed",to="open"} 1`,
		`breakergen_breaker_failure_rate{breaker="windowed"} 0`,
		`breakergen_breaker_in_flight{breaker="bulkhead"} 0`,
		`breakergen_chain_answers_total{kind="stale",source="tdx"} 1`,
		`breakergen_family_calls_total{family="quote",outcome="success"} 3`,
		`breakergen_family_transitions_total{family="quote",from="closed",to="open"} 1`,
		`breakergen_family_keys{family="quote"} 2`,
		`breakergen_family_open_keys{family="quote"} 1`,
		`breakergen_family_key_limit{family="quote"} 2`,
		`breakergen_family_dropped_keys_total{family="quote"} 1`,
		`breakergen_family_kept_closed_total{family="quote"} 0`,
	} {
		assert.Contains(t, scrape, line+"\n")
	}

	assert.NotContains(t, scrape, `breaker="quote/`, "no series per key by default")

	out, ok := promtool(t, strings.NewReader(scrape), "check", "metrics")
	assert.True(t, ok, "promtool check metrics:\n%s\nscrape:\n%s", out, scrape)
	assert.Empty(t, strings.TrimSpace(out), "no lint problems")
}

func TestRules(t *testing.T) {
	out, ok := promtool(t, nil, "check", "rules", "rules.yml")
	require.True(t, ok, out)
	assert.Contains(t, out, "SUCCESS: 5 rules found")

	out, ok = promtool(t, nil, "test", "rules", "rules_test.yml")
	require.True(t, ok, out)
	assert.Contains(t, out, "SUCCESS")
}

func TestRulesTestsCoverEveryAlert(t *testing.T) {
	rules, err := os.ReadFile("rules.yml")
	require.NoError(t, err)
	tests, err := os.ReadFile("rules_test.yml")
	require.NoError(t, err)
	alerts := alertNames(string(rules))
	assert.ElementsMatch(t, []string{"BreakerOpen", "BreakerFlapping", "BreakerHeldByOperator", "ChainAnsweringStale",
		"BreakerFamilyMostlyOpen"}, alerts)
	for _, a := range alerts {
		assert.Contains(t, string(tests), "alertname: "+a+"\n", "rules_test.yml tests %s", a)
	}
}

// scrapeOf returns what a Prometheus server scraping r reads: r served by
// promhttp over HTTP, which must answer 200.
func scrapeOf(t *testing.T, r *prom.Registry) string {
	t.Helper()
	srv := httptest.NewServer(promhttp.HandlerFor(r, promhttp.HandlerOpts{}))
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return string(body)
}
