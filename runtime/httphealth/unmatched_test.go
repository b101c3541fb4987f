package httphealth_test

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/breakergen/breakergen/runtime"
	"github.com/breakergen/breakergen/runtime/httphealth"
)

// hostile is a name of a setting made to run a script if a page ever
// parsed it as HTML.
const hostile = `<img src=x onerror="window.__pwned=1">`

// unmatchedFixture is a registry whose settings name three things it does
// not hold: BREAKER_QOUTES_* (a typo for quotes), and WithConfig's "tdx2"
// and hostile; it holds quotes, tdx and a family quote.
func unmatchedFixture(t *testing.T, opts ...httphealth.Option) *fixture {
	t.Helper()
	t.Setenv("BREAKER_QOUTES_THRESHOLD", "3")
	clock := newFakeClock(start)
	reg := runtime.NewRegistry(runtime.WithClock(clock), runtime.WithLogger(slog.New(slog.DiscardHandler)),
		runtime.WithConfig(runtime.Config{Name: "tdx2", FailureThreshold: 2}, runtime.Config{Name: hostile, FailureThreshold: 2}))
	reg.Breaker(runtime.Config{Name: "quotes"})
	reg.Breaker(runtime.Config{Name: "tdx"})
	reg.Family(runtime.Config{Name: "quote"}, runtime.FamilyConfig{}).Breaker("600519")
	opts = append([]httphealth.Option{httphealth.WithClock(clock)}, opts...)
	return &fixture{clock: clock, reg: reg, h: httphealth.New(reg, opts...)}
}

// plainFixture is a registry with no run-time settings at all.
func plainFixture(t *testing.T, opts ...httphealth.Option) *fixture {
	t.Helper()
	clock := newFakeClock(start)
	reg := runtime.NewRegistry(runtime.WithClock(clock), runtime.WithLogger(slog.New(slog.DiscardHandler)), runtime.WithoutEnv())
	reg.Breaker(runtime.Config{Name: "quotes"})
	opts = append([]httphealth.Option{httphealth.WithClock(clock)}, opts...)
	return &fixture{clock: clock, reg: reg, h: httphealth.New(reg, opts...)}
}

// rawJSON gets target and decodes its answer as it is, field by field.
func (f *fixture) rawJSON(t *testing.T, target string) map[string]any {
	t.Helper()
	rec := f.serve(http.MethodGet, target)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	var doc map[string]any
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &doc), rec.Body.String())
	return doc
}

// TestPagesListUnmatchedSettings: the paged /health/datasources answers,
// which the dashboard polls, carry the Health document's
// unmatched_settings on every page (a search's and a family's too), and
// leave it out when every setting names something.
func TestPagesListUnmatchedSettings(t *testing.T) {
	f := unmatchedFixture(t)
	want := []any{strconv.Quote(hostile), `"tdx2"`, "BREAKER_QOUTES_*"}
	for _, target := range []string{
		"/health/datasources?page=1",
		"/health/datasources?page=1&q=tdx",
		"/health/datasources?q=nothing-matches",
		"/health/datasources?family=quote",
		"/health/datasources", // the full document, as before
	} {
		doc := f.rawJSON(t, target)
		require.Contains(t, doc, "unmatched_settings", target)
		assert.Equal(t, want, doc["unmatched_settings"], target)
		assert.Contains(t, doc, "breakers", "%s: the other fields stay", target)
	}

	// Making the breaker a setting named matches it: the list shrinks.
	f.reg.Breaker(runtime.Config{Name: "tdx2"})
	assert.Equal(t, []any{strconv.Quote(hostile), "BREAKER_QOUTES_*"}, f.rawJSON(t, "/health/datasources?page=1")["unmatched_settings"])

	plain := plainFixture(t)
	for _, target := range []string{"/health/datasources?page=1", "/health/datasources"} {
		doc := plain.rawJSON(t, target)
		assert.NotContains(t, doc, "unmatched_settings", "%s: left out when empty", target)
		assert.Contains(t, doc, "status", target)
	}
}

// TestDashboardUnmatchedNotice: the server-rendered dashboard names the
// settings that match nothing in a notice near the top, the names escaped;
// without one the notice is there but hidden, for the script to fill.
func TestDashboardUnmatchedNotice(t *testing.T) {
	page := unmatchedFixture(t).dashboard(t)
	notice := regexp.MustCompile(`<p class="unmatched" data-f="unmatched">.*?</p>`).FindString(page)
	require.NotEmpty(t, notice, "no visible notice in:\n%s", page)
	assert.Contains(t, notice, "Settings that name no breaker, family or limiter")
	assert.Contains(t, notice, `<code data-f="unmatched-names">&#34;&lt;img src=x onerror=\&#34;window.__pwned=1\&#34;&gt;&#34;, &#34;tdx2&#34;, BREAKER_QOUTES_*</code>`)
	assert.NotContains(t, page, "<img", "a name is text, never markup")
	assert.Less(t, strings.Index(page, `data-f="unmatched"`), strings.Index(page, "</header>"), "at the top")

	assert.Contains(t, plainFixture(t).dashboard(t),
		`<p class="unmatched" data-f="unmatched" hidden><span class="sym" aria-hidden="true">⚠</span> Settings that name no breaker, family or limiter: <code data-f="unmatched-names"></code>.`)
}
