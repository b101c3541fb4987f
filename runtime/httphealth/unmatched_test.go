package httphealth_test

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/breakergen/breakergen/runtime"
	"github.com/breakergen/breakergen/runtime/httphealth"
)

// unmatchedFixture is a registry whose settings name two things it does
// not hold: BREAKER_QOUTES_* (a typo for quotes) and WithConfig's "tdx2";
// it holds quotes, tdx and a family quote.
func unmatchedFixture(t *testing.T, opts ...httphealth.Option) *fixture {
	t.Helper()
	t.Setenv("BREAKER_QOUTES_THRESHOLD", "3")
	clock := newFakeClock(start)
	reg := runtime.NewRegistry(runtime.WithClock(clock), runtime.WithLogger(slog.New(slog.DiscardHandler)),
		runtime.WithConfig(runtime.Config{Name: "tdx2", FailureThreshold: 2}))
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
	want := []any{`"tdx2"`, "BREAKER_QOUTES_*"}
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
	assert.Equal(t, []any{"BREAKER_QOUTES_*"}, f.rawJSON(t, "/health/datasources?page=1")["unmatched_settings"])

	plain := plainFixture(t)
	for _, target := range []string{"/health/datasources?page=1", "/health/datasources"} {
		doc := plain.rawJSON(t, target)
		assert.NotContains(t, doc, "unmatched_settings", "%s: left out when empty", target)
		assert.Contains(t, doc, "status", target)
	}
}
