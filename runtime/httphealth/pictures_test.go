package httphealth_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/breakergen/breakergen/runtime"
	"github.com/breakergen/breakergen/runtime/httphealth"
)

// bandStates returns the states of the spans of the state band of the
// breaker called name, oldest first.
func (p page) bandStates(name string) []string {
	p.t.Helper()
	return eval[[]string](p, fmt.Sprintf(`[...document.querySelectorAll('[data-name=%s] [data-f=band] rect')].map(r => r.dataset.state)`,
		strconv.Quote(name)))
}

// bandTitles returns the hover texts of the spans of that band.
func (p page) bandTitles(name string) []string {
	p.t.Helper()
	return eval[[]string](p, fmt.Sprintf(`[...document.querySelectorAll('[data-name=%s] [data-f=band] rect > title')].map(t => t.textContent)`,
		strconv.Quote(name)))
}

// chart returns an attribute of the chart of the breaker called name.
func (p page) chart(name, attr string) string {
	p.t.Helper()
	return eval[string](p, fmt.Sprintf(`document.querySelector('[data-name=%s] [data-f=chart]').getAttribute(%s) || ""`,
		strconv.Quote(name), strconv.Quote(attr)))
}

// elementShot saves a PNG of the element sel picks, called name.
func (p page) elementShot(sel, name string) {
	p.t.Helper()
	require.NoError(p.t, chromedp.Do(p.ctx, chromedp.ScrollIntoView(chromedp.CSS(sel))))
	png, err := chromedp.Run(p.ctx, chromedp.Screenshot(chromedp.CSS(sel)))
	require.NoError(p.t, err)
	file := filepath.Join(p.dir, name)
	require.NoError(p.t, os.WriteFile(file, png, 0o644))
	p.t.Logf("screenshot: %s", file)
}

// pointAt moves the mouse to the middle of the element sel picks until
// the expression is true: the layout may move under the pointer (a
// scroll bar coming and going) between reading where the element is and
// moving there.
func (p page) pointAt(sel, expr string) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, 15*time.Second)
	defer cancel()
	for ctx.Err() == nil {
		xy := eval[[]float64](p, fmt.Sprintf(`(() => {
			const el = document.querySelector(%s);
			el.scrollIntoView({block: "center"});
			const b = el.getBoundingClientRect();
			return [b.left + b.width / 2, b.top + b.height / 2]; })()`, strconv.Quote(sel)))
		require.NoError(p.t, chromedp.Do(p.ctx, chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, xy[0], xy[1])))
		if eval[bool](p, expr) {
			return
		}
	}
	p.waitFor("pointing at "+sel, expr) // fails, with the page's text
}

// tapAt taps the middle of the element sel picks with one finger until
// the expression is true (see pointAt).
func (p page) tapAt(sel, expr string) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, 15*time.Second)
	defer cancel()
	for ctx.Err() == nil {
		xy := eval[[]float64](p, fmt.Sprintf(`(() => {
			const el = document.querySelector(%s);
			el.scrollIntoView({block: "center"});
			const b = el.getBoundingClientRect();
			return [b.left + b.width / 2, b.top + b.height / 2]; })()`, strconv.Quote(sel)))
		for _, params := range []input.DispatchTouchEventParams{
			{Type: input.DispatchTouchEventTypeTouchStart, TouchPoints: []*input.TouchPoint{{X: xy[0], Y: xy[1]}}},
			{Type: input.DispatchTouchEventTypeTouchEnd, TouchPoints: []*input.TouchPoint{}},
		} {
			_, err := chromedp.Call(p.ctx, input.DispatchTouchEvent, params)
			require.NoError(p.t, err)
		}
		if eval[bool](p, expr) {
			return
		}
	}
	p.waitFor("tapping "+sel, expr) // fails, with the page's text
}

// noSideScroll checks that nothing is wider than the screen.
func (p page) noSideScroll() {
	p.t.Helper()
	assert.True(p.t, eval[bool](p, `document.documentElement.scrollWidth <= window.innerWidth`),
		"no horizontal scrolling at %v px: scrollWidth %v", eval[float64](p, `window.innerWidth`),
		eval[float64](p, `document.documentElement.scrollWidth`))
}

