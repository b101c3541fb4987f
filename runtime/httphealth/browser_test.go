package httphealth_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/breakergen/breakergen/runtime"
	"github.com/breakergen/breakergen/runtime/httphealth"
)

// chromiumPath finds a Chromium to drive: $BREAKERGEN_CHROMIUM if set,
// else /usr/bin/chromium (Debian's package "chromium"), else one on PATH.
// It returns "" when there is none.
func chromiumPath() string {
	if p := os.Getenv("BREAKERGEN_CHROMIUM"); p != "" {
		if _, err := os.Stat(p); err != nil {
			return ""
		}
		return p
	}
	if _, err := os.Stat("/usr/bin/chromium"); err == nil {
		return "/usr/bin/chromium"
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// artifactDir is where the test leaves its screenshots: $BREAKERGEN_ARTIFACTS
// if set (created if need be), else a temporary directory that the test
// removes.
func artifactDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("BREAKERGEN_ARTIFACTS")
	if dir == "" {
		return t.TempDir()
	}
	dir, err := filepath.Abs(dir)
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(dir, 0o755))
	return dir
}

// browserTest starts the browser of one browser test, for at most 90
// seconds: its ctx, and the cancel that ends it (also called when the test
// ends). It skips with -short.
func browserTest(t *testing.T) (context.Context, context.CancelFunc) {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a browser; skipped with -short")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	t.Cleanup(cancel)
	return browser(t, ctx), cancel
}

// browser starts a headless Chromium for the test, bounded by ctx. It skips
// the test when no browser is installed.
func browser(t *testing.T, ctx context.Context) context.Context {
	t.Helper()
	path := chromiumPath()
	if path == "" {
		t.Skip("missing component: chromium (apt-get install chromium fonts-noto-cjk); " +
			"looked at $BREAKERGEN_CHROMIUM, /usr/bin/chromium and PATH")
	}
	alloc, cancelAlloc := chromedp.NewExecAllocator(ctx,
		chromedp.ExecPath(path),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
	)
	bctx, cancel := chromedp.NewContext(alloc)
	t.Cleanup(func() {
		cancel()
		cancelAlloc()
	})
	return bctx
}

// page is the dashboard open in the browser.
type page struct {
	t   *testing.T
	ctx context.Context
	dir string // where screenshots go
}

// eval evaluates a JavaScript expression and returns its value.
func eval[T any](p page, expr string) T {
	p.t.Helper()
	v, err := chromedp.Run(p.ctx, chromedp.Evaluate[T](expr))
	require.NoError(p.t, err, expr)
	return v
}

// waitFor polls the page until the expression is true. The test's context
// bounds the wait; on failure it shows what the page had.
func (p page) waitFor(what, expr string) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, 15*time.Second)
	defer cancel()
	_, err := chromedp.Run(ctx, chromedp.Poll[bool](expr, chromedp.WithPollingInterval(20*time.Millisecond)))
	if err != nil {
		main, _ := chromedp.Run(p.ctx, chromedp.Evaluate[string](`document.querySelector("main").innerText`))
		if png, shotErr := chromedp.Run(p.ctx, chromedp.FullScreenshot(100)); shotErr == nil && p.dir != "" {
			file := filepath.Join(p.dir, "dashboard-failure.png")
			if os.WriteFile(file, png, 0o644) == nil {
				p.t.Logf("screenshot of the failure: %s", file)
			}
		}
		require.NoError(p.t, err, "waiting for %s (%s); the page shows:\n%s", what, expr, main)
	}
}

// cardText returns the text of the field key in the card of the breaker
// called name.
func (p page) cardText(name, key string) string {
	p.t.Helper()
	return eval[string](p, fmt.Sprintf(`document.querySelector('[data-name=%s] [data-f=%s]').textContent`,
		strconv.Quote(name), strconv.Quote(key)))
}

// events returns the timeline's entries as the page shows them, newest
// first.
func (p page) events() []string {
	p.t.Helper()
	return eval[[]string](p, `[...document.querySelectorAll('[data-f=events] > li')].map(li => li.innerText.replace(/\s+/g, " ").trim())`)
}

