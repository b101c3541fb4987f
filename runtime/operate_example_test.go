package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/breakergen/breakergen/runtime"
)

// An operator cuts a provider off for its maintenance and lets it back:
// while ISOLATED every call is refused with the operator's reason.
func ExampleBreaker_Isolate() {
	reg := runtime.NewRegistry(runtime.WithoutEnv(), runtime.WithLogger(slog.New(slog.DiscardHandler)))
	b := reg.Breaker(runtime.Config{Name: "eastmoney"})

	b.Isolate("maintenance 14:00-14:30")
	err := b.Do(context.Background(), func(context.Context) error { return nil })
	fmt.Println(b.State(), errors.Is(err, runtime.ErrOpen), err)
	b.Resume("maintenance over")
	fmt.Println(b.State())
	for _, ev := range reg.Events(0) {
		fmt.Printf("%s → %s: %s\n", ev.From, ev.To, ev.Reason)
	}
	// Output:
	// ISOLATED true breaker eastmoney: isolated by operator: maintenance 14:00-14:30
	// CLOSED
	// ISOLATED → CLOSED: resumed by operator: maintenance over
	// CLOSED → ISOLATED: isolated by operator: maintenance 14:00-14:30
}

// Update tunes a live breaker: its state and counts stay, and one event
// says what changed.
func ExampleRegistry_Update() {
	reg := runtime.NewRegistry(runtime.WithoutEnv(), runtime.WithLogger(slog.New(slog.DiscardHandler)))
	reg.Breaker(runtime.Config{Name: "tencent", FailureThreshold: 3})

	err := reg.Update(runtime.Config{Name: "tencent", FailureThreshold: 8, ResetTimeout: time.Minute, ResetMax: 10 * time.Minute})
	fmt.Println(err, reg.Events(1)[0].Reason)
	err = reg.Update(runtime.Config{Name: "tencnet", FailureThreshold: 8})
	fmt.Println(err)
	// Output:
	// <nil> reconfigured: threshold 3→8, reset 30s→1m0s..10m0s
	// breaker: Update: Config 0 (Name "tencnet"): the registry has no breaker called "tencnet"
}