// TestDashboardPicturesInBrowser: each card gets a state band of the last
// hour, built from the degradation log, and a chart of its counters over
// the last refreshes; both change as the server's breakers trip and
// recover, at desktop and at phone width.
func TestDashboardPicturesInBrowser(t *testing.T) {
	bctx, cancel := browserTest(t)

	clock := newFakeClock(start)
	reg := runtime.NewRegistry(runtime.WithClock(clock), runtime.WithLogger(slog.New(slog.DiscardHandler)),
		runtime.WithCallCounts())
	h := httphealth.New(reg, httphealth.WithClock(clock), httphealth.WithRefresh(100*time.Millisecond),
		httphealth.WithDisplayName("eastmoney", "东方财富 East Money"), httphealth.WithDisplayName("tdx", "通达信 TDX"))
	em := reg.Breaker(runtime.Config{Name: "eastmoney", FailureThreshold: 2, ResetTimeout: 30 * time.Second})
	tdx := reg.Breaker(runtime.Config{Name: "tdx", FailureThreshold: 1, ResetTimeout: time.Minute})
	old := reg.Breaker(runtime.Config{Name: "sina", FailureThreshold: 1, ResetTimeout: time.Minute})

	// Two hours ago (09:30) sina went down and came back: before the band,
	// which starts at 10:30.
	fail(t, old, 1, "long ago")
	clock.Add(time.Hour)
	old.Reset()
	clock.Add(35 * time.Minute)
	// 25 minutes ago (11:05) tdx was down for a minute, then probed and recovered.
	fail(t, tdx, 1, "dial tcp: connection refused")
	clock.Add(time.Minute)
	require.Equal(t, runtime.HalfOpen, tdx.State())
	succeed(t, tdx)
	clock.Add(24 * time.Minute)
	for range 3 {
		succeed(t, em)
	}

	// The requests for the bands, to check what the page asks for.
	var mu sync.Mutex
	var bandQueries []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == httphealth.PathEvents && r.URL.Query().Has("source") {
			mu.Lock()
			bandQueries = append(bandQueries, r.URL.RawQuery)
			mu.Unlock()
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)

	console := watchConsole(bctx)
	require.NoError(t, chromedp.Do(bctx, chromedp.EmulateViewport(1280, 900), chromedp.Navigate(srv.URL+"/health/")))
	p := page{t: t, ctx: bctx, dir: artifactDir(t)}
	p.waitFor("the pictures of three cards, with a point on each chart",
		`document.querySelectorAll('[data-f=band][data-spans]').length === 3 &&
		 [...document.querySelectorAll('[data-f=chart]')].every(c => Number(c.dataset.points) >= 1)`)
	eval[bool](p, `window.__sameDocument = true`)
	assert.True(t, eval[bool](p, `!document.querySelector('[data-f=legend]').hidden`), "the legend shows")
	assert.Equal(t, "State band, last hour: closed half-open open isolated bypassed not shown",
		eval[string](p, `document.querySelector('[data-f=legend] p').textContent.replace(/\s+/g, " ").trim()`))

	// The page asks for the events of its own breakers over the last hour.
	mu.Lock()
	require.NotEmpty(t, bandQueries)
	q := bandQueries[0]
	mu.Unlock()
	assert.Contains(t, q, "source=eastmoney")
	assert.Contains(t, q, "source=tdx")
	assert.Contains(t, q, "since=2026-10-06T10%3A30%3A00.123Z", "one hour before the server's clock")

	// tdx: closed, its minute down, the probe, closed again.
	assert.Equal(t, []string{"CLOSED", "OPEN", "HALF_OPEN", "CLOSED"}, p.bandStates("tdx"))
	titles := p.bandTitles("tdx")
	require.Len(t, titles, 4)
	assert.Equal(t, "Closed (ok), until 11:05:00 UTC (35 min)", titles[0])
	assert.Equal(t, "Open (down), 11:05:00–11:06:00 UTC (1 min): dial tcp: connection refused", titles[1])
	assert.Contains(t, titles[2], "Half-open (degraded), 11:06:00–11:06:00 UTC (0 s): reset 1m0s elapsed, probing")
	assert.Equal(t, "Closed (ok), 11:06:00–now UTC (24 min): half-open probe succeeded (1/1)", titles[3])
	assert.Equal(t, "opened 1×, open 1 min in all", p.cardText("tdx", "band-text"))
	assert.Equal(t, "State over the last hour: opened 1×, open 1 min in all.", p.figureAttr("tdx", "band", "aria-label"))
	// sina: its trip and reset are older than the band.
	assert.Equal(t, []string{"CLOSED"}, p.bandStates("sina"))
	assert.Equal(t, "no change", p.cardText("sina", "band-text"))
	// Each span is drawn as wide as its share of the hour.
	assert.InDelta(t, 35.0/60, eval[float64](p, `(() => {
		const r = document.querySelector('[data-name=tdx] [data-f=band] rect');
		return r.width.baseVal.value / 3600000; })()`), 1e-4)

	// eastmoney trips between two refreshes: its band gains an OPEN span
	// with the reason on hover, and its chart a point with the failures.
	assert.Equal(t, []string{"CLOSED"}, p.bandStates("eastmoney"))
	assert.Equal(t, "no calls", p.cardText("eastmoney", "chart-text"), "its calls came before the page: counted, no fallback note")
	points := p.chartPoints("eastmoney")
	fail(t, em, 2, "marketdata: 403 Forbidden")
	clock.Add(10 * time.Second)
	p.waitFor("eastmoney's band OPEN and its chart with the failures",
		`[...document.querySelectorAll('[data-name=eastmoney] [data-f=band] rect')].map(r => r.dataset.state).join() === "CLOSED,OPEN" &&
		 document.querySelector('[data-name=eastmoney] [data-f=chart]').getAttribute("aria-label").includes(" 2 calls, 2 failures, 0 refusals") &&
		 document.querySelector('[data-name=eastmoney] [data-f=band-text]').textContent === "opened 1×, open 10 s in all"`)
	assert.True(t, p.chartPoints("eastmoney") > points || points == 60, "a point more (%d before)", points)
	titles = p.bandTitles("eastmoney")
	require.Len(t, titles, 2)
	assert.Equal(t, "Open (down), 11:30:00–now UTC (10 s): marketdata: 403 Forbidden", titles[1])
	assert.Equal(t, "opened 1×, open 10 s in all", p.cardText("eastmoney", "band-text"))

	// Rejections are refusals: the next refresh's point shows them.
	for range 4 {
		err := em.Do(context.Background(), func(context.Context) error { return nil })
		require.ErrorIs(t, err, runtime.ErrOpen)
	}
	p.waitFor("the refusals on eastmoney's chart",
		`/ [1-9]\d* refusals/.test(document.querySelector('[data-name=eastmoney] [data-f=chart]').getAttribute("aria-label"))`)
	assert.Contains(t, p.chart("eastmoney", "aria-label"), " 4 refusals.")
	assert.Regexp(t, `^peak [1-4] per refresh$`, p.cardText("eastmoney", "chart-text"), "4 at most: the refusals may fall on two refreshes")
	p.waitFor("a few more refreshes, for the picture",
		`Number(document.querySelector('[data-name=eastmoney] [data-f=chart]').dataset.points) >= 25`)
	p.screenshot("dashboard-pictures.png")
	p.elementShot(`[data-name=eastmoney]`, "dashboard-state-band.png")

	// Pointing at a span shows its text in the caption too, for screens
	// without tooltips; leaving the band brings the summary back.
	p.pointAt(`[data-name=tdx] [data-f=band] rect[data-state=OPEN]`,
		`document.querySelector('[data-name=tdx] [data-f=band-text]').textContent.startsWith("Open (down), 11:05:00–11:06:00 UTC")`)
	assert.Equal(t, "Open (down), 11:05:00–11:06:00 UTC (1 min): dial tcp: connection refused", p.cardText("tdx", "band-text"))
	require.NoError(t, chromedp.Do(bctx, chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, 1, 1)))
	p.waitFor("the summary back", `document.querySelector('[data-name=tdx] [data-f=band-text]').textContent === "opened 1×, open 1 min in all"`)

	// The probe succeeds: HALF_OPEN then CLOSED.
	clock.Add(21 * time.Second) // past the 30 s window that began at 11:30:00.123
	require.Equal(t, runtime.HalfOpen, em.State())
	succeed(t, em)
	clock.Add(5 * time.Second)
	p.waitFor("eastmoney recovered on its band",
		`[...document.querySelectorAll('[data-name=eastmoney] [data-f=band] rect')].map(r => r.dataset.state).join() === "CLOSED,OPEN,HALF_OPEN,CLOSED" &&
		 document.querySelector('[data-name=eastmoney] [data-f=band-text]').textContent === "opened 1×, open 31 s in all"`)
	assert.Equal(t, "opened 1×, open 31 s in all", p.cardText("eastmoney", "band-text"))

	// Phone width: the pictures fit, and still follow the breakers.
	require.NoError(t, chromedp.Do(bctx, chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2), chromedp.EmulateMobile)))
	p.waitFor("the layout to settle at phone width", `window.innerWidth === 390`)
	p.noSideScroll()
	assert.True(t, eval[bool](p, `[...document.querySelectorAll('[data-f=band], [data-f=chart]')].every(s => {
		const r = s.getBoundingClientRect(), c = s.closest('.card').getBoundingClientRect();
		return r.width > 200 && r.left >= c.left && r.right <= c.right; })`), "every picture inside its card, and wide")
	// A tap on a span shows its text, and it stays once the finger lifts;
	// a tap elsewhere brings the summary back.
	_, err := chromedp.Call(bctx, emulation.SetTouchEmulationEnabled, emulation.SetTouchEmulationEnabledParams{Enabled: true})
	require.NoError(t, err)
	p.tapAt(`[data-name=tdx] [data-f=band] rect[data-state=OPEN]`,
		`document.querySelector('[data-name=tdx] [data-f=band-text]').textContent.startsWith("Open (down), 11:05:00–11:06:00 UTC")`)
	assert.Equal(t, "Open (down), 11:05:00–11:06:00 UTC (1 min): dial tcp: connection refused", p.cardText("tdx", "band-text"))
	p.tapAt(`h1`, `document.querySelector('[data-name=tdx] [data-f=band-text]').textContent === "opened 1×, open 1 min in all"`)

	fail(t, tdx, 1, "dial tcp: i/o timeout")
	clock.Add(time.Second)
	p.waitFor("tdx open again on its band",
		`[...document.querySelectorAll('[data-name=tdx] [data-f=band] rect')].map(r => r.dataset.state).join() === "CLOSED,OPEN,HALF_OPEN,CLOSED,OPEN" &&
		 document.querySelector('[data-name=tdx] [data-f=band-text]').textContent === "opened 2×, open 1 min 1 s in all"`)
	assert.Equal(t, "opened 2×, open 1 min 1 s in all", p.cardText("tdx", "band-text"))
	p.screenshot("dashboard-pictures-phone.png")

	assert.True(t, eval[bool](p, `window.__sameDocument === true`), "the page was not reloaded")
	assert.Empty(t, console.problems(), "the page wrote errors or warnings to the console")
	cancel()
	<-console.done
}

