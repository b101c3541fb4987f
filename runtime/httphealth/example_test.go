package httphealth_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"time"

	"github.com/breakergen/breakergen/runtime"
	"github.com/breakergen/breakergen/runtime/httphealth"
)

// stoppedClock reads 2026-10-06 09:30:00 UTC for ever, so that the
// examples print the same times on every run. Real programs leave the
// clock alone.
type stoppedClock struct{}

func (stoppedClock) Now() time.Time                                { return time.Date(2026, 10, 6, 9, 30, 0, 0, time.UTC) }
func (stoppedClock) AfterFunc(time.Duration, func()) runtime.Timer { return idleTimer{} }

// Mount the handler under a prefix of your own with http.StripPrefix;
// the dashboard is then at /ops/health/.
func Example() {
	reg := runtime.NewRegistry(runtime.WithClock(stoppedClock{}), runtime.WithLogger(slog.New(slog.DiscardHandler)))
	tdx := reg.Breaker(runtime.Config{Name: "tdx", FailureThreshold: 1})
	_ = tdx.Do(context.Background(), func(context.Context) error { return errors.New("connection refused") })

	mux := http.NewServeMux()
	mux.Handle("/ops/", http.StripPrefix("/ops", httphealth.New(reg,
		httphealth.WithDisplayName("tdx", "通达信 TDX"))))
	srv := httptest.NewServer(mux)
	defer srv.Close()

	for _, path := range []string{
		"/ops/health/degradation-events?limit=10",
		"/ops/health/degradation-events?limit=ten",
	} {
		res, err := http.Get(srv.URL + path)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(res.Status, res.Header.Get("Cache-Control"))
		_, _ = io.Copy(os.Stdout, res.Body)
		res.Body.Close()
	}
	// Output:
	// 200 OK no-store
	// [
	//   {
	//     "timestamp": "2026-10-06T09:30:00Z",
	//     "source": "tdx",
	//     "from_state": "CLOSED",
	//     "to_state": "OPEN",
	//     "reason": "connection refused"
	//   }
	// ]
	// 400 Bad Request no-store
	// {
	//   "error": "limit \"ten\" is not a whole number"
	// }
}

// GET /health/datasources answers with the registry's runtime.Health.
func ExampleNew() {
	reg := runtime.NewRegistry(runtime.WithClock(stoppedClock{}), runtime.WithLogger(slog.New(slog.DiscardHandler)))
	reg.Breaker(runtime.Config{Name: "tencent"})
	h := httphealth.New(reg)

	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/health/datasources", nil))
	fmt.Println(rec.Code, rec.Header().Get("Content-Type"))
	fmt.Print(rec.Body)
	// Output:
	// 200 application/json; charset=utf-8
	// {
	//   "status": "ok",
	//   "breakers": [
	//     {
	//       "name": "tencent",
	//       "state": "CLOSED",
	//       "failure_threshold": 5,
	//       "reset_seconds": 30,
	//       "failures": 0,
	//       "ignored": 0,
	//       "rate_limited": 0,
	//       "state_changes": 0,
	//       "consecutive_failures": 0,
	//       "consecutive_successes": 0,
	//       "probes_in_flight": 0,
	//       "counted": false,
	//       "status": "ok"
	//     }
	//   ]
	// }
}

// Display names make the dashboard readable: a name registered for
// "tencent" also names "fallback:tencent" and "tencent_kline". The JSON
// endpoints keep the breakers' own names.
func ExampleWithDisplayName() {
	reg := runtime.NewRegistry()
	reg.Breaker(runtime.Config{Name: "eastmoney"})
	reg.Breaker(runtime.Config{Name: "fallback:tencent_kline"})
	h := httphealth.New(reg,
		httphealth.WithDisplayName("eastmoney", "东方财富 East Money"),
		httphealth.WithDisplayName("tencent", "腾讯行情 Tencent"),
		httphealth.WithRefresh(10*time.Second),
		httphealth.WithTitle("数据可信度中心 Data trust"),
	)
	mux := http.NewServeMux()
	mux.Handle("/health/", h) // the dashboard is at /health/
	log.Fatal(http.ListenAndServe("localhost:8080", mux))
}
