package httphealth_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/breakergen/breakergen/runtime"
	"github.com/breakergen/breakergen/runtime/httphealth"
)

// start is the fake clock's first reading: 2026-10-06 09:30:00.123456789
// in UTC+8, so that tests see both sub-second precision and a zone to
// drop.
var start = time.Date(2026, 10, 6, 17, 30, 0, 123456789, time.FixedZone("CST", 8*3600))

// fixture is a registry on a fake clock with a handler in front of it.
type fixture struct {
	clock *fakeClock
	reg   *runtime.Registry
	h     *httphealth.Handler
}

func newFixture(t *testing.T, opts ...httphealth.Option) *fixture {
	t.Helper()
	clock := newFakeClock(start)
	reg := runtime.NewRegistry(runtime.WithClock(clock), runtime.WithLogger(slog.New(slog.DiscardHandler)))
	opts = append([]httphealth.Option{httphealth.WithClock(clock)}, opts...)
	return &fixture{clock: clock, reg: reg, h: httphealth.New(reg, opts...)}
}

// fail makes n failing calls through b, with message msg.
func fail(t *testing.T, b *runtime.Breaker, n int, msg string) {
	t.Helper()
	for range n {
		err := b.Do(context.Background(), func(context.Context) error { return errors.New(msg) })
		require.Error(t, err)
	}
}

// succeed makes one successful call through b.
func succeed(t *testing.T, b *runtime.Breaker) {
	t.Helper()
	require.NoError(t, b.Do(context.Background(), func(context.Context) error { return nil }))
}

// serve sends one request to the handler and returns the recorded answer.
func (f *fixture) serve(method, target string) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	f.h.ServeHTTP(rec, httptest.NewRequest(method, target, nil))
	return rec
}

// assertCommonHeaders checks what every answer carries.
func assertCommonHeaders(t *testing.T, rec *httptest.ResponseRecorder) {
	t.Helper()
	assert.Equal(t, "no-store", rec.Header().Get("Cache-Control"))
	assert.Equal(t, "nosniff", rec.Header().Get("X-Content-Type-Options"))
	assert.Equal(t, strconv.Itoa(rec.Body.Len()), rec.Header().Get("Content-Length"))
}

func TestDatasources(t *testing.T) {
	f := newFixture(t)
	em := f.reg.Breaker(runtime.Config{Name: "eastmoney", FailureThreshold: 2, ResetTimeout: 30 * time.Second})
	f.reg.Breaker(runtime.Config{Name: "tencent"})
	f.reg.Breaker(runtime.Config{Name: "tdx", FailureThreshold: 1})
	fail(t, em, 2, "403 Forbidden")
	fail(t, f.reg.Breaker(runtime.Config{Name: "tdx", FailureThreshold: 1}), 1, "timeout")
	f.clock.Add(30 * time.Second) // tdx opened at the same instant: both are due to probe

	rec := f.serve(http.MethodGet, "/health/datasources")
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	assertCommonHeaders(t, rec)
	assert.Equal(t, "application/json; charset=utf-8", rec.Header().Get("Content-Type"))
	assert.Equal(t, f.clock.Now().UTC().Format(http.TimeFormat), rec.Header().Get("Date"), "Date comes from the handler's clock")
	assert.Equal(t, "2026-10-06T09:30:30.123Z", rec.Header().Get(httphealth.ServerTimeHeader))

	var got runtime.Health
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &got))
	assert.Equal(t, runtime.LevelDegraded, got.Status)
	require.Len(t, got.Breakers, 3)
	names := []string{got.Breakers[0].Name, got.Breakers[1].Name, got.Breakers[2].Name}
	assert.Equal(t, []string{"eastmoney", "tdx", "tencent"}, names, "name order")
	assert.Equal(t, runtime.HalfOpen, got.Breakers[0].State)
	assert.Equal(t, runtime.LevelDegraded, got.Breakers[0].Status)
	assert.Equal(t, uint64(2), got.Breakers[0].Failures)
	assert.Equal(t, runtime.Closed, got.Breakers[2].State)
	assert.Equal(t, runtime.LevelOK, got.Breakers[2].Status)

	// The wire form is the one SPEC names.
	var raw struct {
		Status   string           `json:"status"`
		Breakers []map[string]any `json:"breakers"`
	}
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &raw))
	assert.Equal(t, "degraded", raw.Status)
	assert.Equal(t, "HALF_OPEN", raw.Breakers[0]["state"])
	assert.Equal(t, "degraded", raw.Breakers[0]["status"])
	assert.Equal(t, "CLOSED", raw.Breakers[2]["state"])
}