// screenshot saves the whole page as a PNG file called name.
func (p page) screenshot(name string) {
	p.t.Helper()
	png, err := chromedp.Run(p.ctx, chromedp.FullScreenshot(100))
	require.NoError(p.t, err)
	file := filepath.Join(p.dir, name)
	require.NoError(p.t, os.WriteFile(file, png, 0o644))
	p.t.Logf("screenshot: %s", file)
}

// TestDashboardInBrowser opens the dashboard in headless Chromium, moves a
// breaker through OPEN, HALF_OPEN and back to CLOSED through the registry,
// and checks that the page shows each state and each new event without
// being reloaded.
func TestDashboardInBrowser(t *testing.T) {
	bctx, cancel := browserTest(t)

	f := newFixture(t,
		httphealth.WithDisplayName("eastmoney", "东方财富 East Money"),
		httphealth.WithDisplayName("tencent", "腾讯行情 Tencent"),
		httphealth.WithDisplayName("tdx", "通达信 TDX"),
		httphealth.WithRefresh(100*time.Millisecond),
		httphealth.WithTitle("数据可信度中心 · Data trust"),
	)
	em := f.reg.Breaker(runtime.Config{Name: "eastmoney", FailureThreshold: 2, ResetTimeout: 30 * time.Second})
	fb := f.reg.Breaker(runtime.Config{Name: "fallback:tencent_kline", FailureThreshold: 1, ResetTimeout: 2 * time.Minute})
	f.reg.Breaker(runtime.Config{Name: "tdx"})

	mux := http.NewServeMux()
	mux.Handle("/ops/", http.StripPrefix("/ops", f.h))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	console := watchConsole(bctx) // from the start

	require.NoError(t, chromedp.Do(bctx,
		chromedp.EmulateViewport(1280, 900),
		chromedp.Navigate(srv.URL+"/ops/health"), // redirected to /ops/health/
	))
	p := page{t: t, ctx: bctx, dir: artifactDir(t)}
	p.waitFor("the script to start", `!document.querySelector('[data-f=live]').hidden`)
	assert.Equal(t, srv.URL+"/ops/health/", eval[string](p, `location.href`))
	// A reload would drop this.
	eval[bool](p, `window.__sameDocument = true`)

	// First paint, from the server: everything closed, nothing happened.
	assert.Equal(t, "Closed (ok)", p.cardText("eastmoney", "state-word"))
	assert.Equal(t, "✓", p.cardText("eastmoney", "state-sym"))
	assert.Equal(t, "东方财富 East Money", p.cardText("eastmoney", "display"))
	assert.Equal(t, "腾讯行情 Tencent", p.cardText("fallback:tencent_kline", "display"))
	assert.Empty(t, p.events())
	assert.True(t, eval[bool](p, `!document.querySelector('[data-f=events-empty]').hidden`))

	// Trip eastmoney: OPEN, with a countdown and one event.
	fail(t, em, 2, "marketdata: 403 Forbidden")
	p.waitFor("eastmoney OPEN with its event",
		`document.querySelector('[data-name=eastmoney]').dataset.state === "OPEN" &&
		 document.querySelectorAll('[data-f=events] > li').length === 1`)
	assert.Equal(t, "Open (down)", p.cardText("eastmoney", "state-word"))
	assert.Equal(t, "✕", p.cardText("eastmoney", "state-sym"))
	assert.Regexp(t, `^in \d+ s$`, p.cardText("eastmoney", "next"))
	assert.Equal(t, "2", p.cardText("eastmoney", "failures"))
	evs := p.events()
	require.Len(t, evs, 1)
	assert.Contains(t, evs[0], "东方财富 East Money")
	assert.Contains(t, evs[0], "✓ Closed (ok) → to ✕ Open (down)")
	assert.Contains(t, evs[0], "marketdata: 403 Forbidden")
	assert.True(t, eval[bool](p, `document.querySelector('[data-f=events-empty]').hidden`))
	assert.Equal(t, "Down: a source is cut off", eval[string](p, `document.querySelector('[data-f=overall-word]').textContent`))
	assert.Contains(t, eval[string](p, `document.title`), "✕")
	p.waitFor("the change announced", `document.querySelector('[data-f=announce]').textContent.includes("Open (down)")`)

	// The reset passes: eastmoney probes. Then a fallback trips.
	f.clock.Add(30 * time.Second)
	require.Equal(t, runtime.HalfOpen, em.State())
	fail(t, fb, 1, "fallback: 502 Bad Gateway")
	p.waitFor("eastmoney HALF_OPEN, the fallback OPEN, three events",
		`document.querySelector('[data-name=eastmoney]').dataset.state === "HALF_OPEN" &&
		 document.querySelector('[data-name="fallback:tencent_kline"]').dataset.state === "OPEN" &&
		 document.querySelectorAll('[data-f=events] > li').length === 3`)
	assert.Equal(t, "Half-open (degraded)", p.cardText("eastmoney", "state-word"))
	assert.Equal(t, "◐", p.cardText("eastmoney", "state-sym"))
	assert.Equal(t, "probing now", p.cardText("eastmoney", "next"))
	assert.Regexp(t, `^in 1 min \d+ s$|^in 2 min 0 s$`, p.cardText("fallback:tencent_kline", "next"))
	evs = p.events()
	require.Len(t, evs, 3)
	assert.Contains(t, evs[0], "腾讯行情 Tencent fallback:tencent_kline")
	assert.Contains(t, evs[0], "fallback: 502 Bad Gateway")
	assert.Contains(t, evs[1], "东方财富 East Money")
	assert.Contains(t, evs[1], "✕ Open (down) → to ◐ Half-open (degraded)")
	assert.Contains(t, evs[1], "reset 30s elapsed, probing")
	p.screenshot("dashboard-desktop.png")

	// A probe succeeds: eastmoney recovers.
	succeed(t, em)
	p.waitFor("eastmoney CLOSED with the recovery on top",
		`document.querySelector('[data-name=eastmoney]').dataset.state === "CLOSED" &&
		 document.querySelectorAll('[data-f=events] > li').length === 4`)
	assert.Equal(t, "Closed (ok)", p.cardText("eastmoney", "state-word"))
	assert.Equal(t, "none (closed)", p.cardText("eastmoney", "next"))
	evs = p.events()
	require.Len(t, evs, 4)
	assert.Contains(t, evs[0], "东方财富 East Money")
	assert.Contains(t, evs[0], "◐ Half-open (degraded) → to ✓ Closed (ok)")
	assert.Contains(t, evs[0], "half-open probe succeeded (1/1)")
	assert.Contains(t, evs[3], "marketdata: 403 Forbidden", "oldest last")

	assert.True(t, eval[bool](p, `window.__sameDocument === true`), "the page was not reloaded")

	// Phone width: one column, nothing wider than the screen.
	require.NoError(t, chromedp.Do(bctx, chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2), chromedp.EmulateMobile)))
	p.waitFor("the layout to settle at phone width", `window.innerWidth === 390`)
	assert.True(t, eval[bool](p, `document.documentElement.scrollWidth <= window.innerWidth`),
		"no horizontal scrolling at 390 px: scrollWidth %v", eval[float64](p, `document.documentElement.scrollWidth`))
	assert.True(t, eval[bool](p, `(() => {
		const cards = [...document.querySelectorAll('[data-f=cards] > li')];
		return cards.every(c => c.getBoundingClientRect().left === cards[0].getBoundingClientRect().left);
	})()`), "cards stack in one column")
	p.screenshot("dashboard-phone.png")

	_, err := chromedp.Call(bctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
		Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: "dark"}},
	})
	require.NoError(t, err)
	p.waitFor("dark colours", `matchMedia("(prefers-color-scheme: dark)").matches`)
	p.screenshot("dashboard-phone-dark.png")

	assert.Empty(t, console.problems(), "the page wrote errors or warnings to the console")

	// The server goes away: the page says so and keeps what it showed.
	srv.Close()
	p.waitFor("the failure reported", `!document.querySelector('[data-f=problem]').hidden`)
	assert.Contains(t, eval[string](p, `document.querySelector('[data-f=problem]').textContent`), "Refresh failed")
	assert.Equal(t, "Closed (ok)", p.cardText("eastmoney", "state-word"))
	assert.Len(t, p.events(), 4)

	cancel()
	<-console.done
}