func (p page) chartPoints(name string) int {
	p.t.Helper()
	n, err := strconv.Atoi(p.chart(name, "data-points"))
	require.NoError(p.t, err)
	return n
}

// figureAttr returns an attribute of the picture key of the breaker called
// name.
func (p page) figureAttr(name, key, attr string) string {
	p.t.Helper()
	return eval[string](p, fmt.Sprintf(`document.querySelector('[data-name=%s] [data-f=%s]').getAttribute(%s)`,
		strconv.Quote(name), strconv.Quote(key), strconv.Quote(attr)))
}

// fixtureJSON is a paged /health/datasources answer with the figures of
// SPEC §8, §9 and §11 that the branches building them will fill in.
const fixtureJSON = `{
  "status": "degraded",
  "fleet": {"redis": %q, "members": %d},
  "breakers": [
    {"name": "eastmoney", "state": "CLOSED", "status": "ok", "failure_threshold": 5, "reset_seconds": 30,
     "failures": %d, "ignored": 0, "rate_limited": 1, "state_changes": 0, "consecutive_failures": 1,
     "consecutive_successes": 0, "probes_in_flight": 0, "counted": false,
     "window": "1m0s", "window_calls": 50, "window_failures": 31, "window_slow": 40,
     "failure_rate": 0.62, "failure_rate_threshold": 0.5, "slow_rate": 0.8, "slow_rate_threshold": 0.5,
     "in_flight": 3, "concurrency": 10, "throttle_probability": 0.12, "throttled": %d, "bulkhead_full": 2},
    {"name": "sina", "state": "CLOSED", "status": "ok", "failure_threshold": 5, "reset_seconds": 30,
     "failures": 0, "ignored": 0, "rate_limited": 0, "state_changes": 0, "consecutive_failures": 0,
     "consecutive_successes": 0, "probes_in_flight": 0, "counted": false,
     "throttle": 2, "throttle_probability": 0},
    {"name": "tdx", "state": "CLOSED", "status": "ok", "failure_threshold": 5, "reset_seconds": 30,
     "failures": 0, "ignored": 0, "rate_limited": 0, "state_changes": 0, "consecutive_failures": 0,
     "consecutive_successes": 0, "probes_in_flight": 0, "counted": false}
  ],
  "counts": {"ok": 3, "degraded": 0, "down": 0},
  "total": 3, "q": "", "matched": 3, "page": 1, "pages": 1, "per_page": 50
}`

