package httphealth_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/breakergen/breakergen/runtime"
	"github.com/breakergen/breakergen/runtime/httphealth"
)

// pagedFixture registers 120 breakers, source000 to source119: twelve
// OPEN (every tenth), three HALF_OPEN (source005, 015 and 025), the rest
// CLOSED.
func pagedFixture(t *testing.T, opts ...httphealth.Option) *fixture {
	t.Helper()
	f := newFixture(t, opts...)
	for i := range 120 {
		cfg := runtime.Config{Name: fmt.Sprintf("source%03d", i), FailureThreshold: 1, ResetTimeout: time.Minute}
		switch {
		case i%10 == 0:
			fail(t, f.reg.Breaker(cfg), 1, "502 Bad Gateway")
		case i%10 == 5 && i < 30:
			cfg.ResetTimeout = time.Second
			fail(t, f.reg.Breaker(cfg), 1, "timeout")
		default:
			f.reg.Breaker(cfg)
		}
	}
	f.clock.Add(2 * time.Second)
	return f
}

// pageJSON is a paged /health/datasources answer.
type pageJSON struct {
	Status   runtime.Level   `json:"status"`
	Breakers []runtime.Stats `json:"breakers"`
	Counts   map[string]int  `json:"counts"`
	Total    int             `json:"total"`
	Query    string          `json:"q"`
	Matched  int             `json:"matched"`
	Page     int             `json:"page"`
	Pages    int             `json:"pages"`
	PerPage  int             `json:"per_page"`
	Family   string          `json:"family"`
	Families []familyJSON    `json:"families"`
}

// familyJSON is a family's row in a paged answer.
type familyJSON struct {
	Name       string         `json:"name"`
	Keys       int            `json:"keys"`
	Limit      int            `json:"limit"`
	Open       int            `json:"open"`
	MaxOpen    int            `json:"maxopen_percent"`
	Dropped    uint64         `json:"dropped"`
	KeptClosed uint64         `json:"kept_closed"`
	State      runtime.State  `json:"state"`
	Status     runtime.Level  `json:"status"`
	Counts     map[string]int `json:"counts"`
}

func (f *fixture) page(t *testing.T, query string) pageJSON {
	t.Helper()
	rec := f.serve(http.MethodGet, "/health/datasources?"+query)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	assertCommonHeaders(t, rec)
	var p pageJSON
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &p))
	return p
}

func names(p pageJSON) []string {
	var out []string
	for _, b := range p.Breakers {
		out = append(out, b.Name)
	}
	return out
}

func TestDatasourcesPaged(t *testing.T) {
	f := pagedFixture(t, httphealth.WithDisplayName("source042", "东方财富 East Money"))

	p := f.page(t, "page=1")
	assert.Equal(t, runtime.LevelDown, p.Status)
	assert.Equal(t, map[string]int{"ok": 105, "degraded": 3, "down": 12}, p.Counts)
	assert.Equal(t, 120, p.Total)
	assert.Equal(t, 120, p.Matched)
	assert.Equal(t, 1, p.Page)
	assert.Equal(t, 3, p.Pages)
	assert.Equal(t, httphealth.PageSize, p.PerPage)
	require.Len(t, p.Breakers, 50)
	got := names(p)
	assert.Equal(t, []string{"source000", "source010", "source020"}, got[:3], "down first, in name order")
	assert.Equal(t, []string{"source110", "source005", "source015", "source025", "source001"}, got[11:16],
		"then degraded, then ok")
	assert.Equal(t, runtime.Open, p.Breakers[0].State)
	assert.Equal(t, runtime.LevelDegraded, p.Breakers[12].Status)
	assert.Equal(t, runtime.LevelOK, p.Breakers[15].Status)

	p = f.page(t, "page=3")
	assert.Equal(t, 3, p.Page)
	assert.Len(t, p.Breakers, 20)
	assert.Equal(t, "source119", p.Breakers[19].Name)

	p = f.page(t, "page=99999999999999999999999")
	assert.Equal(t, 3, p.Page, "past the end: the last page")

	p = f.page(t, "q=SOURCE01")
	assert.Equal(t, 10, p.Matched, "case does not matter")
	assert.Equal(t, 1, p.Pages)
	assert.Equal(t, "source010", p.Breakers[0].Name)
	assert.Equal(t, "source015", p.Breakers[1].Name)
	assert.Equal(t, 120, p.Total)
	assert.Equal(t, 12, p.Counts["down"], "counts are over every breaker")

	p = f.page(t, "q="+url.QueryEscape(" 东方财富 "))
	assert.Equal(t, []string{"source042"}, names(p), "display names match too")
	assert.Equal(t, "东方财富", p.Query)

	p = f.page(t, "q=nothing&page=2")
	assert.Equal(t, 0, p.Matched)
	assert.Equal(t, 1, p.Page)
	assert.Equal(t, 1, p.Pages)
	assert.NotNil(t, p.Breakers)
	assert.Empty(t, p.Breakers)

	// Without page or q: the registry's Health as it always was.
	rec := f.serve(http.MethodGet, "/health/datasources")
	require.Equal(t, http.StatusOK, rec.Code)
	var raw map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &raw))
	assert.Len(t, raw, 2, "status and breakers only")
	var all runtime.Health
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &all))
	assert.Len(t, all.Breakers, 120)
	assert.Equal(t, "source000", all.Breakers[0].Name)
	assert.Equal(t, "source001", all.Breakers[1].Name, "name order")
}

