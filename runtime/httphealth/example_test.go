package httphealth_test

import (
	"context"
	"crypto/subtle"
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

// GET /health/datasources answers with the registry's runtime.Health; a
// field that does not apply is left out (docs/health.md lists them all).
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
	//       "rejections": 0,
	//       "state_changes": 0,
	//       "consecutive_failures": 0,
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

	// A server with every timeout set: see the package doc, "Serving".
	srv := &http.Server{
		Addr:              "localhost:8080",
		Handler:           mux,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       10 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       2 * time.Minute,
	}
	log.Fatal(srv.ListenAndServe())
}

// basicAuth lets through the requests that carry user and pass, compared
// in constant time, and asks the others for them.
func basicAuth(user, pass string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, p, ok := r.BasicAuth()
		if !ok || subtle.ConstantTimeCompare([]byte(u+":"+p), []byte(user+":"+pass)) != 1 {
			w.Header().Set("WWW-Authenticate", `Basic realm="health", charset="UTF-8"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// The handler authenticates no one: put a middleware of your own in front
// of it, and serve it with timeouts. The dashboard's refreshes are
// same-origin requests, so the browser sends the Basic credentials with
// them too.
func Example_authentication() {
	reg := runtime.NewRegistry(runtime.WithClock(stoppedClock{}), runtime.WithLogger(slog.New(slog.DiscardHandler)))
	reg.Breaker(runtime.Config{Name: "tencent"})

	mux := http.NewServeMux()
	mux.Handle("/ops/", basicAuth("ops", "correct horse", http.StripPrefix("/ops", httphealth.New(reg))))
	srv := httptest.NewUnstartedServer(mux)
	srv.Config.ReadHeaderTimeout = 5 * time.Second
	srv.Config.ReadTimeout = 10 * time.Second
	srv.Config.WriteTimeout = 30 * time.Second
	srv.Config.IdleTimeout = 2 * time.Minute
	srv.Start()
	defer srv.Close()

	for _, pass := range []string{"", "wrong", "correct horse"} {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+"/ops/health/datasources?page=1", nil)
		if pass != "" {
			req.SetBasicAuth("ops", pass)
		}
		res, err := srv.Client().Do(req)
		if err != nil {
			fmt.Println(err)
			return
		}
		res.Body.Close()
		fmt.Println(res.Status, res.Header.Get("WWW-Authenticate"))
	}
	// Output:
	// 401 Unauthorized Basic realm="health", charset="UTF-8"
	// 401 Unauthorized Basic realm="health", charset="UTF-8"
	// 200 OK
}
