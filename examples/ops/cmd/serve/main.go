// Command serve is breakergen's market-data demo (see
// examples/marketdata/cmd/demo) with Prometheus metrics beside its
// dashboard: it plays the scenario, then serves the dashboard, the health
// JSON and /metrics until interrupted.
//
//	cd examples/ops && go run ./cmd/serve -serve 127.0.0.1:8080   (make serve)
//	curl -s http://127.0.0.1:8080/metrics | grep breakergen_
//
// /metrics is the exporters/prometheus collector of the demo's registry on
// a registry of its own (no Go runtime metrics), through promhttp. The
// flags are the demo's (-reset, -v, -serve); without -serve it only plays
// the scenario. The demo's registry does not count every call
// (runtime.WithCallCounts is off), so the calls_total series have no
// success outcome; refusals (outcome="rejected") are counted all the
// same, as a refusal costs no call anything. It serves with no
// authentication: give it a loopback address.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"syscall"

	"github.com/breakergen/breakergen/examples/marketdata/demo"
	"github.com/breakergen/breakergen/exporters/prometheus"
	"github.com/breakergen/breakergen/runtime"
	prom "github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := demo.Main(ctx, os.Args[1:], os.Stdout, os.Stderr, mountMetrics); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "serve:", err)
		}
		stop()
		os.Exit(2)
	}
}

// mountMetrics serves the breakers of reg as Prometheus metrics on
// GET /metrics.
func mountMetrics(mux *http.ServeMux, reg *runtime.Registry) {
	r := prom.NewRegistry()
	r.MustRegister(prometheus.NewCollector(reg))
	mux.Handle("GET /metrics", promhttp.HandlerFor(r, promhttp.HandlerOpts{}))
}
