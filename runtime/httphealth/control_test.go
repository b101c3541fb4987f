package httphealth_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/breakergen/breakergen/runtime"
	"github.com/breakergen/breakergen/runtime/httphealth"
)

// token is what the tests' authorize accepts.
const token = "Bearer ops-secret"

func authorize(r *http.Request) error {
	if r.Header.Get("Authorization") != token {
		return errors.New("want the operators' token")
	}
	return nil
}

// control sends one control request: a form with reason (when not nil),
// the token, and the headers given as name, value pairs.
func (f *fixture) control(method, target string, reason *string, headers ...string) *httptest.ResponseRecorder {
	var body strings.Reader
	if reason != nil {
		body = *strings.NewReader(url.Values{"reason": {*reason}}.Encode())
	}
	req := httptest.NewRequest(method, target, &body)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Authorization", token)
	for i := 0; i+1 < len(headers); i += 2 {
		if headers[i+1] == "" {
			req.Header.Del(headers[i])
		} else {
			req.Header.Set(headers[i], headers[i+1])
		}
	}
	rec := httptest.NewRecorder()
	f.h.ServeHTTP(rec, req)
	return rec
}

func ptr(s string) *string { return &s }

// post sends one control request with the token and body, of type ct
// (none when empty).
func (f *fixture) post(target, ct, body string) *httptest.ResponseRecorder {
	req := httptest.NewRequest("POST", target, strings.NewReader(body))
	if ct != "" {
		req.Header.Set("Content-Type", ct)
	}
	req.Header.Set("Authorization", token)
	rec := httptest.NewRecorder()
	f.h.ServeHTTP(rec, req)
	return rec
}

// multipartForm returns a multipart/form-data body, as curl -F sends, and
// its type: the fields as name, value pairs, a name starting with "@"
// sent as a file of that name.
func multipartForm(t *testing.T, fields ...string) (ct, body string) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for i := 0; i+1 < len(fields); i += 2 {
		if name, ok := strings.CutPrefix(fields[i], "@"); ok {
			fw, err := mw.CreateFormFile(name, "notes.txt")
			require.NoError(t, err)
			_, err = fw.Write([]byte(fields[i+1]))
			require.NoError(t, err)
			continue
		}
		require.NoError(t, mw.WriteField(fields[i], fields[i+1]))
	}
	require.NoError(t, mw.Close())
	return mw.FormDataContentType(), buf.String()
}

func errorOf(t *testing.T, rec *httptest.ResponseRecorder) string {
	t.Helper()
	var e struct{ Error string }
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &e), rec.Body.String())
	return e.Error
}

// TestControlIsolateBypassResume: SPEC §14's POST
// /health/datasources/{name}/{isolate|bypass|resume} changes the breaker,
// answers its Stats, and records the reason, cleaned, in the Event.
func TestControlIsolateBypassResume(t *testing.T) {
	f := newFixture(t, httphealth.WithControl(authorize))
	em := f.reg.Breaker(runtime.Config{Name: "eastmoney"})
	keyed := f.reg.Breaker(runtime.Config{Name: "quotes/600519.SH"})

	rec := f.control("POST", "/health/datasources/eastmoney/isolate", ptr("maintenance\x1b[2J until 14:00\n"))
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	assertCommonHeaders(t, rec)
	var st struct{ Name, State, Status string }
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &st))
	assert.Equal(t, "eastmoney", st.Name)
	assert.Equal(t, "ISOLATED", st.State)
	assert.Equal(t, "down", st.Status)
	assert.Equal(t, runtime.Isolated, em.State())
	assert.Equal(t, "isolated by operator: maintenance\ufffd[2J until 14:00", f.reg.Events(1)[0].Reason)

	rec = f.control("POST", "/health/datasources/eastmoney/bypass", ptr("watching by hand"))
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	assert.Equal(t, runtime.Bypassed, em.State())
	rec = f.control("POST", "/health/datasources/eastmoney/resume", ptr("provider back"))
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	assert.Equal(t, runtime.Closed, em.State())
	assert.Equal(t, "resumed by operator: provider back", f.reg.Events(1)[0].Reason)

	// Cleaned as every reason: one line, no control characters (a
	// bidirectional override included: it would make the dashboard read
	// backwards), 200 characters at most.
	long := "evil\u202egnp.exe\r\n" + strings.Repeat("长", 300)
	rec = f.control("POST", "/health/datasources/eastmoney/isolate", &long)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	r := f.reg.Events(1)[0].Reason
	assert.True(t, strings.HasPrefix(r, "isolated by operator: evil\ufffdgnp.exe 长长"), r)
	assert.Equal(t, 200, utf8.RuneCountInString(r), "cut to 200 characters")
	var oe *runtime.OpenError
	require.ErrorAs(t, em.Do(context.Background(), func(context.Context) error { return nil }), &oe)
	assert.Equal(t, r, oe.Reason, "the refusal says the same")
	_ = f.control("POST", "/health/datasources/eastmoney/resume", ptr("back"))

	// A keyed breaker's name has a slash, escaped or not.
	rec = f.control("POST", "/health/datasources/"+url.PathEscape("quotes/600519.SH")+"/isolate", ptr("bad symbol"))
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	assert.Equal(t, runtime.Isolated, keyed.State())
}