func TestDatasourcesNextProbe(t *testing.T) {
	f := newFixture(t)
	em := f.reg.Breaker(runtime.Config{Name: "eastmoney", FailureThreshold: 1, ResetTimeout: 30 * time.Second})
	fail(t, em, 1, "boom")

	rec := f.serve(http.MethodGet, "/health/datasources")
	require.Equal(t, http.StatusOK, rec.Code)
	var got runtime.Health
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &got))
	assert.Equal(t, runtime.LevelDown, got.Status)
	require.Len(t, got.Breakers, 1)
	assert.Equal(t, runtime.Open, got.Breakers[0].State)
	assert.True(t, got.Breakers[0].NextProbe.Equal(start.Add(30*time.Second)), got.Breakers[0].NextProbe)
}

func TestDatasourcesEmpty(t *testing.T) {
	f := newFixture(t)
	rec := f.serve(http.MethodGet, "/health/datasources")
	require.Equal(t, http.StatusOK, rec.Code)
	assert.JSONEq(t, `{"status": "ok", "breakers": []}`, rec.Body.String())
}

// TestUnknownPathUnderAPrefix: a handler mounted under a prefix without
// http.StripPrefix sees the prefix; its 404 says so, and how to mount it.
func TestUnknownPathUnderAPrefix(t *testing.T) {
	f := newFixture(t)
	rec := f.serve(http.MethodGet, "/ops/health/datasources")
	require.Equal(t, http.StatusNotFound, rec.Code)
	assert.Contains(t, rec.Body.String(), `http.StripPrefix(\"/ops\", ...)`)
	rec = f.serve(http.MethodGet, "/nothing")
	require.Equal(t, http.StatusNotFound, rec.Code)
	assert.NotContains(t, rec.Body.String(), "StripPrefix", "a path that is no endpoint under any prefix")
}

// trace drives one breaker through trip, probe and recovery: three events.
func trace(t *testing.T, f *fixture) {
	t.Helper()
	b := f.reg.Breaker(runtime.Config{Name: "tdx", FailureThreshold: 2, ResetTimeout: 30 * time.Second})
	fail(t, b, 2, "connection\n  refused")
	f.clock.Add(30 * time.Second)
	require.Equal(t, runtime.HalfOpen, b.State())
	f.clock.Add(time.Second)
	succeed(t, b)
	require.Equal(t, runtime.Closed, b.State())
}

func TestEvents(t *testing.T) {
	f := newFixture(t)
	trace(t, f)

	rec := f.serve(http.MethodGet, "/health/degradation-events")
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	assertCommonHeaders(t, rec)
	assert.Equal(t, "application/json; charset=utf-8", rec.Header().Get("Content-Type"))
	assert.JSONEq(t, `[
		{"timestamp": "2026-10-06T09:30:31Z", "source": "tdx", "from_state": "HALF_OPEN", "to_state": "CLOSED",
		 "reason": "half-open probe succeeded (1/1)"},
		{"timestamp": "2026-10-06T09:30:30Z", "source": "tdx", "from_state": "OPEN", "to_state": "HALF_OPEN",
		 "reason": "reset 30s elapsed, probing"},
		{"timestamp": "2026-10-06T09:30:00Z", "source": "tdx", "from_state": "CLOSED", "to_state": "OPEN",
		 "reason": "connection refused"}
	]`, rec.Body.String())

	// The wire form decodes into runtime.Event as it is.
	var evs []runtime.Event
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &evs))
	require.Len(t, evs, 3)
	assert.True(t, evs[2].Time.Equal(start.Truncate(time.Second)))
	assert.Equal(t, runtime.Open, evs[2].To)
}

