package httphealth_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/breakergen/breakergen/runtime"
	"github.com/breakergen/breakergen/runtime/httphealth"
)

// answered is one control request the server answered.
type answered struct {
	path   string
	status int
}

// statusRecorder keeps the status an answer was sent with.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (s *statusRecorder) WriteHeader(code int) {
	s.status = code
	s.ResponseWriter.WriteHeader(code)
}

// reportPosts serves h and sends each POST's path and status on ch once it
// is answered, so that a test waits for a request without sleeping.
func reportPosts(h http.Handler, ch chan<- answered) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		h.ServeHTTP(rec, r)
		if r.Method == http.MethodPost {
			ch <- answered{r.URL.Path, rec.status}
		}
	})
}

func nextPost(t *testing.T, ch <-chan answered) answered {
	t.Helper()
	select {
	case a := <-ch:
		return a
	case <-time.After(30 * time.Second): // a bound on a hung browser, not a synchronisation
		t.Fatal("no control request reached the server")
		return answered{}
	}
}

// TestDashboardControlsInBrowser: SPEC §14's controls in Chromium. The
// operator isolates a breaker with a reason, sees its card turn ISOLATED
// and the event appear, is asked for a reason when giving none, and
// resumes it; a page of another site that forges the same POST is refused
// and changes nothing.
func TestDashboardControlsInBrowser(t *testing.T) {
	bctx, _ := browserTest(t)
	f := newFixture(t,
		httphealth.WithDisplayName("eastmoney", "东方财富 East Money"),
		httphealth.WithRefresh(100*time.Millisecond),
		httphealth.WithControl(func(*http.Request) error { return nil }))
	em := f.reg.Breaker(runtime.Config{Name: "eastmoney"})
	f.reg.Breaker(runtime.Config{Name: "tdx"})

	posts := make(chan answered, 16)
	mux := http.NewServeMux()
	mux.Handle("/ops/", http.StripPrefix("/ops", reportPosts(f.h, posts)))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	console := watchConsole(bctx)

	require.NoError(t, chromedp.Do(bctx, chromedp.EmulateViewport(1280, 900), chromedp.Navigate(srv.URL+"/ops/health/")))
	p := page{t: t, ctx: bctx, dir: artifactDir(t)}
	p.waitFor("the script to start", `!document.querySelector('[data-f=live]').hidden`)

	const reason = `[data-name=eastmoney] [data-f=ctl-reason]`
	act := func(a string) string { return `[data-name=eastmoney] [data-act=` + a + `]` }

	// Isolate, with a reason.
	require.NoError(t, chromedp.Do(bctx,
		chromedp.SendKeys(chromedp.CSS(reason), "provider maintenance until 14:00"),
		chromedp.Click(chromedp.CSS(act("isolate")))))
	assert.Equal(t, answered{"/health/datasources/eastmoney/isolate", http.StatusOK}, nextPost(t, posts))
	p.waitFor("eastmoney ISOLATED with its event",
		`document.querySelector('[data-name=eastmoney]').dataset.state === "ISOLATED" &&
		 document.querySelectorAll('[data-f=events] > li').length === 1`)
	assert.Equal(t, runtime.Isolated, em.State())
	assert.Equal(t, "Isolated by an operator (down)", p.cardText("eastmoney", "state-word"))
	assert.Equal(t, "none (isolated until resumed)", p.cardText("eastmoney", "next"))
	evs := p.events()
	require.Len(t, evs, 1)
	assert.Contains(t, evs[0], "东方财富 East Money")
	assert.Contains(t, evs[0], "✓ Closed (ok) → to ⊘ Isolated by an operator (down)")
	assert.Contains(t, evs[0], "isolated by operator: provider maintenance until 14:00")
	assert.Empty(t, eval[string](p, `document.querySelector('`+reason+`').value`), "the field is cleared")
	p.screenshot("dashboard-isolated.png")

	// Resume without a reason: the page asks for one and sends nothing.
	require.NoError(t, chromedp.Do(bctx, chromedp.Click(chromedp.CSS(act("resume")))))
	p.waitFor("the page to ask for a reason",
		`document.querySelector('[data-name=eastmoney] [data-f=ctl-msg]').textContent.startsWith("Give a reason first")`)
	assert.True(t, eval[bool](p, `document.activeElement === document.querySelector('`+reason+`')`))
	assert.Equal(t, runtime.Isolated, em.State())

	// Resume, with a reason.
	require.NoError(t, chromedp.Do(bctx,
		chromedp.SendKeys(chromedp.CSS(reason), "maintenance over"),
		chromedp.Click(chromedp.CSS(act("resume")))))
	assert.Equal(t, answered{"/health/datasources/eastmoney/resume", http.StatusOK}, nextPost(t, posts))
	p.waitFor("eastmoney CLOSED with two events",
		`document.querySelector('[data-name=eastmoney]').dataset.state === "CLOSED" &&
		 document.querySelectorAll('[data-f=events] > li').length === 2`)
	assert.Contains(t, p.events()[0], "resumed by operator: maintenance over")
	assert.Empty(t, console.problems(), "the page wrote no error")

	// Another site's page forges the POST, as a CSRF attack would: the
	// browser sends it (no-cors), marked cross-site, and it is refused.
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(`<!DOCTYPE html><title>win a prize</title><script>
fetch(` + "`" + srv.URL + `/ops/health/datasources/eastmoney/isolate` + "`" + `,
  {method: "POST", mode: "no-cors", body: new URLSearchParams({reason: "pwned"})});
</script>`))
	}))
	t.Cleanup(evil.Close)
	evilURL := strings.Replace(evil.URL, "127.0.0.1", "localhost", 1) // another site than 127.0.0.1
	require.NoError(t, chromedp.Do(bctx, chromedp.Navigate(evilURL)))
	assert.Equal(t, answered{"/health/datasources/eastmoney/isolate", http.StatusForbidden}, nextPost(t, posts))
	assert.Equal(t, runtime.Closed, em.State(), "the forged request changed nothing")
	assert.Len(t, f.reg.Events(0), 2)
}

