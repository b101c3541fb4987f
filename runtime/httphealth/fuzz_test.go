package httphealth_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/breakergen/breakergen/runtime"
	"github.com/breakergen/breakergen/runtime/httphealth"
)

// FuzzHandler sends the handler requests with any method, path and query:
// none may panic or get a 5xx, and every error answer is a JSON object with
// an error. Its seeds run with every go test; to search further, run
//
//	go test -run '^$' -fuzz '^FuzzHandler$' -fuzztime 1m ./runtime/httphealth/
func FuzzHandler(f *testing.F) {
	clock := newFakeClock(start)
	reg := runtime.NewRegistry(runtime.WithClock(clock), runtime.WithLogger(slog.New(slog.DiscardHandler)))
	for _, name := range []string{"eastmoney", "fallback:tencent_kline", "<b>tdx</b>"} {
		b := reg.Breaker(runtime.Config{Name: name, FailureThreshold: 1, ResetTimeout: time.Minute})
		_ = b.Do(context.Background(), func(context.Context) error {
			return errors.New("Get \"https://h/q?token=SECRET\": \x1b[31mEOF")
		})
	}
	reg.Breaker(runtime.Config{Name: "tencent"})
	h := httphealth.New(reg, httphealth.WithClock(clock), httphealth.WithDisplayName("tencent", "腾讯行情"))

	for _, seed := range []struct{ method, path, query string }{
		{"GET", "/health/", ""},
		{"GET", "/health/", "page=2&q=east"},
		{"HEAD", "/health/", "q=%E8%85%BE"},
		{"GET", "/health", "x=1"},
		{"GET", "/health/datasources", ""},
		{"GET", "/health/datasources", "page=99999999999999999999&q="},
		{"GET", "/health/datasources", "page=-1"},
		{"GET", "/health/degradation-events", "limit=999999999"},
		{"HEAD", "/health/degradation-events", "limit=2&limit=3"},
		{"GET", "/health/degradation-events", "limit=%zz"},
		{"GET", "/health/degradation-events", "since=2026-10-06T09:30:00Z&source=eastmoney&source=tencent&limit=1000"},
		{"GET", "/health/degradation-events", "since=9999-99-99T99:99:99Z&source="},
		{"GET", "/health/degradation-events", "page=99999999999999999999&limit=99999999999999999999&source=tencent"},
		{"GET", "/health/degradation-events", "page=2&limit=1"},
		{"HEAD", "/health/degradation-events", "source=%3Cb%3Etdx%3C%2Fb%3E&since=2026-10-06T17:30:00.5%2B08:00"},
		{"POST", "/health/datasources", ""},
		{"", "", ""},
		{"BREW", "/health/../health/", ";;&&=="},
		{"GET", "/health/\x00", "q=\xff"},
	} {
		f.Add(seed.method, seed.path, seed.query)
	}
	f.Fuzz(func(t *testing.T, method, path, query string) {
		r := &http.Request{
			Method: method,
			URL:    &url.URL{Path: path, RawQuery: query},
			Header: http.Header{},
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		if rec.Code >= 500 {
			t.Fatalf("%q %q ?%q: %d %s", method, path, query, rec.Code, rec.Body)
		}
		if rec.Code >= 400 && method != http.MethodHead {
			var body map[string]string
			if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || body["error"] == "" {
				t.Fatalf("%q %q ?%q: %d with no JSON error: %q", method, path, query, rec.Code, rec.Body)
			}
		}
		if rec.Code == http.StatusOK && strings.Contains(rec.Body.String(), "SECRET") {
			t.Fatalf("%q %q ?%q: a credential in the answer", method, path, query)
		}
	})
}