func TestEventsEmpty(t *testing.T) {
	f := newFixture(t)
	rec := f.serve(http.MethodGet, "/health/degradation-events")
	require.Equal(t, http.StatusOK, rec.Code)
	assert.JSONEq(t, `[]`, rec.Body.String())
}

func TestEventsLimit(t *testing.T) {
	f := newFixture(t)
	// 60 events: 30 trips and 30 probes, alternately (closing needs a
	// success, reopening needs none).
	b := f.reg.Breaker(runtime.Config{Name: "eastmoney", FailureThreshold: 1, ResetTimeout: time.Second})
	fail(t, b, 1, "trip")
	for range 29 {
		f.clock.Add(time.Second)
		require.Equal(t, runtime.HalfOpen, b.State())
		fail(t, b, 1, "again")
	}
	f.clock.Add(time.Second)
	require.Equal(t, runtime.HalfOpen, b.State())
	require.Len(t, f.reg.Events(100), 60)

	for _, tc := range []struct {
		query string
		want  int
	}{
		{"", 50},
		{"?limit=0", 50},
		{"?limit=1", 1},
		{"?limit=%2B7", 7},
		{"?limit=007", 7},
		{"?limit=60", 60},
		{"?limit=1000", 60},
		{"?limit=99999999999999999999999", 60},
		{"?_=1733312345&limit=2", 2}, // a cache buster is let through
	} {
		t.Run(tc.query, func(t *testing.T) {
			rec := f.serve(http.MethodGet, "/health/degradation-events"+tc.query)
			require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
			var evs []runtime.Event
			require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &evs))
			require.Len(t, evs, tc.want)
			assert.Equal(t, runtime.HalfOpen, evs[0].To, "newest first")
		})
	}
}

func TestEventsTimestampPrecision(t *testing.T) {
	f := newFixture(t)
	fail(t, f.reg.Breaker(runtime.Config{Name: "x", FailureThreshold: 1}), 1, "boom")
	rec := f.serve(http.MethodGet, "/health/degradation-events?limit=1")
	require.Equal(t, http.StatusOK, rec.Code)
	var raw []map[string]any
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &raw))
	require.Len(t, raw, 1)
	assert.Len(t, raw[0], 5, "exactly the five SPEC fields: %v", raw[0])
	ts, ok := raw[0]["timestamp"].(string)
	require.True(t, ok)
	assert.Equal(t, "2026-10-06T09:30:00Z", ts, "RFC 3339, second precision, UTC")
	_, err := time.Parse(time.RFC3339, ts)
	assert.NoError(t, err)
}

