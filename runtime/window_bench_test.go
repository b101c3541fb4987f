package runtime_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/breakergen/breakergen/runtime"
)

// windowBenchCases are the breakers of the window benchmarks, each timed
// through Acquire and Release. "count-dirty" fails one call in ten, so its
// window never turns clean and every call is recorded (FailureRate 1 keeps
// it from tripping).
var windowBenchCases = []struct {
	name    string
	cfg     runtime.Config
	failing int // every failing-th call fails; 0 for none
}{
	{"none", runtime.Config{Name: "none", FailureThreshold: 1 << 30}, 0},
	{"count-clean", runtime.Config{Name: "clean", WindowCalls: 100}, 0},
	{"count-dirty", runtime.Config{Name: "dirty", WindowCalls: 100, FailureRate: 1}, 10},
	{"time", runtime.Config{Name: "time", WindowPeriod: time.Minute, FailureRate: 1}, 10},
	{"slow", runtime.Config{Name: "slow", WindowCalls: 100, SlowCall: time.Second, FailureRate: 1}, 10},
	{"inflight", runtime.Config{Name: "inflight", InFlight: time.Minute, FailureThreshold: 1 << 30}, 10},
}

func windowBenchBreaker(b *testing.B, cfg runtime.Config) *runtime.Breaker {
	reg := runtime.NewRegistry(runtime.WithoutEnv(), runtime.WithLogger(discardLogger()))
	br := reg.Breaker(cfg)
	for range 200 {
		_ = br.Do(context.Background(), func(context.Context) error { return nil })
	}
	return br
}

// BenchmarkWindow times one call (Acquire, then Release) per op, one call
// in ten failing where the case says so:
//
//	go test -run '^$' -bench 'BenchmarkWindow' -benchmem -count 6 -cpu 1,2 ./runtime/
func BenchmarkWindow(b *testing.B) {
	for _, c := range windowBenchCases {
		b.Run(c.name, func(b *testing.B) {
			br := windowBenchBreaker(b, c.cfg)
			ctx := context.Background()
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				tok, err := br.Acquire(ctx)
				if err != nil {
					b.Fatal(err)
				}
				var callErr error
				if i++; c.failing > 0 && i%c.failing == 0 {
					callErr = errDown
				}
				br.Release(tok, callErr)
			}
			if br.State() != runtime.Closed {
				b.Fatal("tripped")
			}
		})
	}
}

func BenchmarkWindowParallel(b *testing.B) {
	for _, c := range windowBenchCases {
		b.Run(c.name, func(b *testing.B) {
			br := windowBenchBreaker(b, c.cfg)
			var seed atomic.Int64
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				ctx := context.Background()
				i := int(seed.Add(1))
				for pb.Next() {
					tok, err := br.Acquire(ctx)
					if err != nil {
						continue
					}
					var callErr error
					if i++; c.failing > 0 && i%c.failing == 0 {
						callErr = errDown
					}
					br.Release(tok, callErr)
				}
			})
		})
	}
}