// TestDashboardWithoutControlsInBrowser: without WithControl the running
// page has no control anywhere, also after its script redraws the cards.
func TestDashboardWithoutControlsInBrowser(t *testing.T) {
	bctx, _ := browserTest(t)
	f := newFixture(t, httphealth.WithRefresh(100*time.Millisecond))
	em := f.reg.Breaker(runtime.Config{Name: "eastmoney", FailureThreshold: 1})
	srv := httptest.NewServer(f.h)
	t.Cleanup(srv.Close)
	require.NoError(t, chromedp.Do(bctx, chromedp.Navigate(srv.URL+"/health/")))
	p := page{t: t, ctx: bctx}
	p.waitFor("the script to start", `!document.querySelector('[data-f=live]').hidden`)
	fail(t, em, 1, "down")
	f.reg.Breaker(runtime.Config{Name: "late"}) // a card the script makes from the template
	p.waitFor("the redraw", `document.querySelectorAll('[data-f=cards] > li').length === 2 &&
		document.querySelector('[data-name=eastmoney]').dataset.state === "OPEN"`)
	assert.Zero(t, eval[int](p, `document.querySelectorAll('[data-f=controls], [data-act], [data-f=ctl-reason]').length`))
	assert.NotContains(t, eval[string](p, `document.body.innerText`), "Isolate")
}

