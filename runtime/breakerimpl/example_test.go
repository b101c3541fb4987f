package breakerimpl_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/breakergen/breakergen/runtime"
	"github.com/breakergen/breakergen/runtime/breakerimpl"
)

// A route is what generated code calls: the breaker, then the limiter.
func ExampleRoute() {
	reg := runtime.NewRegistry(runtime.WithLogger(slog.New(slog.DiscardHandler)))
	rt := breakerimpl.NewRoute(reg, anyImpl, breakerimpl.RouteConfig{
		Breaker: runtime.Config{Name: "eastmoney", FailureThreshold: 5, ResetTimeout: 30 * time.Second},
		Rate:    1.5, Burst: 3, MaxWait: 100 * time.Millisecond,
	})
	search := func(ctx context.Context, q string) (hits int, err error) {
		call, err := rt.Enter(ctx)
		if err != nil {
			return 0, err
		}
		defer call.Exit(ctx, &err)
		err = breakerimpl.PanicGuard
		return len(q), nil // the upstream call
	}
	for range 4 {
		n, err := search(context.Background(), "茅台")
		fmt.Println(n, errors.Is(err, runtime.ErrRateLimited))
	}
	// Output:
	// 6 false
	// 6 false
	// 6 false
	// 0 true
}
