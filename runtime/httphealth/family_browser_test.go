package httphealth_test

import (
	"fmt"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/breakergen/breakergen/runtime"
	"github.com/breakergen/breakergen/runtime/httphealth"
)

// TestDashboardFamilyInBrowser opens the dashboard of a family of 10,000
// per-key breakers, one of them OPEN, beside a plain breaker: the family
// is one row, not 10,000 cards; expanded, it shows its keys a page at a
// time, the OPEN one first; its pages turn, a search finds keys, and a key
// that trips meanwhile shows without a reload.
func TestDashboardFamilyInBrowser(t *testing.T) {
	bctx, cancel := browserTest(t)

	f := newFixture(t, httphealth.WithRefresh(100*time.Millisecond))
	f.reg.Breaker(runtime.Config{Name: "tdx"})
	fam := f.reg.Family(runtime.Config{Name: "quote", FailureThreshold: 1, ResetTimeout: time.Minute},
		runtime.FamilyConfig{Keys: 10000, MaxOpen: 10})
	for i := range 10000 {
		fam.Breaker(fmt.Sprintf("k%05d", i))
	}
	fail(t, fam.Breaker("k07342"), 1, "symbol page broken")
	srv := httptest.NewServer(f.h)
	t.Cleanup(srv.Close)

	console := watchConsole(bctx)
	require.NoError(t, chromedp.Do(bctx, chromedp.EmulateViewport(1280, 900), chromedp.Navigate(srv.URL+"/health/")))
	p := page{t: t, ctx: bctx, dir: artifactDir(t)}
	p.waitFor("the script to start", `!document.querySelector('[data-f=live]').hidden`)
	eval[bool](p, `window.__sameDocument = true`)
	row := `document.querySelector('[data-family=quote]')`
	rowText := func(key string) string {
		return eval[string](p, row+fmt.Sprintf(`.querySelector('[data-f=%s]').textContent`, key))
	}
	keys := func() []string {
		return eval[[]string](p, `[...document.querySelectorAll('[data-family=quote] [data-f=key-rows] > tr')].map(tr => tr.dataset.name)`)
	}

	assert.Equal(t, []string{"tdx"}, eval[[]string](p, `[...document.querySelectorAll('[data-f=cards] > li')].map(li => li.dataset.name)`),
		"the keys do not flood the list of breakers")
	assert.Equal(t, "OPEN", eval[string](p, row+`.dataset.state`), "the worst key's state")
	assert.Equal(t, "Open (down)", rowText("state-word"))
	assert.Equal(t, "10000 of 10000", rowText("keys"))
	assert.Equal(t, "1 down, 0 degraded, 9999 ok", rowText("levels"))
	assert.Equal(t, "1 (maxopen 10%)", rowText("open"))
	assert.Equal(t, "0", rowText("dropped"))
	assert.True(t, eval[bool](p, row+`.querySelector('[data-f=keylist]').hidden`), "collapsed at first")
	assert.Equal(t, "2 sources: 1 down, 0 degraded, 1 ok. Those not ok come first.",
		eval[string](p, `document.querySelector('[data-f=summary]').textContent`))

	// Expand: the first page of keys, the OPEN one first.
	p.waitFor("the row's button enabled", row+`.querySelector('[data-f=expand]').disabled === false`)
	require.NoError(t, chromedp.Do(bctx, chromedp.Click(chromedp.CSS(`[data-family=quote] [data-f=expand]`))))
	p.waitFor("a page of keys", `document.querySelectorAll('[data-family=quote] [data-f=key-rows] > tr').length === 50`)
	assert.Equal(t, "true", eval[string](p, row+`.querySelector('[data-f=expand]').getAttribute("aria-expanded")`))
	got := keys()
	assert.Equal(t, "quote/k07342", got[0], "the OPEN key first")
	assert.Equal(t, "quote/k00000", got[1])
	open := `document.querySelector('[data-name="quote/k07342"]')`
	assert.Equal(t, "OPEN", eval[string](p, open+`.dataset.state`))
	assert.Equal(t, "k07342", eval[string](p, open+`.querySelector('[data-f=key]').textContent`))
	assert.Equal(t, "Open (down)", eval[string](p, open+`.querySelector('[data-f=state-word]').textContent`))
	assert.Equal(t, "1", eval[string](p, open+`.querySelector('[data-f=key-failures]').textContent`))
	assert.Regexp(t, `^in \d+ s$|^in 1 min 0 s$`, eval[string](p, open+`.querySelector('[data-f=key-probe]').textContent`))
	// The row keeps its next probe, which the page's countdown reads
	// each second, as a card's.
	assert.NotEmpty(t, eval[string](p, open+`.dataset.nextProbe`))
	assert.Equal(t, "Page 1 of 200: 1–50 of 10000.", rowText("key-page-text"))
	assert.True(t, eval[bool](p, row+`.querySelector('[data-f=key-prev]').disabled`))
	p.screenshot("dashboard-family.png")

	// The next page of keys.
	require.NoError(t, chromedp.Do(bctx, chromedp.Click(chromedp.CSS(`[data-family=quote] [data-f=key-next]`))))
	p.waitFor("page 2 of the keys", row+`.querySelector('[data-f=key-page-text]').textContent.startsWith("Page 2 of 200")`)
	assert.Equal(t, "quote/k00049", keys()[0])

	// A search among the keys.
	require.NoError(t, chromedp.Do(bctx, chromedp.SendKeys(chromedp.CSS(`[data-family=quote] [data-f=key-q]`), "k0734")))
	p.waitFor("the matching keys", row+`.querySelector('[data-f=key-page-text]').textContent === "Page 1 of 1: 1–10 of 10 matching “k0734”."`)
	got = keys()
	require.Len(t, got, 10)
	assert.Equal(t, "quote/k07342", got[0])

	// Another key trips: its row and the family's counts follow.
	fail(t, fam.Breaker("k07345"), 1, "symbol page broken")
	p.waitFor("the second OPEN key", `document.querySelector('[data-name="quote/k07345"]').dataset.state === "OPEN"`)
	assert.Equal(t, []string{"quote/k07342", "quote/k07345"}, keys()[:2])
	p.waitFor("the family's counts", row+`.querySelector('[data-f=levels]').textContent === "2 down, 0 degraded, 9998 ok"`)
	p.screenshot("dashboard-family-search.png")

	// Collapse.
	require.NoError(t, chromedp.Do(bctx, chromedp.Click(chromedp.CSS(`[data-family=quote] [data-f=expand]`))))
	p.waitFor("collapsed", row+`.querySelector('[data-f=keylist]').hidden`)
	assert.True(t, eval[bool](p, `window.__sameDocument === true`), "the page was not reloaded")
	assert.Empty(t, console.problems(), "the page wrote errors or warnings to the console")
	cancel()
	<-console.done
}