// TestDashboardLoadFieldsInBrowser feeds the page a Health answer with
// windows, in-flight counts, throttling and a fleet, as the branches that
// build them will fill it in, and checks that the page shows each rate
// beside its threshold, the calls in flight against the limit and the
// fleet line, in place of the one the server rendered.
func TestDashboardLoadFieldsInBrowser(t *testing.T) {
	bctx, cancel := browserTest(t)

	f := newFixture(t, httphealth.WithRefresh(100*time.Millisecond))
	f.reg.Breaker(runtime.Config{Name: "eastmoney"})
	f.reg.Breaker(runtime.Config{Name: "sina", Throttle: 2})
	f.reg.Breaker(runtime.Config{Name: "tdx"})
	// The server renders the fleet line as the registry's fleet has it
	// (TestDashboardFleetLine); the script then shows the answer's.
	var served stillFleet
	served.set(runtime.FleetHealth{Redis: "down", Members: 1, DuplicateOrigin: "vm:1"})
	stop, err := f.reg.Share(&served)
	require.NoError(t, err)
	t.Cleanup(stop)
	var answer atomic.Pointer[string]
	set := func(redis string, members, failures, throttled int) {
		s := fmt.Sprintf(fixtureJSON, redis, members, failures, throttled)
		answer.Store(&s)
	}
	set("ok", 3, 31, 7)
	mux := http.NewServeMux()
	mux.Handle("/", f.h)
	mux.HandleFunc(httphealth.PathDatasources, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.Header().Set(httphealth.ServerTimeHeader, f.clock.Now().UTC().Format(time.RFC3339Nano))
		_, _ = w.Write([]byte(*answer.Load()))
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	console := watchConsole(bctx)
	require.NoError(t, chromedp.Do(bctx, chromedp.EmulateViewport(1280, 900), chromedp.Navigate(srv.URL+"/health/")))
	p := page{t: t, ctx: bctx, dir: artifactDir(t)}
	p.waitFor("the fixture's figures", `document.querySelector('[data-name=eastmoney] [data-f=in_flight]').textContent === "3 of 10"`)
	row := func(name, key string) (string, bool) {
		return p.cardText(name, key), eval[bool](p, fmt.Sprintf(`!document.querySelector('[data-name=%s] [data-row=%s]').hidden`,
			strconv.Quote(name), strconv.Quote(key)))
	}
	for key, want := range map[string]string{
		"window":        "1m0s",
		"window_calls":  "50 (31 failed, 40 slow)",
		"failure_rate":  "62% (trips at 50%)",
		"slow_rate":     "80% (trips at 50%)",
		"in_flight":     "3 of 10",
		"throttle":      "12% of calls",
		"throttled":     "7",
		"bulkhead_full": "2",
	} {
		got, shown := row("eastmoney", key)
		assert.Equal(t, want, got, key)
		assert.True(t, shown, key)
		_, shown = row("tdx", key)
		assert.False(t, shown, "tdx has no %s", key)
		if key != "throttle" {
			_, shown = row("sina", key)
			assert.False(t, shown, "sina has no %s", key)
		}
	}
	// A throttle that has refused nothing yet is shown all the same.
	got, shown := row("sina", "throttle")
	assert.Equal(t, "0% of calls", got)
	assert.True(t, shown, "sina's throttle, at zero")
	fleet := `document.querySelector('[data-f=fleet]')`
	assert.Equal(t, "✓ Fleet: Redis ok, 3 members", eval[string](p, fleet+`.textContent`))
	assert.Equal(t, "ok", eval[string](p, fleet+`.dataset.level`))
	assert.True(t, eval[bool](p, `!`+fleet+`.hidden`))
	p.waitFor("a point on the chart", `Number(document.querySelector('[data-name=eastmoney] [data-f=chart]').dataset.points) >= 1`)
	assert.Contains(t, p.cardText("eastmoney", "chart-text"), "calls not counted: the calls line is failures + refusals")
	p.screenshot("dashboard-load-fields.png")

	// Redis goes down; more calls fail and are throttled.
	set("down", 1, 34, 12)
	p.waitFor("the fleet line down", fleet+`.textContent.includes("down")`)
	assert.Equal(t, "✕ Fleet: Redis down, 1 member; each process on its own breakers", eval[string](p, fleet+`.textContent`))
	assert.Equal(t, "down", eval[string](p, fleet+`.dataset.level`))
	p.waitFor("the throttled calls on the chart",
		`document.querySelector('[data-name=eastmoney] [data-f=chart]').getAttribute("aria-label").includes(" 3 failures, 5 refusals.")`)
	assert.Equal(t, "12", p.cardText("eastmoney", "throttled"))

	require.NoError(t, chromedp.Do(bctx, chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2), chromedp.EmulateMobile)))
	p.waitFor("the layout to settle at phone width", `window.innerWidth === 390`)
	p.noSideScroll()
	p.screenshot("dashboard-load-fields-phone.png")

	// Another member of this process's origin: a warning on the line.
	s := strings.Replace(*answer.Load(), `"fleet": {"redis": "down", "members": 1},`,
		`"fleet": {"redis": "ok", "members": 2, "duplicate_origin": "vm:5726"},`, 1)
	answer.Store(&s)
	p.waitFor("the twin's warning", fleet+`.textContent.includes("vm:5726")`)
	assert.Equal(t, "⚠ Fleet: Redis ok, 2 members; another member is also vm:5726: neither follows the other's trips (give each its own WithOrigin)",
		eval[string](p, fleet+`.textContent`))
	assert.Equal(t, "degraded", eval[string](p, fleet+`.dataset.level`))

	// Without a fleet the line goes away.
	s = strings.Replace(*answer.Load(), `"fleet": {"redis": "ok", "members": 2, "duplicate_origin": "vm:5726"},`, "", 1)
	answer.Store(&s)
	p.waitFor("no fleet line", fleet+`.hidden`)

	assert.Empty(t, console.problems(), "the page wrote errors or warnings to the console")
	cancel()
	<-console.done
}

