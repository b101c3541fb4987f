package prometheus_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"strings"

	"github.com/breakergen/breakergen/exporters/prometheus"
	"github.com/breakergen/breakergen/runtime"
	prom "github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

func ExampleNewCollector() {
	reg := runtime.NewRegistry(runtime.WithoutEnv(), runtime.WithLogger(slog.New(slog.DiscardHandler)))

	r := prom.NewRegistry()
	r.MustRegister(prometheus.NewCollector(reg))
	metrics := promhttp.HandlerFor(r, promhttp.HandlerOpts{})
	// http.Handle("/metrics", metrics)

	// A breaker created after the registration, which trips.
	tdx := reg.Breaker(runtime.Config{Name: "tdx", FailureThreshold: 1})
	_ = tdx.Do(context.Background(), func(context.Context) error { return errors.New("down") })

	rec := httptest.NewRecorder()
	metrics.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	for _, line := range strings.Split(rec.Body.String(), "\n") {
		if strings.HasPrefix(line, "breakergen_breaker_state{") || strings.HasPrefix(line, "breakergen_breaker_transitions_total{") {
			fmt.Println(line)
		}
	}
	// Output:
	// breakergen_breaker_state{breaker="tdx",state="closed"} 0
	// breakergen_breaker_state{breaker="tdx",state="half_open"} 0
	// breakergen_breaker_state{breaker="tdx",state="open"} 1
	// breakergen_breaker_transitions_total{breaker="tdx",from="closed",to="open"} 1
	// breakergen_breaker_transitions_total{breaker="tdx",from="half_open",to="closed"} 0
	// breakergen_breaker_transitions_total{breaker="tdx",from="half_open",to="open"} 0
	// breakergen_breaker_transitions_total{breaker="tdx",from="open",to="half_open"} 0
}
