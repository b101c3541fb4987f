package httphealth_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/breakergen/breakergen/runtime"
	"github.com/breakergen/breakergen/runtime/httphealth"
)

// manyBreakers is a handler over a registry of n breakers, one in ten of
// them OPEN for a long time, on a clock that moves only when told.
func manyBreakers(b *testing.B, n int) (http.Handler, *fakeClock) {
	b.Helper()
	clock := newFakeClock(start)
	reg := runtime.NewRegistry(runtime.WithClock(clock), runtime.WithLogger(slog.New(slog.DiscardHandler)))
	boom := errors.New("marketdata: 502 Bad Gateway")
	for i := range n {
		br := reg.Breaker(runtime.Config{Name: fmt.Sprintf("source%05d", i), FailureThreshold: 1, ResetTimeout: 10000 * time.Hour})
		if i%10 == 0 {
			_ = br.Do(context.Background(), func(context.Context) error { return boom })
		}
	}
	return httphealth.New(reg, httphealth.WithClock(clock)), clock
}

// BenchmarkDashboard measures GET /health/ at 10, 1,000 and 10,000
// breakers, one in ten of them OPEN, rendering the page for every request:
// the clock moves one refresh interval between requests. page-bytes is
// the size of the page.
func BenchmarkDashboard(b *testing.B) {
	benchmarkDashboard(b, httphealth.DefaultRefresh)
}

// BenchmarkDashboardCached is BenchmarkDashboard with every request within
// one refresh interval, as when many clients load the page at once.
func BenchmarkDashboardCached(b *testing.B) {
	benchmarkDashboard(b, 0)
}

func benchmarkDashboard(b *testing.B, step time.Duration) {
	for _, n := range []int{10, 1000, 10000} {
		b.Run(fmt.Sprintf("breakers=%d", n), func(b *testing.B) {
			h, clock := manyBreakers(b, n)
			req := httptest.NewRequest(http.MethodGet, "/health/", nil)
			var size int
			for b.Loop() {
				clock.Add(step)
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				if rec.Code != http.StatusOK {
					b.Fatalf("GET /health/: %d", rec.Code)
				}
				size = rec.Body.Len()
			}
			b.ReportMetric(float64(size), "page-bytes")
		})
	}
}

// discardWriter is a ResponseWriter that keeps nothing, so that the
// benchmark measures the handler and not a recorder's buffer.
type discardWriter struct {
	h http.Header
	n int
}

func (w *discardWriter) Header() http.Header         { return w.h }
func (w *discardWriter) WriteHeader(int)             {}
func (w *discardWriter) Write(p []byte) (int, error) { w.n += len(p); return len(p), nil }

// BenchmarkEventsAtCap measures GET /health/degradation-events with a
// huge limit on a registry that keeps 100,000 events.
func BenchmarkEventsAtCap(b *testing.B) {
	clock := newFakeClock(start)
	reg := runtime.NewRegistry(runtime.WithClock(clock), runtime.WithLogger(slog.New(slog.DiscardHandler)),
		runtime.WithEventCapacity(100000))
	br := reg.Breaker(runtime.Config{Name: "eastmoney", FailureThreshold: 1, ResetTimeout: time.Second})
	boom := errors.New(`Get "https://push2.eastmoney.com/api/qt/stock/get?secid=1.600000&token=SECRET": EOF`)
	// Each round but the first records two events: OPEN → HALF_OPEN as the
	// window elapses, HALF_OPEN → OPEN as the probe fails.
	for range 50001 {
		_ = br.Do(context.Background(), func(context.Context) error { return boom })
		clock.Add(time.Second)
		br.State() // makes the due move: this clock's timers never fire
	}
	if n := len(reg.Events(100000)); n != 100000 {
		b.Fatalf("%d events, want 100000", n)
	}
	h := httphealth.New(reg, httphealth.WithClock(clock))
	req := httptest.NewRequest(http.MethodGet, "/health/degradation-events?limit=999999999", nil)
	var size int
	for b.Loop() {
		w := &discardWriter{h: http.Header{}}
		h.ServeHTTP(w, req)
		size = w.n
	}
	b.ReportMetric(float64(size), "answer-bytes")
}

