package runtime_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/breakergen/breakergen/runtime"
)

// A breaker guards a hand-written call with Do; generated wrappers do the
// same through the allocation-free two-step API.
func ExampleBreaker_Do() {
	reg := runtime.NewRegistry(runtime.WithLogger(slog.New(slog.DiscardHandler)))
	b := reg.Breaker(runtime.Config{Name: "tdx", FailureThreshold: 2, ResetTimeout: 30 * time.Second})

	fetch := func(context.Context) error { return errors.New("connection reset by peer") }
	for range 3 {
		err := b.Do(context.Background(), fetch)
		fmt.Printf("%-5v %v\n", errors.Is(err, runtime.ErrOpen), b.State())
	}
	// Output:
	// false CLOSED
	// false OPEN
	// true  OPEN
}

// The two-step API: Acquire returns a small Token (or the rejection), and
// Release takes the Token and the call's error.
func ExampleBreaker_Acquire() {
	reg := runtime.NewRegistry(runtime.WithLogger(slog.New(slog.DiscardHandler)))
	b := reg.Breaker(runtime.Config{Name: "tencent"})

	ctx := context.Background()
	tok, err := b.Acquire(ctx)
	if err != nil {
		fmt.Println("rejected:", err)
		return
	}
	quote, err := 1712.5, error(nil) // the upstream call
	b.Release(tok, err)
	fmt.Println(quote, b.State())
	// Output: 1712.5 CLOSED
}

// Every transition lands in the registry's degradation log and reaches the
// state-change hooks.
func ExampleRegistry_Events() {
	reg := runtime.NewRegistry(
		runtime.WithLogger(slog.New(slog.DiscardHandler)),
		runtime.OnStateChange(func(ev runtime.Event) {
			fmt.Printf("hook: %s %s → %s\n", ev.Source, ev.From, ev.To)
		}),
	)
	b := reg.Breaker(runtime.Config{Name: "push2ex", FailureThreshold: 2})
	for range 2 {
		_ = b.Do(context.Background(), func(context.Context) error {
			return fmt.Errorf("GET /changes: %w", errors.New("503 Service Unavailable"))
		})
	}
	for _, ev := range reg.Events(10) {
		fmt.Printf("log: %s %s → %s: %s\n", ev.Source, ev.From, ev.To, ev.Reason)
	}
	// Output:
	// hook: push2ex CLOSED → OPEN
	// log: push2ex CLOSED → OPEN: GET /changes: 503 Service Unavailable
}

// Health reports a level per breaker, the worst one overall.
func ExampleRegistry_Health() {
	reg := runtime.NewRegistry(runtime.WithLogger(slog.New(slog.DiscardHandler)))
	reg.Breaker(runtime.Config{Name: "tencent"})
	em := reg.Breaker(runtime.Config{Name: "eastmoney", FailureThreshold: 1})
	_ = em.Do(context.Background(), func(context.Context) error { return errors.New("403 Forbidden") })

	h := reg.Health()
	fmt.Println("overall:", h.Status)
	for _, b := range h.Breakers {
		fmt.Printf("%-9s %-6s %s\n", b.Name, b.State, b.Status)
	}
	// Output:
	// overall: down
	// eastmoney OPEN   down
	// tencent   CLOSED ok
}

// Brief turns an error into one short line for logs and event reasons.
func ExampleBrief() {
	fmt.Println(runtime.Brief(fmt.Errorf("decode quote:\n\t%w", errors.New("unexpected end of JSON input"))))
	fmt.Println(runtime.Brief(&json.UnsupportedValueError{Str: "NaN"}))
	// Output:
	// decode quote: unexpected end of JSON input
	// json.UnsupportedValueError: json: unsupported value: NaN
}
