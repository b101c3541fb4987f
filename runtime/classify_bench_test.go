package runtime_test

import (
	"context"
	"errors"
	"log/slog"
	"testing"

	"github.com/breakergen/breakergen/runtime"
)

// BenchmarkFailingCall is a failing Do on a CLOSED breaker that never
// trips, without a classifier and with one: what the guard against a
// panicking classifier costs the calls it covers (the failing calls of a
// breaker with a classifier), beside those it does not.
//
//	go test -run '^$' -bench FailingCall -count 6 ./runtime/
func BenchmarkFailingCall(b *testing.B) {
	down := errors.New("down")
	fail := func(context.Context, error) runtime.Outcome { return runtime.Failure }
	for _, c := range []struct {
		name string
		opts []runtime.Option
	}{
		{"default", nil},
		{"classifier", []runtime.Option{runtime.WithClassifier("f", fail)}},
	} {
		b.Run(c.name, func(b *testing.B) {
			opts := append([]runtime.Option{runtime.WithoutEnv(), runtime.WithLogger(slog.New(slog.DiscardHandler))}, c.opts...)
			br := runtime.NewRegistry(opts...).Breaker(runtime.Config{Name: "f", FailureThreshold: 1 << 30})
			ctx := context.Background()
			call := func(context.Context) error { return down }
			b.ReportAllocs()
			for b.Loop() {
				_ = br.Do(ctx, call)
			}
		})
	}
}