// TestDashboardPicturesManyBreakersInBrowser: with 1000 breakers the page
// draws the pictures of its own 50 and asks for their events only.
func TestDashboardPicturesManyBreakersInBrowser(t *testing.T) {
	bctx, cancel := browserTest(t)

	f := newFixture(t, httphealth.WithRefresh(100*time.Millisecond))
	for i := range 1000 {
		b := f.reg.Breaker(runtime.Config{Name: fmt.Sprintf("source%04d", i), FailureThreshold: 1, ResetTimeout: time.Hour})
		if i%10 == 3 {
			fail(t, b, 1, "502 Bad Gateway")
		}
	}
	f.clock.Add(time.Minute)
	var most atomic.Int64 // the most sources one band request named
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n := int64(len(r.URL.Query()["source"])); n > most.Load() {
			most.Store(n)
		}
		f.h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)

	console := watchConsole(bctx)
	require.NoError(t, chromedp.Do(bctx, chromedp.EmulateViewport(1280, 900), chromedp.Navigate(srv.URL+"/health/?page=2")))
	p := page{t: t, ctx: bctx, dir: artifactDir(t)}
	p.waitFor("the pictures of the page's 50 breakers",
		`document.querySelectorAll('[data-f=band][data-spans]').length === 50 &&
		 document.querySelectorAll('[data-f=chart][data-points]').length === 50`)
	assert.Equal(t, int64(50), most.Load())
	// Page 2 holds the last 50 of the 100 down: each band opened a minute ago.
	assert.Equal(t, []string{"CLOSED", "OPEN"}, p.bandStates("source0993"))
	assert.Equal(t, 50, eval[int](p, `document.querySelectorAll('[data-f=band] rect[data-state=OPEN]').length`))
	assert.Empty(t, console.problems(), "the page wrote errors or warnings to the console")
	cancel()
	<-console.done
}

