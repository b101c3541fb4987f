package otel_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/breakergen/breakergen/exporters/otel"
	"github.com/breakergen/breakergen/runtime"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

func ExampleRegister() {
	reg := runtime.NewRegistry(runtime.WithoutEnv(), runtime.WithLogger(slog.New(slog.DiscardHandler)))

	// In a service: the global provider (otel.GetMeterProvider()) with an
	// OTLP or Prometheus reader. Here a manual reader, to show the data.
	reader := sdkmetric.NewManualReader()
	meter := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)).Meter("github.com/breakergen/breakergen")
	if _, err := otel.Register(reg, meter); err != nil {
		panic(err)
	}

	tdx := reg.Breaker(runtime.Config{Name: "tdx", FailureThreshold: 1})
	_ = tdx.Do(context.Background(), func(context.Context) error { return errors.New("down") })

	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		panic(err)
	}
	for _, m := range rm.ScopeMetrics[0].Metrics {
		if g, ok := m.Data.(metricdata.Gauge[int64]); ok && m.Name == "breakergen.breaker.state" {
			for _, p := range g.DataPoints {
				state, _ := p.Attributes.Value("circuitbreaker.state")
				fmt.Println(m.Name, state.AsString(), p.Value)
			}
		}
	}
	// Unordered output:
	// breakergen.breaker.state closed 0
	// breakergen.breaker.state half_open 0
	// breakergen.breaker.state open 1
}
