package httphealth_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/breakergen/breakergen/runtime"
	"github.com/breakergen/breakergen/runtime/httphealth"
)

// dashboard gets the page and checks what every rendering must have.
func (f *fixture) dashboard(t *testing.T) string {
	t.Helper()
	rec := f.serve(http.MethodGet, "/health/")
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	assertCommonHeaders(t, rec)
	assert.Equal(t, "text/html; charset=utf-8", rec.Header().Get("Content-Type"))
	return rec.Body.String()
}

// card returns the markup of the card of the breaker called name.
func card(t *testing.T, page, name string) string {
	t.Helper()
	m := regexp.MustCompile(`(?s)<li class="card" data-name="` + regexp.QuoteMeta(name) + `".*?</li>`).FindString(page)
	require.NotEmpty(t, m, "no card for %s", name)
	return m
}

// timeline returns the events of the server-rendered timeline, in order.
func timeline(t *testing.T, page string) []string {
	t.Helper()
	ol := regexp.MustCompile(`(?s)<ol class="timeline" data-f="events">(.*?)</ol>`).FindStringSubmatch(page)
	require.Len(t, ol, 2)
	return regexp.MustCompile(`(?s)<li class="event".*?</li>`).FindAllString(ol[1], -1)
}

func TestDashboardCards(t *testing.T) {
	f := newFixture(t,
		httphealth.WithDisplayName("eastmoney", "东方财富 East Money"),
		httphealth.WithDisplayName("tencent", "腾讯行情"),
		httphealth.WithTitle("数据可信度中心"),
	)
	em := f.reg.Breaker(runtime.Config{Name: "eastmoney", FailureThreshold: 2, ResetTimeout: 30 * time.Second})
	tdx := f.reg.Breaker(runtime.Config{Name: "tdx", FailureThreshold: 1, ResetTimeout: 10 * time.Second})
	f.reg.Breaker(runtime.Config{Name: "fallback:tencent_kline"})
	fail(t, tdx, 1, "timeout")
	f.clock.Add(10 * time.Second)
	require.Equal(t, runtime.HalfOpen, tdx.State())
	fail(t, em, 2, "403 Forbidden")
	require.ErrorIs(t, em.Do(context.Background(), func(context.Context) error { return nil }), runtime.ErrOpen)
	f.clock.Add(4*time.Second + 500*time.Millisecond)

	page := f.dashboard(t)
	assert.Contains(t, page, "<title>✕ 数据可信度中心</title>", "the tab shows the overall level")
	assert.Contains(t, page, "<h1>数据可信度中心</h1>")
	assert.Regexp(t, `data-f="overall" data-level="down">.*✕.*Down`, page)

	c := card(t, page, "eastmoney")
	assert.Contains(t, c, `data-state="OPEN"`)
	assert.Contains(t, c, `<span data-f="display">东方财富 East Money</span> <code data-f="name">eastmoney</code>`)
	assert.Regexp(t, `data-f="state-sym">✕</span> <span data-f="state-word">Open \(down\)</span>`, c, "words and a symbol")
	assert.Contains(t, c, `<dd data-f="next">in 26 s</dd>`, "25.5 s left, rounded up")
	assert.Contains(t, c, `<dd data-f="failures">2</dd>`)
	assert.Contains(t, c, `<dd data-f="changes">1</dd>`)
	assert.Contains(t, c, `<dd data-f="opened">2026-10-06 09:30:10 UTC</dd>`)
	assert.Contains(t, c, `<div data-row="calls" hidden>`, "not counted without WithCallCounts")
	assert.Contains(t, c, `<div data-row="rejections"><dt>Rejections</dt><dd data-f="rejections">1</dd></div>`,
		"refusals are counted without WithCallCounts")

	c = card(t, page, "tdx")
	assert.Contains(t, c, `data-state="HALF_OPEN"`)
	assert.Regexp(t, `◐</span> <span data-f="state-word">Half-open \(degraded\)</span>`, c)
	assert.Contains(t, c, `<dd data-f="next">probing now</dd>`)
	assert.Contains(t, c, `<div data-row="probe_successes">`, "probe rows show in HALF_OPEN")
	assert.Contains(t, c, `<span data-f="display">tdx</span> <code data-f="name" hidden>tdx</code>`,
		"no display name: the bare name, once")

	c = card(t, page, "fallback:tencent_kline")
	assert.Contains(t, c, `<span data-f="display">腾讯行情</span> <code data-f="name">fallback:tencent_kline</code>`)
	assert.Regexp(t, `✓</span> <span data-f="state-word">Closed \(ok\)</span>`, c)
	assert.Contains(t, c, `<dd data-f="next">none (closed)</dd>`)

	// Not ok first (issue 18): down, degraded, then ok, each in name order.
	assert.Less(t, strings.Index(page, `data-name="eastmoney"`), strings.Index(page, `data-name="tdx"`))
	assert.Less(t, strings.Index(page, `data-name="tdx"`), strings.Index(page, `data-name="fallback:tencent_kline"`))
	assert.Contains(t, page, `data-f="cards-empty" hidden>`)
}