// TestDashboardPagedInBrowser opens the dashboard of 120 breakers: one
// page of 50, those not ok first, then the next page, then a search, with
// a breaker tripping on the page shown.
func TestDashboardPagedInBrowser(t *testing.T) {
	bctx, cancel := browserTest(t)

	f := pagedFixture(t, httphealth.WithRefresh(100*time.Millisecond))
	srv := httptest.NewServer(f.h)
	t.Cleanup(srv.Close)

	console := watchConsole(bctx)

	require.NoError(t, chromedp.Do(bctx, chromedp.EmulateViewport(1280, 900), chromedp.Navigate(srv.URL+"/health/")))
	p := page{t: t, ctx: bctx, dir: artifactDir(t)}
	p.waitFor("the script to start", `!document.querySelector('[data-f=live]').hidden`)
	eval[bool](p, `window.__sameDocument = true`)
	cards := func() []string {
		return eval[[]string](p, `[...document.querySelectorAll('[data-f=cards] > li')].map(li => li.dataset.name)`)
	}
	text := func(key string) string {
		return eval[string](p, fmt.Sprintf(`document.querySelector('[data-f=%s]').textContent`, key))
	}

	got := cards()
	require.Len(t, got, 50)
	assert.Equal(t, "source000", got[0], "down first")
	assert.Equal(t, "120 sources: 12 down, 3 degraded, 105 ok. Those not ok come first.", text("summary"))
	assert.Equal(t, "Page 1 of 3: 1–50 of 120.", text("page-text"))
	assert.True(t, eval[bool](p, `document.querySelector('[data-f=prev]').disabled`))
	p.waitFor("next enabled", `!document.querySelector('[data-f=next]').disabled`)

	// The next page, without a reload; the address follows.
	require.NoError(t, chromedp.Do(bctx, chromedp.Click(chromedp.CSS(`[data-f=next]`))))
	p.waitFor("page 2", `document.querySelector('[data-f=page-text]').textContent.startsWith("Page 2 of 3")`)
	got = cards()
	require.Len(t, got, 50)
	assert.NotContains(t, got, "source000")
	p.waitFor("one band per card of page 2", `document.querySelectorAll('[data-f=band][data-spans]').length === 50`)
	assert.Equal(t, srv.URL+"/health/?page=2", eval[string](p, `location.href`))
	assert.False(t, eval[bool](p, `document.querySelector('[data-f=prev]').disabled`))

	// A search: back to page 1 of the matches.
	require.NoError(t, chromedp.Do(bctx, chromedp.SendKeys(chromedp.CSS(`[data-f=q]`), "SOURCE11")))
	p.waitFor("the matches", `document.querySelectorAll('[data-f=cards] > li').length === 10`)
	p.waitFor("the pictures of the matches only",
		`document.querySelectorAll('[data-f=cards] [data-f=band][data-spans]').length === 10`)
	assert.Equal(t, "Page 1 of 1: 1–10 of 10 matching “SOURCE11”.", text("page-text"))
	assert.Equal(t, []string{"source110", "source111", "source112"}, cards()[:3])
	assert.True(t, eval[bool](p, `document.querySelector('[data-f=next]').disabled`))

	// A breaker of the page trips: it moves up with the others not ok.
	fail(t, f.reg.Breaker(runtime.Config{Name: "source117"}), 1, "boom")
	p.waitFor("source117 second, OPEN",
		`document.querySelectorAll('[data-f=cards] > li')[1].dataset.name === "source117" &&
		 document.querySelectorAll('[data-f=cards] > li')[1].dataset.state === "OPEN"`)
	assert.Equal(t, "120 sources: 13 down, 3 degraded, 104 ok. Those not ok come first.", text("summary"))
	p.screenshot("dashboard-paged.png")

	// Nothing matches: the page says so.
	require.NoError(t, chromedp.Do(bctx, chromedp.SendKeys(chromedp.CSS(`[data-f=q]`), "x")))
	p.waitFor("no match", `!document.querySelector('[data-f=cards-empty]').hidden`)
	assert.Equal(t, "No source matches “SOURCE11x”.", text("cards-empty"))
	assert.Empty(t, cards())
	assert.True(t, eval[bool](p, `window.__sameDocument === true`), "the page was not reloaded")

	// A request the server refuses: the page says the server's reason,
	// where it said "HTTP 400" after the whole URL asked for.
	eval[bool](p, `(() => { const q = document.querySelector('[data-f=q]'); q.value = "x".repeat(300); q.dispatchEvent(new Event("input")); return true })()`)
	p.waitFor("the refusal shown", `!document.querySelector('[data-f=problem]').hidden`)
	problem := text("problem")
	assert.Contains(t, problem, "datasources: HTTP 400: q is 300 characters long; give at most 256")
	assert.NotContains(t, problem, "xxxx", "the URL asked for is not repeated")

	var problems []string // but Chromium's own line for the refused request
	for _, c := range console.problems() {
		if !strings.Contains(c, "status of 400") {
			problems = append(problems, c)
		}
	}
	assert.Empty(t, problems, "the page wrote errors or warnings to the console")
	cancel()
	<-console.done
}

