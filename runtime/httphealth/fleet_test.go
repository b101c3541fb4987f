package httphealth_test

import (
	"context"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/breakergen/breakergen/runtime"
)

// stillFleet is a [runtime.Sharer] that shares nothing and reports the
// fleet health it is told to.
type stillFleet struct {
	health atomic.Pointer[runtime.FleetHealth]
}

func (*stillFleet) Created(*runtime.Breaker)                                  {}
func (*stillFleet) Transition(*runtime.Breaker, runtime.Event, time.Duration) {}
func (*stillFleet) Probe(*runtime.Breaker) (bool, time.Duration)              { return true, 0 }
func (*stillFleet) Wait(context.Context, *runtime.Limiter, time.Duration) (bool, error) {
	return false, nil
}
func (s *stillFleet) Health() runtime.FleetHealth { return *s.health.Load() }

func (s *stillFleet) set(h runtime.FleetHealth) { s.health.Store(&h) }

// fleetLine returns the markup of the page's fleet line.
func fleetLine(t *testing.T, page string) string {
	t.Helper()
	m := regexp.MustCompile(`<p class="fleet" data-f="fleet".*?</p>`).FindString(page)
	require.NotEmpty(t, m, "no fleet line in:\n%s", page)
	return m
}

// TestDashboardFleetLine: the server renders the fleet line in full, as
// the page's script does (TestDashboardLoadFieldsInBrowser), so that the
// page says Redis is down without JavaScript: its level, its symbol and
// its words, a duplicate origin as text; without a fleet the line is
// there but hidden, for the script to fill.
func TestDashboardFleetLine(t *testing.T) {
	f := newFixture(t)
	f.reg.Breaker(runtime.Config{Name: "tdx"})
	assert.Contains(t, f.dashboard(t),
		`<p class="fleet" data-f="fleet" hidden><span class="sym" aria-hidden="true" data-f="fleet-sym"></span> <span data-f="fleet-word"></span></p>`,
		"no fleet: hidden and empty")

	var fleet stillFleet
	fleet.set(runtime.FleetHealth{Redis: "down", Members: 3})
	stop, err := f.reg.Share(&fleet)
	require.NoError(t, err)
	t.Cleanup(stop)
	for _, c := range []struct {
		health runtime.FleetHealth
		want   string
	}{
		{runtime.FleetHealth{Redis: "down", Members: 3},
			`<p class="fleet" data-f="fleet" data-level="down"><span class="sym" aria-hidden="true" data-f="fleet-sym">✕</span> <span data-f="fleet-word">Fleet: Redis down, 3 members; each process on its own breakers</span></p>`},
		{runtime.FleetHealth{Redis: "down", Members: 0},
			`<span data-f="fleet-word">Fleet: Redis down; each process on its own breakers</span>`},
		{runtime.FleetHealth{Redis: "ok", Members: 1},
			`<p class="fleet" data-f="fleet" data-level="ok"><span class="sym" aria-hidden="true" data-f="fleet-sym">✓</span> <span data-f="fleet-word">Fleet: Redis ok, 1 member</span></p>`},
		{runtime.FleetHealth{Redis: "ok", Members: 2, DuplicateOrigin: "vm:5726"},
			`<p class="fleet" data-f="fleet" data-level="degraded"><span class="sym" aria-hidden="true" data-f="fleet-sym">⚠</span> <span data-f="fleet-word">Fleet: Redis ok, 2 members; another member is also vm:5726: neither follows the other&#39;s trips (give each its own WithOrigin)</span></p>`},
		{runtime.FleetHealth{Redis: "ok", Members: 2, DuplicateOrigin: hostile},
			`<span data-f="fleet-word">Fleet: Redis ok, 2 members; another member is also &lt;img src=x onerror=&#34;window.__pwned=1&#34;&gt;: neither`},
	} {
		fleet.set(c.health)
		f.clock.Add(time.Minute) // past the rendered page's refresh interval
		page := f.dashboard(t)
		assert.Contains(t, fleetLine(t, page), c.want, "%+v", c.health)
		assert.NotContains(t, page, "<img", "an origin is text, never markup")
		assert.Less(t, strings.Index(page, `data-f="fleet"`), strings.Index(page, "</header>"), "at the top")
	}
}