func TestDashboardTimeline(t *testing.T) {
	f := newFixture(t, httphealth.WithDisplayName("tdx", "通达信 TDX"))
	trace(t, f)
	fail(t, f.reg.Breaker(runtime.Config{Name: "fallback:tdx_kline", FailureThreshold: 1}), 1, "502 Bad Gateway")

	evs := timeline(t, f.dashboard(t))
	require.Len(t, evs, 4)
	assert.Contains(t, evs[0], `<span class="src" data-f="display">通达信 TDX</span> <code data-f="source">fallback:tdx_kline</code>`)
	assert.Contains(t, evs[0], "502 Bad Gateway")
	assert.Contains(t, evs[1], `<time data-f="time" datetime="2026-10-06T09:30:31Z">2026-10-06 09:30:31 UTC</time>`)
	assert.Regexp(t, `(?s)◐</span> <span data-f="from-word">Half-open \(degraded\)</span>.*→.*✓</span> <span data-f="to-word">Closed \(ok\)</span>`, evs[1])
	assert.Contains(t, evs[1], "half-open probe succeeded (1/1)")
	assert.Contains(t, evs[2], "reset 30s elapsed, probing")
	assert.Contains(t, evs[3], `<p class="reason" data-f="reason">connection refused</p>`)
	assert.Contains(t, evs[3], `data-level="down"`)
}

func TestDashboardEmpty(t *testing.T) {
	f := newFixture(t)
	page := f.dashboard(t)
	assert.Contains(t, page, `<title>✓ Data source health</title>`)
	assert.Contains(t, page, `data-f="cards-empty">No breakers registered yet.`)
	assert.Contains(t, page, `data-f="events-empty">No degradation events yet.`)
	assert.Empty(t, timeline(t, page))
}

func TestDashboardCounted(t *testing.T) {
	clock := newFakeClock(start)
	reg := runtime.NewRegistry(runtime.WithClock(clock), runtime.WithCallCounts())
	succeed(t, reg.Breaker(runtime.Config{Name: "sina"}))
	f := &fixture{clock: clock, reg: reg, h: httphealth.New(reg, httphealth.WithClock(clock))}
	c := card(t, f.dashboard(t), "sina")
	assert.Contains(t, c, `<div data-row="calls"><dt>Calls</dt><dd data-f="calls">1</dd></div>`)
	assert.Contains(t, c, `<div data-row="successes"><dt>Successes</dt><dd data-f="successes">1</dd></div>`)
}