// TestDashboardDroppedEventsInBrowser: the page's script says how many
// state changes the registry's event queue dropped, as the server does, and
// keeps the count up to date.
func TestDashboardDroppedEventsInBrowser(t *testing.T) {
	bctx, _ := browserTest(t) // ends with the test

	// A hook that stalls on its first call, until the test ends: every
	// later transition waits in the queue, and once it is full each drops
	// the oldest.
	stalled, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	reg := runtime.NewRegistry(runtime.WithoutEnv(), runtime.WithLogger(slog.New(slog.DiscardHandler)),
		runtime.OnStateChange(func(runtime.Event) { once.Do(func() { close(stalled); <-release }) }))
	stuckDone := make(chan struct{})
	t.Cleanup(func() { close(release); <-stuckDone })
	go func() {
		defer close(stuckDone)
		_ = reg.Breaker(runtime.Config{Name: "stuck", FailureThreshold: 1}).
			Do(context.Background(), func(context.Context) error { return errors.New("down") })
	}()
	<-stalled
	flip := func(n int) { // n transitions of breaker "flip", each queued
		b := reg.Breaker(runtime.Config{Name: "flip", FailureThreshold: 1})
		for range n {
			fail(t, b, 1, "down")
			b.Reset()
		}
	}
	flip(runtime.EventQueueCapacity + 2) // 2 dropped
	srv := httptest.NewServer(httphealth.New(reg, httphealth.WithRefresh(100*time.Millisecond)))
	t.Cleanup(srv.Close)

	require.NoError(t, chromedp.Do(bctx, chromedp.EmulateViewport(1280, 900), chromedp.Navigate(srv.URL+"/health/")))
	p := page{t: t, ctx: bctx, dir: artifactDir(t)}
	p.waitFor("the script to start", `!document.querySelector('[data-f=live]').hidden`)
	summary := `document.querySelector('[data-f=summary]').textContent`
	assert.Equal(t, "2 sources: 1 down, 0 degraded, 1 ok. Those not ok come first. 2 events not logged nor hooked (event queue full).",
		eval[string](p, summary))
	flip(5) // 5 more dropped: the script's refresh says 7
	p.waitFor("the script's count", summary+`.endsWith(" 7 events not logged nor hooked (event queue full).")`)
	assert.Equal(t, "2 sources: 1 down, 0 degraded, 1 ok. Those not ok come first. 7 events not logged nor hooked (event queue full).",
		eval[string](p, summary))
}

// consoleLog collects the errors, exceptions and warnings a page writes to
// its console, until the browser context ends (then done is closed).
type consoleLog struct {
	mu    sync.Mutex // guards found
	found []string
	done  chan struct{}
}

func watchConsole(bctx context.Context) *consoleLog {
	c := &consoleLog{done: make(chan struct{})}
	messages := chromedp.Console(bctx)
	go func() {
		defer close(c.done)
		for m, err := range messages {
			if err != nil {
				return
			}
			if m.Type == chromedp.ConsoleError || m.IsException() || m.Type == chromedp.ConsoleWarning {
				c.mu.Lock()
				c.found = append(c.found, m.String())
				c.mu.Unlock()
			}
		}
	}()
	return c
}

// problems returns what the page has written so far.
func (c *consoleLog) problems() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.found)
}