func TestBadInput(t *testing.T) {
	f := newFixture(t)
	type bad struct {
		method, target string
		status         int
		mention        string // the error message names it
	}
	cases := []bad{
		{"GET", "/health/degradation-events?limit=ten", 400, `"ten"`},
		{"GET", "/health/degradation-events?limit=-1", 400, "negative"},
		{"GET", "/health/degradation-events?limit=-99999999999999999999", 400, "negative"},
		{"GET", "/health/degradation-events?limit=1.5", 400, `"1.5"`},
		{"GET", "/health/degradation-events?limit=", 400, `""`},
		{"GET", "/health/degradation-events?limit=0x10", 400, `"0x10"`},
		{"GET", "/health/degradation-events?limit=%201", 400, `" 1"`},
		{"GET", "/health/degradation-events?limit=1&limit=2", 400, "2 times"},
		{"GET", "/health/degradation-events?limit=%zz", 400, "malformed query"},
		{"GET", "/health/datasources?%zz", 400, "malformed query"},
		{"GET", "/health/?a=%", 400, "malformed query"},
		// An unknown parameter would answer as though nothing were asked.
		{"GET", "/health/degradation-events?other=x&limit=2", 400, `unknown query parameter "other"; /health/degradation-events takes limit, since, source and page`},
		{"GET", "/health/degradation-events?sources=a", 400, "(did you mean source?)"},
		{"GET", "/health/degradation-events?limt=5", 400, "(did you mean limit?)"},
		{"GET", "/health/degradation-events?limti=5", 400, "(did you mean limit?)"},
		{"GET", "/health/datasources?Page=2", 400, "(did you mean page?)"},
		{"GET", "/health/datasources?q=a&zz=1&b=2", 400, `unknown query parameter "b"; /health/datasources takes page, q and family`},
		{"GET", "/health/?family=quotes", 400, `unknown query parameter "family"; /health/ takes page and q`},
		{"GET", "/health?x=1", 400, `unknown query parameter "x"; /health takes page and q`}, // not redirected to a 400
		{"GET", "/health/nope", 404, "/health/nope"},
		{"GET", "/health/datasources/", 404, "/health/datasources/"},
		{"GET", "/health/datasources/x", 404, "/health/datasources/x"},
		{"GET", "/health/degradation-events/", 404, "/health/degradation-events/"},
		{"GET", "/healthz", 404, "/healthz"},
		{"GET", "/", 404, `"/"`},
		{"GET", "/health/DATASOURCES", 404, "DATASOURCES"},
		{"POST", "/health/nope", 404, "/health/nope"},
	}
	for _, path := range []string{"/health/datasources", "/health/degradation-events", "/health/", "/health"} {
		for _, m := range []string{"POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE", "CONNECT", "BREW"} {
			cases = append(cases, bad{m, path, 405, m})
		}
	}
	for _, tc := range cases {
		t.Run(tc.method+" "+tc.target, func(t *testing.T) {
			rec := f.serve(tc.method, tc.target)
			require.Equal(t, tc.status, rec.Code, rec.Body.String())
			assertCommonHeaders(t, rec)
			assert.Equal(t, "application/json; charset=utf-8", rec.Header().Get("Content-Type"))
			var body map[string]string
			require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &body), rec.Body.String())
			assert.Len(t, body, 1, "only the error field")
			assert.Contains(t, body["error"], tc.mention)
			if tc.status == http.StatusMethodNotAllowed {
				assert.Equal(t, "GET, HEAD", rec.Header().Get("Allow"))
			}
		})
	}
}

func TestHead(t *testing.T) {
	f := newFixture(t)
	trace(t, f)
	for _, target := range []string{
		"/health/datasources",
		"/health/degradation-events?limit=2",
		"/health/",
		"/health/degradation-events?limit=x", // errors too: headers only
	} {
		t.Run(target, func(t *testing.T) {
			get := f.serve(http.MethodGet, target)
			head := f.serve(http.MethodHead, target)
			assert.Equal(t, get.Code, head.Code)
			assert.Empty(t, head.Body.String())
			assert.Equal(t, get.Header().Get("Content-Type"), head.Header().Get("Content-Type"))
			assert.Equal(t, strconv.Itoa(get.Body.Len()), head.Header().Get("Content-Length"))
			assert.Equal(t, "no-store", head.Header().Get("Cache-Control"))
		})
	}
}

func TestRedirect(t *testing.T) {
	f := newFixture(t)
	rec := f.serve(http.MethodGet, "/health")
	assert.Equal(t, http.StatusMovedPermanently, rec.Code)
	assert.Equal(t, "health/", rec.Header().Get("Location"), "relative, so a prefix survives")
	assert.Equal(t, "no-store", rec.Header().Get("Cache-Control"))

	rec = f.serve(http.MethodGet, "/health?q=tdx&page=2")
	assert.Equal(t, "health/?q=tdx&page=2", rec.Header().Get("Location"), "the query kept")
}