func TestPagedBadInput(t *testing.T) {
	f := newFixture(t)
	for _, tc := range []struct{ target, mention string }{
		{"/health/datasources?page=0", `"0"`},
		{"/health/datasources?page=-1", `"-1"`},
		{"/health/datasources?page=two", `"two"`},
		{"/health/datasources?page=1&page=2", "2 times"},
		{"/health/datasources?q=a&q=b", "2 times"},
		{"/health/datasources?q=" + strings.Repeat("x", 257), "257 characters"},
		{"/health/?page=x", `"x"`},
		{"/health/?q=a&q=b", "2 times"},
	} {
		rec := f.serve(http.MethodGet, tc.target)
		require.Equal(t, http.StatusBadRequest, rec.Code, tc.target)
		assertCommonHeaders(t, rec)
		var body map[string]string
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &body))
		assert.Contains(t, body["error"], tc.mention, tc.target)
	}
}

func TestDashboardPaged(t *testing.T) {
	f := pagedFixture(t)
	page := f.dashboard(t)
	assert.Equal(t, 50, strings.Count(page, `<li class="card" data-name="source`))
	assert.Contains(t, page, `data-f="summary">120 sources: 12 down, 3 degraded, 105 ok. Those not ok come first.</p>`)
	assert.Regexp(t, `<nav class="pager" data-f="pager" aria-label="Pages of data sources">`, page, "shown")
	assert.Contains(t, page, `data-f="page-text" aria-live="polite">Page 1 of 3: 1–50 of 120.</span>`)
	assert.Regexp(t, `data-f="prev" data-end disabled>`, page)
	assert.Regexp(t, `data-f="next" disabled>`, page, "the script enables it")
	assert.Contains(t, page, "Add ?page=2 or ?q=name to the address")
	assert.Regexp(t, `<li class="card" data-name="source000" data-state="OPEN"`, page)
	assert.NotContains(t, page, `data-name="source119"`)

	page = f.dashboardAt(t, "?page=3")
	assert.Equal(t, 20, strings.Count(page, `<li class="card" data-name="source`))
	assert.Contains(t, page, "Page 3 of 3: 101–120 of 120.")
	assert.Contains(t, page, `data-name="source119"`)
	assert.Regexp(t, `data-f="next" data-end disabled>`, page)
	assert.Contains(t, page, `"page":3`)

	page = f.dashboardAt(t, "?q=%3Cb%3E")
	assert.Contains(t, page, `No source matches “&lt;b&gt;”.`, "escaped")
	assert.Contains(t, page, `value="&lt;b&gt;"`)
	assert.NotContains(t, page, "<b>")
	assert.Regexp(t, `data-f="cards-empty">No source`, page, "shown")
}

func TestDashboardSmallNoPager(t *testing.T) {
	f := newFixture(t)
	trace(t, f)
	page := f.dashboard(t)
	assert.Contains(t, page, `aria-label="Pages of data sources" hidden>`, "one page and no search: no pager")
	assert.Contains(t, page, `data-f="summary">1 source: 0 down, 0 degraded, 1 ok.`)
}

// dashboardAt gets the page with a query.
func (f *fixture) dashboardAt(t *testing.T, query string) string {
	t.Helper()
	rec := f.serve(http.MethodGet, "/health/"+query)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	return rec.Body.String()
}