// TestControlRefusals: each check of WithControl, in order, and nothing
// changes when one refuses.
func TestControlRefusals(t *testing.T) {
	f := newFixture(t, httphealth.WithControl(authorize))
	em := f.reg.Breaker(runtime.Config{Name: "eastmoney"})
	const path = "/health/datasources/eastmoney/isolate"

	rec := f.control("GET", path, nil)
	assert.Equal(t, http.StatusMethodNotAllowed, rec.Code)
	assert.Equal(t, "POST", rec.Header().Get("Allow"))

	// A forged cross-site POST: a browser says where it comes from.
	rec = f.control("POST", path, ptr("x"), "Sec-Fetch-Site", "cross-site")
	assert.Equal(t, http.StatusForbidden, rec.Code)
	assert.Contains(t, errorOf(t, rec), "from another site")
	rec = f.control("POST", path, ptr("x"), "Origin", "https://evil.example")
	assert.Equal(t, http.StatusForbidden, rec.Code, "an older browser: Origin only")

	rec = f.control("POST", path, ptr("x"), "Authorization", "")
	assert.Equal(t, http.StatusForbidden, rec.Code)
	assert.Equal(t, "not authorized: want the operators' token", errorOf(t, rec))

	rec = f.control("POST", "/health/datasources/nosuch/isolate", ptr("x"))
	assert.Equal(t, http.StatusNotFound, rec.Code)
	assert.Equal(t, `no breaker called "nosuch"`, errorOf(t, rec))
	// A family's name, which the dashboard shows as a row of its own.
	f.reg.Family(runtime.Config{Name: "quotes"}, runtime.FamilyConfig{}).Breaker("600519.SH")
	rec = f.control("POST", "/health/datasources/quotes/isolate", ptr("x"))
	assert.Equal(t, http.StatusNotFound, rec.Code)
	assert.Equal(t, `no breaker called "quotes"; "quotes" is a family of per-key breakers: control one key at /health/datasources/quotes/<key>/isolate`, errorOf(t, rec))
	rec = f.control("POST", "/health/datasources/eastmoney/explode", ptr("x"))
	assert.Equal(t, http.StatusNotFound, rec.Code, "not an action")

	for _, reason := range []*string{nil, ptr(""), ptr(" \t\n "), ptr("\x00\x01"), ptr("\xff\xfe \x7f")} {
		rec = f.control("POST", path, reason)
		assert.Equal(t, http.StatusBadRequest, rec.Code)
		assert.Contains(t, errorOf(t, rec), "a reason is required")
	}
	rec = f.control("POST", path+"?reason=in+the+query", nil)
	assert.Equal(t, http.StatusBadRequest, rec.Code, "the reason is a form field, never in the URL")
	big := strings.Repeat("x", 64<<10)
	rec = f.control("POST", path, &big)
	assert.Equal(t, http.StatusRequestEntityTooLarge, rec.Code)

	// A request with no body at all, as a handler's caller (not a
	// server) may send: no reason, not a panic.
	req := httptest.NewRequest("POST", path, nil)
	req.Header.Set("Authorization", token)
	req.Body = nil
	rec = httptest.NewRecorder()
	f.h.ServeHTTP(rec, req)
	assert.Equal(t, http.StatusBadRequest, rec.Code)
	assert.Contains(t, errorOf(t, rec), "a reason is required")

	assert.Equal(t, runtime.Closed, em.State(), "nothing changed")
	assert.Empty(t, f.reg.Events(0))

	// A same-origin request from the dashboard passes.
	rec = f.control("POST", path, ptr("ok"), "Sec-Fetch-Site", "same-origin")
	assert.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
}