// TestDashboardKeyControlsInBrowser: SPEC §14's controls reach a family's
// keys too (§15: the dashboard treats each key as a breaker). The operator
// expands the family, gives a reason and isolates one key, the key "" (a
// request without a host) included, whose name the page escapes whole;
// then resumes it. A family's table of keys had no control: only curl
// could isolate a key.
func TestDashboardKeyControlsInBrowser(t *testing.T) {
	bctx, _ := browserTest(t)
	f := newFixture(t,
		httphealth.WithRefresh(100*time.Millisecond),
		httphealth.WithDisplayName("hosts", "上游主机"),
		httphealth.WithControl(func(*http.Request) error { return nil }))
	fam := f.reg.Family(runtime.Config{Name: "hosts", FailureThreshold: 1}, runtime.FamilyConfig{Keys: 10})
	fam.Breaker("api.example.com")
	fam.Breaker("")

	posts := make(chan answered, 16)
	srv := httptest.NewServer(reportPosts(f.h, posts))
	t.Cleanup(srv.Close)
	console := watchConsole(bctx)
	require.NoError(t, chromedp.Do(bctx, chromedp.EmulateViewport(1280, 900), chromedp.Navigate(srv.URL+"/health/")))
	p := page{t: t, ctx: bctx, dir: artifactDir(t)}
	p.waitFor("the script to start", `!document.querySelector('[data-f=live]').hidden`)

	require.NoError(t, chromedp.Do(bctx, chromedp.Click(chromedp.CSS(`[data-family=hosts] [data-f=expand]`))))
	p.waitFor("the keys", `document.querySelectorAll('[data-family=hosts] [data-f=key-rows] > tr').length === 2`)
	key := func(name string) string { return `[data-family=hosts] tr.key[data-name="` + name + `"]` }

	require.NoError(t, chromedp.Do(bctx,
		chromedp.SendKeys(chromedp.CSS(`[data-family=hosts] [data-f=key-reason]`), "bad certificate"),
		chromedp.Click(chromedp.CSS(key("hosts/api.example.com")+` [data-act=isolate]`))))
	assert.Equal(t, answered{"/health/datasources/hosts/api.example.com/isolate", http.StatusOK}, nextPost(t, posts))
	p.waitFor("the key ISOLATED", `document.querySelector('`+key("hosts/api.example.com")+`').dataset.state === "ISOLATED"`)
	b, _ := fam.Lookup("api.example.com")
	assert.Equal(t, runtime.Isolated, b.State())
	assert.Contains(t, f.reg.Events(1)[0].Reason, "isolated by operator: bad certificate")
	assert.Equal(t, "Isolate key api.example.com", eval[string](p, `document.querySelector('`+key("hosts/api.example.com")+` [data-act=isolate]').getAttribute("aria-label")`))
	// The timeline names the key with its family's display name (the
	// page's script's copy of displayName, as the server's).
	p.waitFor("the key's event", `document.querySelectorAll('[data-f=events] > li').length === 1`)
	assert.Equal(t, "上游主机/api.example.com", eval[string](p, `document.querySelector('[data-f=events] > li [data-f=display]').textContent`))

	// The key "": "hosts/", escaped whole, not redirected to the family.
	require.NoError(t, chromedp.Do(bctx,
		chromedp.SendKeys(chromedp.CSS(`[data-family=hosts] [data-f=key-reason]`), "no host"),
		chromedp.Click(chromedp.CSS(key("hosts/")+` [data-act=bypass]`))))
	assert.Equal(t, answered{"/health/datasources/hosts//bypass", http.StatusOK}, nextPost(t, posts), "sent escaped (hosts%2F), so served, not redirected")
	p.waitFor("the key \"\" BYPASSED", `document.querySelector('`+key("hosts/")+`').dataset.state === "BYPASSED"`)
	empty, _ := fam.Lookup("")
	assert.Equal(t, runtime.Bypassed, empty.State())

	// Without a reason the page asks for one.
	require.NoError(t, chromedp.Do(bctx, chromedp.Click(chromedp.CSS(key("hosts/api.example.com")+` [data-act=resume]`))))
	p.waitFor("the page to ask for a reason",
		`document.querySelector('[data-family=hosts] [data-f=key-ctl-msg]').textContent.startsWith("Give a reason first")`)
	require.NoError(t, chromedp.Do(bctx,
		chromedp.SendKeys(chromedp.CSS(`[data-family=hosts] [data-f=key-reason]`), "certificate renewed"),
		chromedp.Click(chromedp.CSS(key("hosts/api.example.com")+` [data-act=resume]`))))
	assert.Equal(t, answered{"/health/datasources/hosts/api.example.com/resume", http.StatusOK}, nextPost(t, posts))
	p.waitFor("the key CLOSED", `document.querySelector('`+key("hosts/api.example.com")+`').dataset.state === "CLOSED"`)
	assert.Empty(t, console.problems(), "the page wrote no error")
}