func TestMountedUnderPrefix(t *testing.T) {
	f := newFixture(t)
	trace(t, f)
	mux := http.NewServeMux()
	mux.Handle("/ops/", http.StripPrefix("/ops", f.h))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	get := func(path string) (*http.Response, string) {
		t.Helper()
		res, err := srv.Client().Get(srv.URL + path)
		require.NoError(t, err)
		defer res.Body.Close()
		body, err := io.ReadAll(res.Body)
		require.NoError(t, err)
		return res, string(body)
	}

	res, body := get("/ops/health/datasources")
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	assert.Contains(t, body, `"name": "tdx"`)

	res, body = get("/ops/health/degradation-events?limit=1")
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	assert.Contains(t, body, `"to_state": "CLOSED"`)

	res, body = get("/ops/health")
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	assert.Equal(t, "/ops/health/", res.Request.URL.Path, "the redirect keeps the prefix")
	assert.Contains(t, body, "<!DOCTYPE html>")

	res, body = get("/ops/health/nope")
	assert.Equal(t, http.StatusNotFound, res.StatusCode)
	assert.Contains(t, body, `"error"`)
}

func TestNilRegistryIsDefault(t *testing.T) {
	h := httphealth.New(nil, nil) // a nil option is ignored too
	for _, target := range []string{"/health/datasources", "/health/degradation-events", "/health/"} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, target, nil))
		assert.Equal(t, http.StatusOK, rec.Code, target)
	}
	name := "httphealth-test-default"
	runtime.Default().Breaker(runtime.Config{Name: name})
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/health/datasources", nil))
	assert.Contains(t, rec.Body.String(), name)
}

func TestNoPanics(t *testing.T) {
	f := newFixture(t)
	assert.NotPanics(t, func() {
		rec := httptest.NewRecorder()
		f.h.ServeHTTP(rec, nil)
		assert.Equal(t, http.StatusBadRequest, rec.Code)
	})
	assert.NotPanics(t, func() {
		rec := httptest.NewRecorder()
		f.h.ServeHTTP(rec, &http.Request{Method: http.MethodGet})
		assert.Equal(t, http.StatusBadRequest, rec.Code)
	})
	assert.NotPanics(t, func() {
		// Options with zero values keep the defaults.
		h := httphealth.New(f.reg, httphealth.WithClock(nil), httphealth.WithRefresh(0),
			httphealth.WithRefresh(-time.Second), httphealth.WithTitle(""), httphealth.WithDisplayName("", "x"),
			httphealth.WithDisplayName("x", ""))
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/health/", nil))
		assert.Equal(t, http.StatusOK, rec.Code)
		assert.Contains(t, rec.Body.String(), "<h1>"+httphealth.DefaultTitle+"</h1>")
		assert.Contains(t, rec.Body.String(), "Refreshes every 5 s.")
	})
}

// TestConcurrent serves every endpoint while breakers move, for the race
// detector.
func TestConcurrent(t *testing.T) {
	f := newFixture(t)
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Go(func() {
			b := f.reg.Breaker(runtime.Config{Name: fmt.Sprintf("src%d", i), FailureThreshold: 1, ResetTimeout: time.Second})
			for range 50 {
				_ = b.Do(context.Background(), func(context.Context) error { return errors.New("x") })
				f.clock.Add(time.Second)
				_ = b.Do(context.Background(), func(context.Context) error { return nil })
			}
		})
	}
	for range 4 {
		wg.Go(func() {
			for _, target := range strings.Fields("/health/datasources /health/degradation-events?limit=100 /health/") {
				for range 10 {
					rec := f.serve(http.MethodGet, target)
					assert.Equal(t, http.StatusOK, rec.Code)
				}
			}
		})
	}
	wg.Wait()
}

func TestZeroHandler(t *testing.T) {
	var h httphealth.Handler
	for _, target := range []string{"/health/datasources", "/health/degradation-events", "/health/"} {
		rec := httptest.NewRecorder()
		assert.NotPanics(t, func() { h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, target, nil)) })
		assert.Equal(t, http.StatusOK, rec.Code, target)
	}
}