// TestDroppedEventsShown: transitions dropped from a full event queue (a
// stalled hook) are counted in the Health JSON, the paged answer and the
// dashboard's summary.
func TestDroppedEventsShown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		stalled, release := make(chan struct{}), make(chan struct{})
		var once sync.Once
		reg := runtime.NewRegistry(runtime.WithoutEnv(), runtime.WithLogger(slog.New(slog.DiscardHandler)),
			runtime.OnStateChange(func(runtime.Event) { once.Do(func() { close(stalled); <-release }) }))
		f := &fixture{clock: newFakeClock(start), reg: reg}
		f.h = httphealth.New(reg, httphealth.WithClock(f.clock))
		assert.NotContains(t, f.serve(http.MethodGet, "/health/datasources").Body.String(), "dropped_events", "left out while zero")

		stuck := reg.Breaker(runtime.Config{Name: "stuck", FailureThreshold: 1})
		go func() { _ = stuck.Do(context.Background(), func(context.Context) error { return errors.New("down") }) }()
		<-stalled
		// The queue's capacity and 3 more transitions wait behind the
		// stalled hook: the 3 oldest are dropped.
		for i := range runtime.EventQueueCapacity + 3 {
			b := reg.Breaker(runtime.Config{Name: fmt.Sprintf("s%d", i%5), FailureThreshold: 1})
			fail(t, b, 1, "down")
			b.Reset()
		}

		var health runtime.Health
		require.NoError(t, json.Unmarshal(f.serve(http.MethodGet, "/health/datasources").Body.Bytes(), &health))
		assert.Equal(t, uint64(3), health.DroppedEvents)
		var paged struct {
			DroppedEvents uint64 `json:"dropped_events"`
		}
		require.NoError(t, json.Unmarshal(f.serve(http.MethodGet, "/health/datasources?page=1").Body.Bytes(), &paged))
		assert.Equal(t, uint64(3), paged.DroppedEvents)
		assert.Contains(t, f.dashboard(t), `data-f="summary">6 sources: 1 down, 0 degraded, 5 ok. Those not ok come first. `+
			`3 events not logged nor hooked (event queue full).</p>`)
		close(release)
		synctest.Wait()
	})
}

// TestPagedBreakerMadeByHandUnderFamily: a breaker made by hand with a
// family's key name ("quote/600519"), before the family's key is first
// used, is listed among the breakers until the family takes it over as
// the key, then in the family's row. It was in neither: OPEN, the page
// said "ok" and counted no source down.
func TestPagedBreakerMadeByHandUnderFamily(t *testing.T) {
	f := newFixture(t)
	fam := f.reg.Family(runtime.Config{Name: "quote", FailureThreshold: 1}, runtime.FamilyConfig{Keys: 10})
	fam.Breaker("600000") // a live key, CLOSED
	hand := f.reg.Breaker(runtime.Config{Name: "quote/600519", FailureThreshold: 1, ResetTimeout: time.Minute})
	fail(t, hand, 1, "502 Bad Gateway")

	p := f.page(t, "page=1")
	assert.Equal(t, runtime.LevelDown, p.Status)
	assert.Equal(t, map[string]int{"ok": 1, "degraded": 0, "down": 1}, p.Counts)
	assert.Equal(t, []string{"quote/600519"}, names(p))
	require.Len(t, p.Families, 1)
	assert.Equal(t, runtime.Closed, p.Families[0].State, "not one of its keys yet")

	// The key's first call takes the breaker over: in the family's row.
	require.Same(t, hand, fam.Breaker("600519"))
	p = f.page(t, "page=1")
	assert.Empty(t, p.Breakers)
	require.Len(t, p.Families, 1)
	assert.Equal(t, runtime.Open, p.Families[0].State)
	assert.Equal(t, map[string]int{"ok": 0, "degraded": 0, "down": 1}, p.Counts)
	assert.Equal(t, []string{"quote/600519", "quote/600000"}, names(f.page(t, "family=quote")))
}

// TestPagedAnswerSaysTheRecording: the paged answer adds to the document's
// fields (health.md), and the recording is one: it was left out, so the
// dashboard could never show it.
func TestPagedAnswerSaysTheRecording(t *testing.T) {
	clock := newFakeClock(start)
	var out bytes.Buffer
	reg := runtime.NewRegistry(runtime.WithClock(clock), runtime.WithoutEnv(), runtime.WithLogger(slog.New(slog.DiscardHandler)), runtime.WithRecorder(&out))
	f := &fixture{clock: clock, reg: reg, h: httphealth.New(reg, httphealth.WithClock(clock))}
	succeed(t, reg.Breaker(runtime.Config{Name: "em"}))
	rec := f.serve(http.MethodGet, "/health/datasources?page=1")
	require.Equal(t, http.StatusOK, rec.Code)
	var p struct {
		Recording *runtime.RecordingHealth `json:"recording"`
	}
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &p))
	require.NotNil(t, p.Recording, rec.Body.String())
	assert.Equal(t, uint64(1), p.Recording.Calls+p.Recording.Dropped)
	require.NoError(t, reg.Close())
}
