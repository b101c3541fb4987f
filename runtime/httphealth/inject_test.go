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

// TestDashboardInjectingBadge: while a breaker's settings inject faults the
// page shows a "fault injection on" badge naming it, and the Health JSON
// gives the setting; without injection the badge is hidden.
func TestDashboardInjectingBadge(t *testing.T) {
	clock := newFakeClock(start)
	reg := runtime.NewRegistry(runtime.WithClock(clock), runtime.WithLogger(slog.New(slog.DiscardHandler)), runtime.WithoutEnv(),
		runtime.WithConfig(runtime.Config{Name: "eastmoney", Fault: 0.3}))
	reg.Breaker(runtime.Config{Name: "eastmoney"})
	reg.Breaker(runtime.Config{Name: "tdx"})
	f := &fixture{clock: clock, reg: reg, h: httphealth.New(reg, httphealth.WithClock(clock))}
	page := f.dashboard(t)
	assert.Contains(t, page, `<p class="badge injecting" data-f="injecting"><span class="sym" aria-hidden="true">⚠</span> <span data-f="injecting-word">Fault injection on: eastmoney</span></p>`)
	rec := f.serve(http.MethodGet, "/health/datasources")
	require.Equal(t, http.StatusOK, rec.Code)
	assert.Contains(t, rec.Body.String(), `"fault": 0.3`, "the Health JSON gives the setting while it is on")

	plain := newFixture(t)
	plain.reg.Breaker(runtime.Config{Name: "tdx"})
	assert.Contains(t, plain.dashboard(t), `<p class="badge injecting" data-f="injecting" hidden>`)
}

// TestDashboardInjectingKey: a key of a family that injects on its own
// (WithConfig by its name, or BREAKER_<FAMILY>/<KEY>_FAULT) shows in the
// badge: on the first page by its family, on the family's page by its
// name, and in both pages' JSON. The badge stayed hidden, so an operator
// could not tell that the key was failing on purpose.
func TestDashboardInjectingKey(t *testing.T) {
	clock := newFakeClock(start)
	reg := runtime.NewRegistry(runtime.WithClock(clock), runtime.WithLogger(slog.New(slog.DiscardHandler)), runtime.WithoutEnv(),
		runtime.WithConfig(runtime.Config{Name: "hosts/a.example", Fault: 1}))
	fam := reg.Family(runtime.Config{Name: "hosts"}, runtime.FamilyConfig{})
	fam.Breaker("a.example")
	fam.Breaker("b.example")
	f := &fixture{clock: clock, reg: reg, h: httphealth.New(reg, httphealth.WithClock(clock))}
	assert.Contains(t, f.dashboard(t), `<span data-f="injecting-word">Fault injection on: hosts</span>`)
	injecting := func(path string) []string {
		rec := f.serve(http.MethodGet, path)
		require.Equal(t, http.StatusOK, rec.Code, path)
		var page struct{ Injecting []string }
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &page), path)
		return page.Injecting
	}
	assert.Equal(t, []string{"hosts"}, injecting("/health/datasources?page=1"), "the first page names the family")
	assert.Equal(t, []string{"hosts/a.example"}, injecting("/health/datasources?family=hosts"), "the family's page names the key")
}