// TestControlReasonShapes: the reason is read from a form in the body,
// urlencoded (curl -d, the dashboard) or multipart (curl -F); a reason
// sent any other way is refused with a message saying what to send, not
// as a missing one, and changes nothing.
func TestControlReasonShapes(t *testing.T) {
	f := newFixture(t, httphealth.WithControl(authorize))
	em := f.reg.Breaker(runtime.Config{Name: "eastmoney"})
	const path = "/health/datasources/eastmoney/"

	ct, body := multipartForm(t, "reason", "maintenance until 14:00")
	rec := f.post(path+"isolate", ct, body)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	assert.Equal(t, runtime.Isolated, em.State())
	assert.Equal(t, "isolated by operator: maintenance until 14:00", f.reg.Events(1)[0].Reason)
	rec = f.post(path+"resume", "application/x-www-form-urlencoded; charset=UTF-8", "reason=back")
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Equal(t, runtime.Closed, em.State())
	// utf8, UTF-8's common misspelling, is UTF-8 too.
	rec = f.post(path+"isolate", "application/x-www-form-urlencoded; charset=utf8", "reason=caf%C3%A9")
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	assert.Equal(t, "isolated by operator: café", f.reg.Events(1)[0].Reason)
	rec = f.post(path+"resume", "application/x-www-form-urlencoded", "reason=back")
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	events := len(f.reg.Events(0))

	const (
		urlencoded = "curl --data-urlencode 'reason=…' (application/x-www-form-urlencoded)"
		formdata   = "curl -F 'reason=…' (multipart/form-data)"
	)
	big := strings.Repeat("x", 64<<10)
	type bad struct {
		name, target, ct, body string
		status                 int
		mention                []string // the error message says them all
	}
	cases := []bad{
		{"JSON", path + "isolate", "application/json", `{"reason": "maintenance"}`, 415,
			[]string{"a body of type application/json is not read", urlencoded, formdata}},
		{"text", path + "isolate", "text/plain", "reason=maintenance", 415,
			[]string{"a body of type text/plain is not read", urlencoded, formdata}},
		// Read as UTF-8, latin1's "café" went into the event as "caf\ufffd".
		{"latin1", path + "isolate", "application/x-www-form-urlencoded; charset=ISO-8859-1", "reason=caf%E9", 415,
			[]string{"a body in charset ISO-8859-1 is not read: send the reason in UTF-8", urlencoded}},
		{"latin1 by its short name", path + "isolate", "application/x-www-form-urlencoded; charset=latin1", "reason=caf%E9", 415,
			[]string{"a body in charset latin1 is not read: send the reason in UTF-8", urlencoded}},
		{"no Content-Type", path + "isolate", "", "reason=maintenance", 415,
			[]string{"a body without a Content-Type is not read", urlencoded, formdata}},
		{"malformed Content-Type", path + "isolate", "form; =", "reason=maintenance", 400,
			[]string{`malformed Content-Type "form; ="`, urlencoded, formdata}},
		{"in the URL", path + "isolate?reason=maintenance", "", "", 400,
			[]string{"a reason in the URL is not read", urlencoded, formdata}},
		{"in the URL and the form", path + "isolate?reason=maintenance", "application/x-www-form-urlencoded", "reason=maintenance", 400,
			[]string{"a reason in the URL is not read"}},
		{"no reason", path + "isolate", "", "", 400,
			[]string{"a reason is required", "curl --data-urlencode 'reason=…'", "curl -F 'reason=…'"}},
	}
	ct, body = multipartForm(t, "@reason", "maintenance")
	cases = append(cases, bad{"a file", path + "isolate", ct, body, 400, []string{"reason is a file", "curl -F 'reason=…'"}})
	ct, body = multipartForm(t, "reason", "a", "reason", "b")
	cases = append(cases, bad{"twice", path + "isolate", ct, body, 400, []string{"reason given more than once"}})
	ct, body = multipartForm(t, "reason", "")
	cases = append(cases, bad{"empty", path + "isolate", ct, body, 400, []string{"a reason is required"}})
	ct, body = multipartForm(t, "reason", big)
	cases = append(cases, bad{"too large", path + "isolate", ct, body, 413, []string{"too large"}})
	cases = append(cases, bad{"no boundary", path + "isolate", "multipart/form-data", "reason=x", 400, []string{"malformed form"}})
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec := f.post(tc.target, tc.ct, tc.body)
			assert.Equal(t, tc.status, rec.Code, rec.Body.String())
			for _, m := range tc.mention {
				assert.Contains(t, errorOf(t, rec), m)
			}
		})
	}
	assert.Equal(t, runtime.Closed, em.State(), "nothing changed")
	assert.Len(t, f.reg.Events(0), events)
}

