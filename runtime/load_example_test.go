package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"time"

	"github.com/breakergen/breakergen/runtime"
)

// Concurrency makes a breaker a bulkhead: a call over the limit waits for
// a slot until its ctx ends, then is refused without reaching the
// upstream, and counts as neither success nor failure.
func ExampleConfig_concurrency() {
	reg := runtime.NewRegistry(runtime.WithoutEnv(), runtime.WithLogger(slog.New(slog.DiscardHandler)))
	b := reg.Breaker(runtime.Config{Name: "slow", Concurrency: 1})

	tok, _ := b.Acquire(context.Background()) // takes the one slot
	ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
	defer cancel()
	err := b.Do(ctx, func(context.Context) error { return nil })
	fmt.Println(err)
	fmt.Println(errors.Is(err, runtime.ErrBulkheadFull), errors.Is(err, context.DeadlineExceeded))
	st := b.Stats()
	fmt.Println(st.InFlight, st.Concurrency, st.BulkheadFull, st.Failures)
	b.Release(tok, nil)
	fmt.Println(b.Stats().InFlight)
	// Output:
	// breaker slow: bulkhead full, its one slot in use: context deadline exceeded
	// true true
	// 1 1 1 0
	// 0
}

// Throttle sheds load as the upstream accepts fewer calls: with K = 1,
// after one failure the next call is refused with probability
// (1 − 1·0) / (1 + 1) = 1/2; refused calls count as requests too, so the
// probability keeps rising until calls succeed again. WithRand pins the
// draws.
func ExampleWithRand() {
	reg := runtime.NewRegistry(runtime.WithoutEnv(), runtime.WithLogger(slog.New(slog.DiscardHandler)),
		runtime.WithRand(rand.New(rand.NewPCG(1, 2))))
	b := reg.Breaker(runtime.Config{Name: "flaky", Throttle: 1})

	fail := func(context.Context) error { return errors.New("503") }
	_ = b.Do(context.Background(), fail)
	fmt.Println(b.Stats().ThrottleProbability)
	for range 4 {
		err := b.Do(context.Background(), fail)
		fmt.Printf("%-5v %.3f\n", errors.Is(err, runtime.ErrThrottled), b.Stats().ThrottleProbability)
	}
	// Output:
	// 0.5
	// false 0.667
	// true  0.750
	// true  0.800
	// true  0.833
}