// TestDashboardEscapes feeds markup through every channel that reaches the
// page: breaker names, reasons and display names.
func TestDashboardEscapes(t *testing.T) {
	const evil = `</script><script>alert(1)</script><img src=x onerror=alert(2)>`
	f := newFixture(t, httphealth.WithDisplayName("x", evil), httphealth.WithTitle(evil))
	fail(t, f.reg.Breaker(runtime.Config{Name: "x", FailureThreshold: 1}), 1, evil)
	fail(t, f.reg.Breaker(runtime.Config{Name: evil, FailureThreshold: 1}), 1, "y")

	page := f.dashboard(t)
	assert.Equal(t, 2, strings.Count(page, "<script"), "the config block and the script, nothing injected")
	assert.NotContains(t, page, "<img")
	assert.Contains(t, page, "&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;")
}

// TestDashboardSelfContained checks that the page loads nothing from
// anywhere and that its policy admits exactly its own inline blocks.
func TestDashboardSelfContained(t *testing.T) {
	f := newFixture(t)
	trace(t, f)
	rec := f.serve(http.MethodGet, "/health/")
	require.Equal(t, http.StatusOK, rec.Code)
	page := rec.Body.String()

	assert.NotContains(t, page, "http://")
	assert.NotContains(t, page, "https://")
	for _, m := range regexp.MustCompile(`(?:src|href|action)=["']?([^"' >]*)`).FindAllStringSubmatch(page, -1) {
		assert.True(t, strings.HasPrefix(m[1], "data:"), "external reference %q", m[0])
	}
	assert.NotContains(t, page, "@import")

	csp := rec.Header().Get("Content-Security-Policy")
	require.NotEmpty(t, csp)
	assert.Contains(t, csp, "default-src 'none'")
	assert.Contains(t, csp, "connect-src 'self'")
	hash := func(s string) string {
		sum := sha256.Sum256([]byte(s))
		return "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
	}
	script := regexp.MustCompile(`(?s)<script>(.*?)</script>`).FindStringSubmatch(page)
	require.Len(t, script, 2)
	assert.Contains(t, csp, "script-src "+hash(script[1])+";", "the inline script as rendered is allowed")
	style := regexp.MustCompile(`(?s)<style>(.*?)</style>`).FindStringSubmatch(page)
	require.Len(t, style, 2)
	assert.Contains(t, csp, "style-src "+hash(style[1])+";")
	assert.NotContains(t, page, ` style="`, "inline style attributes would be blocked")
}

func TestDashboardAccessibleMarkup(t *testing.T) {
	f := newFixture(t)
	trace(t, f)
	page := f.dashboard(t)
	assert.Contains(t, page, `<html lang="en">`)
	assert.Contains(t, page, `<meta name="viewport" content="width=device-width, initial-scale=1">`)
	assert.Contains(t, page, `<main>`)
	assert.Contains(t, page, `aria-live="polite"`)
	// Every symbol is hidden from screen readers, which read the words.
	for _, m := range regexp.MustCompile(`<span class="sym"[^>]*>`).FindAllString(page, -1) {
		assert.Contains(t, m, `aria-hidden="true"`)
	}
	assert.Regexp(t, `<section aria-labelledby="sources-h">\s*<h2 id="sources-h">`, page)
	assert.Regexp(t, `<section aria-labelledby="timeline-h">\s*<h2 id="timeline-h">`, page)
}

// TestDashboardRenderedOncePerRefresh: every client gets the same
// rendering for one refresh interval; the JSON endpoints are always
// current.
func TestDashboardRenderedOncePerRefresh(t *testing.T) {
	f := newFixture(t, httphealth.WithRefresh(2*time.Second))
	b := f.reg.Breaker(runtime.Config{Name: "tdx", FailureThreshold: 1, ResetTimeout: time.Hour})
	first := f.dashboard(t)
	assert.Contains(t, card(t, first, "tdx"), `data-state="CLOSED"`)

	fail(t, b, 1, "boom")
	f.clock.Add(time.Second)
	assert.Equal(t, first, f.dashboard(t), "within the interval: the same rendering")
	assert.Contains(t, f.serve(http.MethodGet, "/health/datasources").Body.String(), `"state": "OPEN"`)

	f.clock.Add(time.Second)
	assert.Contains(t, card(t, f.dashboard(t), "tdx"), `data-state="OPEN"`, "rendered again once it passed")
}