// TestControlUnknownParams: a control refuses a query parameter or a
// form field it does not read, as the GET endpoints refuse a parameter
// (the same message, with a did-you-mean), and changes nothing; a name
// starting with "_" is let through, as there.
func TestControlUnknownParams(t *testing.T) {
	f := newFixture(t, httphealth.WithControl(authorize))
	tdx := f.reg.Breaker(runtime.Config{Name: "tdx"})
	const (
		form = "application/x-www-form-urlencoded"
		path = "/health/datasources/tdx/"
	)

	type bad struct {
		name, target, ct, body string
		error                  string
	}
	cases := []bad{
		{"query", path + "bypass?x=1", form, "reason=ok",
			`unknown query parameter "x"; POST /health/datasources/tdx/bypass takes no query parameter; send the reason as the form field reason in the body, as curl --data-urlencode 'reason=…' (application/x-www-form-urlencoded) or curl -F 'reason=…' (multipart/form-data) do`},
		{"query, first by name", path + "isolate?z=1&_=1733312345&b=2", form, "reason=ok",
			`unknown query parameter "b"; POST /health/datasources/tdx/isolate takes no query parameter; send the reason`},
		{"malformed query", path + "isolate?%zz", form, "reason=ok", "malformed query"},
		{"form field misspelt", path + "resume", form, "reason=ok&resaon=typo",
			`unknown form field "resaon"; POST /health/datasources/tdx/resume takes reason (did you mean reason?)`},
		{"form field only", path + "isolate", form, "Reason=ok",
			`unknown form field "Reason"; POST /health/datasources/tdx/isolate takes reason (did you mean reason?)`},
		{"form field other", path + "isolate", form, "reason=ok&until=14:00",
			`unknown form field "until"; POST /health/datasources/tdx/isolate takes reason`},
	}
	ct, body := multipartForm(t, "reason", "ok", "reasons", "more")
	cases = append(cases, bad{"multipart field", path + "isolate", ct, body,
		`unknown form field "reasons"; POST /health/datasources/tdx/isolate takes reason (did you mean reason?)`})
	ct, body = multipartForm(t, "reason", "ok", "@attachment", "notes")
	cases = append(cases, bad{"multipart file", path + "isolate", ct, body,
		`unknown form field "attachment"; POST /health/datasources/tdx/isolate takes reason`})
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec := f.post(tc.target, tc.ct, tc.body)
			assert.Equal(t, http.StatusBadRequest, rec.Code, rec.Body.String())
			assert.Contains(t, errorOf(t, rec), tc.error)
		})
	}
	assert.Equal(t, runtime.Closed, tdx.State(), "nothing changed")
	assert.Empty(t, f.reg.Events(0))

	// A cache buster in the URL, a CSRF token of a framework's form.
	rec := f.post(path+"isolate?_=1733312345", form, "reason=ok&_csrf=abc")
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	assert.Equal(t, runtime.Isolated, tdx.State())
}

// TestNoControlWithoutTheOption: without WithControl the control paths
// answer 404 to every method and the dashboard has no control anywhere.
func TestNoControlWithoutTheOption(t *testing.T) {
	f := newFixture(t)
	em := f.reg.Breaker(runtime.Config{Name: "eastmoney"})
	for _, m := range []string{"POST", "GET", "PUT"} {
		for _, a := range []string{"isolate", "bypass", "resume"} {
			rec := f.control(m, "/health/datasources/eastmoney/"+a, ptr("x"))
			assert.Equal(t, http.StatusNotFound, rec.Code, m+" "+a)
		}
	}
	assert.Equal(t, runtime.Closed, em.State())
	page := f.serve("GET", "/health/").Body.String()
	for _, s := range []string{`data-f="controls"`, `data-act=`, ">Isolate<", `"controls":true`} {
		assert.NotContains(t, page, s)
	}

	g := newFixture(t, httphealth.WithControl(authorize))
	g.reg.Breaker(runtime.Config{Name: "eastmoney"})
	page = g.serve("GET", "/health/").Body.String()
	for _, s := range []string{`data-f="controls"`, `data-act="isolate"`, `data-act="bypass"`, `data-act="resume"`, `"controls":true`} {
		assert.Contains(t, page, s)
	}
	assert.Equal(t, 2, strings.Count(page, `data-f="controls"`), "the card, and the template new cards are made of")
}

// TestWithControlNilIsIgnored: a nil authorize turns nothing on.
func TestWithControlNilIsIgnored(t *testing.T) {
	f := newFixture(t, httphealth.WithControl(nil))
	f.reg.Breaker(runtime.Config{Name: "eastmoney"})
	assert.Equal(t, http.StatusNotFound, f.control("POST", "/health/datasources/eastmoney/isolate", ptr("x")).Code)
}