// BenchmarkBandEvents measures the request the dashboard's state bands
// make at every refresh: the last hour's events of one page of 50 breakers
// out of 1,000, from a log that keeps 100 events (the default) or 10,000.
func BenchmarkBandEvents(b *testing.B) {
	for _, capacity := range []int{100, 10000} {
		b.Run(fmt.Sprintf("capacity=%d", capacity), func(b *testing.B) {
			clock := newFakeClock(start)
			reg := runtime.NewRegistry(runtime.WithClock(clock), runtime.WithLogger(slog.New(slog.DiscardHandler)),
				runtime.WithEventCapacity(capacity))
			var brs []*runtime.Breaker
			for i := range 1000 {
				brs = append(brs, reg.Breaker(runtime.Config{Name: fmt.Sprintf("source%04d", i), FailureThreshold: 1, ResetTimeout: time.Second}))
			}
			boom := errors.New("marketdata: 502 Bad Gateway")
			// Each round records three events per breaker: a trip, a probe,
			// a recovery.
			for range max(1, capacity/3000+1) {
				for _, br := range brs {
					_ = br.Do(context.Background(), func(context.Context) error { return boom })
				}
				clock.Add(time.Second)
				for _, br := range brs {
					br.State()
					_ = br.Do(context.Background(), func(context.Context) error { return nil })
				}
			}
			q := url.Values{"limit": {"1000"}, "since": {clock.Now().Add(-time.Hour).Format(time.RFC3339Nano)}}
			for i := range httphealth.PageSize {
				q.Add("source", fmt.Sprintf("source%04d", 999-i*2))
			}
			h := httphealth.New(reg, httphealth.WithClock(clock))
			req := httptest.NewRequest(http.MethodGet, "/health/degradation-events?"+q.Encode(), nil)
			var size int
			for b.Loop() {
				w := &discardWriter{h: http.Header{}}
				h.ServeHTTP(w, req)
				size = w.n
			}
			b.ReportMetric(float64(size), "answer-bytes")
		})
	}
}

// BenchmarkFamilyPages measures the two paged answers of a registry of 10
// breakers and a family of 10,000 keys, one in ten of them OPEN: the
// breakers' page with the family's row (top), and a page of its keys
// (keys).
func BenchmarkFamilyPages(b *testing.B) {
	clock := newFakeClock(start)
	reg := runtime.NewRegistry(runtime.WithClock(clock), runtime.WithLogger(slog.New(slog.DiscardHandler)))
	for i := range 10 {
		reg.Breaker(runtime.Config{Name: fmt.Sprintf("source%02d", i)})
	}
	fam := reg.Family(runtime.Config{Name: "quote", FailureThreshold: 1, ResetTimeout: 10000 * time.Hour},
		runtime.FamilyConfig{Keys: 10000})
	boom := errors.New("symbol page broken")
	for i := range 10000 {
		br := fam.Breaker(fmt.Sprintf("k%05d", i))
		if i%10 == 0 {
			_ = br.Do(context.Background(), func(context.Context) error { return boom })
		}
	}
	h := httphealth.New(reg, httphealth.WithClock(clock))
	for _, c := range []struct{ name, query string }{{"top", "page=1"}, {"keys", "family=quote&page=2"}} {
		b.Run(c.name, func(b *testing.B) {
			req := httptest.NewRequest(http.MethodGet, "/health/datasources?"+c.query, nil)
			for b.Loop() {
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				if rec.Code != http.StatusOK {
					b.Fatalf("%s: %d", c.query, rec.Code)
				}
			}
		})
	}
}