// TestDashboardBandPagesInBrowser: the bands read the events page after
// page, up to five answers; what lies beyond shows as "not shown".
func TestDashboardBandPagesInBrowser(t *testing.T) {
	bctx, cancel := browserTest(t)

	// Two events an answer: the bands need pages.
	f := newFixture(t, httphealth.WithRefresh(100*time.Millisecond), httphealth.WithMaxLimit(2))
	em := f.reg.Breaker(runtime.Config{Name: "eastmoney", FailureThreshold: 1, ResetTimeout: time.Minute})
	cycle := func() { // three events: down, probing, recovered, a minute apart
		fail(t, em, 1, "502 Bad Gateway")
		f.clock.Add(time.Minute)
		require.Equal(t, runtime.HalfOpen, em.State())
		succeed(t, em)
		f.clock.Add(time.Minute)
	}
	for range 3 {
		cycle()
	}
	var pages atomic.Int64 // the most pages one band refresh asked for
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n, _ := strconv.Atoi(r.URL.Query().Get("page")); r.URL.Query().Has("source") && int64(n) > pages.Load() {
			pages.Store(int64(n))
		}
		f.h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)

	console := watchConsole(bctx)
	require.NoError(t, chromedp.Do(bctx, chromedp.EmulateViewport(1280, 900), chromedp.Navigate(srv.URL+"/health/")))
	p := page{t: t, ctx: bctx, dir: artifactDir(t)}
	band := `[...document.querySelectorAll('[data-name=eastmoney] [data-f=band] rect')].map(r => r.dataset.state).join()`
	// The caption is waited for with the band: a refresh may draw the
	// band's pages before it writes the caption (under load a reviewer
	// read "1 min" right after the band was whole).
	caption := `document.querySelector('[data-name=eastmoney] [data-f=band-text]').textContent`
	p.waitFor("all nine events on the band, from five pages, and their caption",
		band+` === "CLOSED,OPEN,HALF_OPEN,CLOSED,OPEN,HALF_OPEN,CLOSED,OPEN,HALF_OPEN,CLOSED" && `+caption+` === "opened 3×, open 3 min in all"`)
	assert.Equal(t, int64(5), pages.Load(), "9 events, 2 an answer")

	// Twelve events: the five pages hold the ten newest.
	cycle()
	p.waitFor("the oldest beyond the pages, not shown, and the caption",
		band+` === "UNKNOWN,HALF_OPEN,CLOSED,OPEN,HALF_OPEN,CLOSED,OPEN,HALF_OPEN,CLOSED,OPEN,HALF_OPEN,CLOSED" && `+caption+` === "opened 3×, open 3 min in all"`)
	titles := p.bandTitles("eastmoney")
	assert.Equal(t, "Not shown, until 09:31:00 UTC (53 min): the log holds more events than the 10 the bands read", titles[0])
	assert.Empty(t, console.problems(), "the page wrote errors or warnings to the console")
	cancel()
	<-console.done
}