// manyEvents records n events (n even) on a registry that keeps capacity:
// trips and failed probes of one breaker, alternately.
func manyEvents(t *testing.T, capacity, n int, opts ...httphealth.Option) *fixture {
	t.Helper()
	clock := newFakeClock(start)
	reg := runtime.NewRegistry(runtime.WithClock(clock), runtime.WithLogger(slog.New(slog.DiscardHandler)),
		runtime.WithEventCapacity(capacity))
	b := reg.Breaker(runtime.Config{Name: "eastmoney", FailureThreshold: 1, ResetTimeout: time.Second})
	fail(t, b, 1, "trip")
	for range n/2 - 1 {
		clock.Add(time.Second)
		require.Equal(t, runtime.HalfOpen, b.State())
		fail(t, b, 1, "again: the upstream answered 502 Bad Gateway")
	}
	clock.Add(time.Second)
	require.Equal(t, runtime.HalfOpen, b.State())
	require.Len(t, reg.Events(capacity), min(n, capacity))
	opts = append([]httphealth.Option{httphealth.WithClock(clock)}, opts...)
	return &fixture{clock: clock, reg: reg, h: httphealth.New(reg, opts...)}
}

func TestEventsMaxLimit(t *testing.T) {
	f := manyEvents(t, 2000, 1200)
	for _, tc := range []struct {
		h     *httphealth.Handler
		query string
		want  int
	}{
		{f.h, "", 50},
		{f.h, "?limit=1100", httphealth.DefaultMaxLimit},
		{f.h, "?limit=999999999", httphealth.DefaultMaxLimit},
		{httphealth.New(f.reg, httphealth.WithMaxLimit(120)), "?limit=999999999", 120},
		{httphealth.New(f.reg, httphealth.WithMaxLimit(120)), "?limit=100", 100},
		{httphealth.New(f.reg, httphealth.WithMaxLimit(10)), "", 10},
		{httphealth.New(f.reg, httphealth.WithMaxLimit(0)), "?limit=1100", httphealth.DefaultMaxLimit},
		{httphealth.New(f.reg, httphealth.WithMaxLimit(5000)), "?limit=1100", 1100},
	} {
		rec := httptest.NewRecorder()
		tc.h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/health/degradation-events"+tc.query, nil))
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		var evs []runtime.Event
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &evs))
		assert.Len(t, evs, tc.want, tc.query)
	}
}

// TestEventsStreamed: a long answer goes out while it is encoded, without
// a Content-Length, in the same layout as a short one.
func TestEventsStreamed(t *testing.T) {
	f := manyEvents(t, 2000, 1200)
	srv := httptest.NewServer(f.h)
	t.Cleanup(srv.Close)

	res, err := srv.Client().Get(srv.URL + "/health/degradation-events?limit=1000")
	require.NoError(t, err)
	body, err := io.ReadAll(res.Body)
	require.NoError(t, res.Body.Close())
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, res.StatusCode)
	assert.Equal(t, int64(-1), res.ContentLength, "streamed: no length ahead")
	assert.Equal(t, []string{"chunked"}, res.TransferEncoding)
	assert.Equal(t, "application/json; charset=utf-8", res.Header.Get("Content-Type"))
	assert.Equal(t, "no-store", res.Header.Get("Cache-Control"))

	var evs []json.RawMessage
	require.NoError(t, json.Unmarshal(body, &evs))
	require.Len(t, evs, 1000)
	want, err := json.MarshalIndent(evs, "", "  ")
	require.NoError(t, err)
	assert.Equal(t, string(want)+"\n", string(body), "the layout of a buffered answer")

	head, err := srv.Client().Head(srv.URL + "/health/degradation-events?limit=1000")
	require.NoError(t, err)
	require.NoError(t, head.Body.Close())
	assert.Equal(t, int64(len(body)), head.ContentLength, "HEAD says how long GET's answer is")
}

// TestUnknownOneLetterParameter: a one-letter parameter is one edit from
// any other, so ?x=1 was asked "did you mean q?".
func TestUnknownOneLetterParameter(t *testing.T) {
	f := newFixture(t)
	rec := f.serve(http.MethodGet, "/health/datasources?x=1")
	require.Equal(t, http.StatusBadRequest, rec.Code)
	assert.Contains(t, rec.Body.String(), `unknown query parameter \"x\"; /health/datasources takes page, q and family`)
	assert.NotContains(t, rec.Body.String(), "did you mean")
	rec = f.serve(http.MethodGet, "/health/datasources?Q=1")
	assert.Contains(t, rec.Body.String(), "did you mean q?", "a change of case still is")
}
