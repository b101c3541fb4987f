package breakerimpl_test

import (
	"testing"

	"github.com/breakergen/breakergen/runtime"
	"github.com/breakergen/breakergen/runtime/breakerimpl"
)

// The success path of a route whose breaker has a bulkhead that is never
// full, or a throttle, beside BenchmarkRouteSuccess: what load control
// costs a call that it lets through.

func BenchmarkRouteSuccessConcurrency(b *testing.B) {
	q, _ := newGuarded(b, nil, breakerimpl.RouteConfig{Breaker: runtime.Config{Name: "c", Concurrency: 1 << 20}})
	benchCalls(b, q)
}

func BenchmarkRouteSuccessThrottle(b *testing.B) {
	q, _ := newGuarded(b, nil, breakerimpl.RouteConfig{Breaker: runtime.Config{Name: "t", Throttle: 2}})
	benchCalls(b, q)
}

func BenchmarkRouteSuccessConcurrencyParallel(b *testing.B) {
	q, _ := newGuarded(b, nil, breakerimpl.RouteConfig{Breaker: runtime.Config{Name: "c", Concurrency: 1 << 20}})
	benchParallel(b, q)
}

func BenchmarkRouteSuccessThrottleParallel(b *testing.B) {
	q, _ := newGuarded(b, nil, breakerimpl.RouteConfig{Breaker: runtime.Config{Name: "t", Throttle: 2}})
	benchParallel(b, q)
}
