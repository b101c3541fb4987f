package httphealth_test

import (
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/breakergen/breakergen/runtime"
	"github.com/breakergen/breakergen/runtime/httphealth"
)

// TestDashboardUnmatchedInBrowser opens the dashboard of a registry whose
// settings name things it does not hold: a notice at the top names them,
// as text even when a name is markup; as breakers of those names are made
// the script drops them from the notice, and hides it once none is left.
// The dashboard of a registry whose settings all match shows no notice.
func TestDashboardUnmatchedInBrowser(t *testing.T) {
	bctx, cancel := browserTest(t)

	f := unmatchedFixture(t, httphealth.WithRefresh(100*time.Millisecond))
	srv := httptest.NewServer(f.h)
	t.Cleanup(srv.Close)

	console := watchConsole(bctx)
	require.NoError(t, chromedp.Do(bctx, chromedp.EmulateViewport(1280, 900), chromedp.Navigate(srv.URL+"/health/")))
	p := page{t: t, ctx: bctx, dir: artifactDir(t)}
	p.waitFor("the script to start", `!document.querySelector('[data-f=live]').hidden`)
	eval[bool](p, `window.__sameDocument = true`)
	const notice = `document.querySelector('[data-f=unmatched]')`
	names := func() string { return eval[string](p, notice+`.querySelector('[data-f=unmatched-names]').textContent`) }
	shown := func() bool {
		return eval[bool](p, `(el => !el.hidden && getComputedStyle(el).display !== "none" && el.getBoundingClientRect().height > 0)(`+notice+`)`)
	}

	assert.True(t, shown(), "the notice shows")
	assert.Equal(t, strconv.Quote(hostile)+`, "tdx2", BREAKER_QOUTES_*`, names())
	assert.Contains(t, eval[string](p, notice+`.innerText`), "Settings that name no breaker, family or limiter")
	assert.Contains(t, eval[string](p, notice+`.innerText`), "check the names for a typo")
	assert.True(t, eval[bool](p, `document.querySelector('header.top').contains(`+notice+`)`), "at the top")
	p.screenshot("dashboard-unmatched.png")

	// tdx2 is made: the script drops it, writing the hostile name again.
	f.reg.Breaker(runtime.Config{Name: "tdx2"})
	p.waitFor("tdx2 to leave the notice", `!`+notice+`.textContent.includes("tdx2")`)
	assert.True(t, shown())
	assert.Equal(t, strconv.Quote(hostile)+`, BREAKER_QOUTES_*`, names())
	assert.False(t, eval[bool](p, `document.querySelector('[data-f=unmatched] img') !== null || window.__pwned === 1`),
		"a name is set as text, never parsed as HTML")

	// Every setting matches: the notice goes.
	f.reg.Breaker(runtime.Config{Name: "qoutes"})
	f.reg.Breaker(runtime.Config{Name: hostile})
	p.waitFor("the notice to go", notice+`.hidden`)
	assert.False(t, shown())
	assert.True(t, eval[bool](p, `window.__sameDocument === true`), "the page was not reloaded")
	assert.True(t, eval[bool](p, `window.__pwned === undefined`), "no name ran as a script")

	// A registry whose settings all match: no notice, also after a refresh.
	plain := plainFixture(t, httphealth.WithRefresh(100*time.Millisecond))
	psrv := httptest.NewServer(plain.h)
	t.Cleanup(psrv.Close)
	require.NoError(t, chromedp.Do(bctx, chromedp.Navigate(psrv.URL+"/health/")))
	p.waitFor("the script to start", `!document.querySelector('[data-f=live]').hidden`)
	plain.reg.Breaker(runtime.Config{Name: "tdx"})
	p.waitFor("a refresh that shows tdx", `document.querySelector('[data-name=tdx]') !== null`)
	assert.False(t, shown(), "no unmatched setting, no notice")
	assert.Empty(t, names())

	assert.Empty(t, console.problems(), "the page wrote errors or warnings to the console")
	cancel()
	<-console.done
}