// TestBandCaptionAfterRedrawInBrowser: a refresh redraws the band under a
// still pointer (its spans are new elements); the pointer then leaving the
// band still brings the summary back, as it does without a redraw.
func TestBandCaptionAfterRedrawInBrowser(t *testing.T) {
	bctx, cancel := browserTest(t)

	f := newFixture(t, httphealth.WithRefresh(100*time.Millisecond))
	tdx := f.reg.Breaker(runtime.Config{Name: "tdx", FailureThreshold: 1, ResetTimeout: time.Minute})
	fail(t, tdx, 1, "dial tcp: connection refused")
	f.clock.Add(time.Minute)
	require.Equal(t, runtime.HalfOpen, tdx.State())
	succeed(t, tdx)
	f.clock.Add(time.Minute)
	srv := httptest.NewServer(f.h)
	t.Cleanup(srv.Close)

	console := watchConsole(bctx)
	require.NoError(t, chromedp.Do(bctx, chromedp.EmulateViewport(1280, 900), chromedp.Navigate(srv.URL+"/health/")))
	p := page{t: t, ctx: bctx, dir: artifactDir(t)}
	summary := `document.querySelector('[data-name=tdx] [data-f=band-text]').textContent === "opened 1×, open 1 min in all"`
	p.waitFor("tdx's band", summary)
	for round := range 3 {
		p.pointAt(`[data-name=tdx] [data-f=band] rect[data-state=OPEN]`,
			`document.querySelector('[data-name=tdx] [data-f=band-text]').textContent.startsWith("Open (down)")`)
		// Wait for a refresh to draw the band again under the pointer, which
		// does not move.
		eval[bool](p, `(() => { window.__redrawn = false;
			const band = document.querySelector('[data-name=tdx] [data-f=band]');
			const o = new MutationObserver(() => { window.__redrawn = true; o.disconnect(); });
			o.observe(band, { attributes: true, childList: true, subtree: true, characterData: true });
			return true; })()`)
		p.waitFor("a refresh to redraw the band", `window.__redrawn`)
		assert.True(t, eval[bool](p, `document.querySelector('[data-name=tdx] [data-f=band-text]').textContent.startsWith("Open (down)")`),
			"round %d: the redraw keeps the pointed span in the caption", round)
		require.NoError(t, chromedp.Do(bctx, chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, 1, 1)))
		p.waitFor(fmt.Sprintf("round %d: the summary back once the pointer left", round), summary)
	}
	assert.Empty(t, console.problems(), "the page wrote errors or warnings to the console")
	cancel()
	<-console.done
}

// TestDashboardOperatorBandsInBrowser: a band's caption counts openings,
// moves into OPEN, and the time an operator isolated the source; a card
// shows "Opened at" only while the breaker is OPEN or HALF_OPEN, as the
// server renders it. An Update of an OPEN breaker (its "reconfigured"
// Event, OPEN to OPEN) counted as a second opening; an isolated source
// read "no outage"; an ISOLATED card showed "Opened at —" once the script
// ran.
func TestDashboardOperatorBandsInBrowser(t *testing.T) {
	bctx, cancel := browserTest(t)

	clock := newFakeClock(start)
	reg := runtime.NewRegistry(runtime.WithClock(clock), runtime.WithLogger(slog.New(slog.DiscardHandler)))
	h := httphealth.New(reg, httphealth.WithClock(clock), httphealth.WithRefresh(100*time.Millisecond))
	kept := reg.Breaker(runtime.Config{Name: "kept", FailureThreshold: 1, ResetTimeout: 10 * time.Minute})
	iso := reg.Breaker(runtime.Config{Name: "iso", FailureThreshold: 1})
	clock.Add(10 * time.Minute)
	fail(t, kept, 1, "502 Bad Gateway")
	clock.Add(time.Minute)
	require.NoError(t, reg.Update(runtime.Config{Name: "kept", FailureThreshold: 3}))
	require.Equal(t, runtime.Open, kept.State())
	iso.Isolate("maintenance")
	clock.Add(2 * time.Minute)

	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	console := watchConsole(bctx)
	require.NoError(t, chromedp.Do(bctx, chromedp.EmulateViewport(1280, 900), chromedp.Navigate(srv.URL+"/health/")))
	p := page{t: t, ctx: bctx, dir: artifactDir(t)}
	p.waitFor("both bands", `document.querySelectorAll('[data-f=band][data-spans]').length === 2`)
	assert.Equal(t, "opened 1×, open 3 min in all", p.cardText("kept", "band-text"))
	assert.Equal(t, "isolated 2 min", p.cardText("iso", "band-text"))
	assert.True(t, eval[bool](p, `document.querySelector('[data-name=iso] [data-row=opened]').hidden`), "no Opened at on an ISOLATED card")
	assert.False(t, eval[bool](p, `document.querySelector('[data-name=kept] [data-row=opened]').hidden`), "Opened at on an OPEN card")

	assert.Empty(t, console.problems(), "the page wrote errors or warnings to the console")
	cancel()
	<-console.done
}
