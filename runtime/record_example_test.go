package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/breakergen/breakergen/runtime"
)

// handClock is a clock that moves only when the example says.
type handClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *handClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *handClock) AfterFunc(d time.Duration, f func()) runtime.Timer { return time.AfterFunc(d, f) }

func (c *handClock) sleep(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// ExampleWithRecorder records a breaker's calls for `breakergen sim`: one
// line per call after the header (start and duration in ns, outcome,
// breaker), and the end line once the registry is closed.
func ExampleWithRecorder() {
	clock := &handClock{now: time.Date(2026, 3, 2, 9, 30, 0, 0, time.UTC)}
	reg := runtime.NewRegistry(runtime.WithoutEnv(), runtime.WithClock(clock),
		runtime.WithLogger(slog.New(slog.DiscardHandler)),
		runtime.WithRecorder(os.Stdout)) // a file, in production
	tdx := reg.Breaker(runtime.Config{Name: "tdx", FailureThreshold: 1})

	ctx := context.Background()
	upstream := func(d time.Duration, err error) func(context.Context) error {
		return func(context.Context) error { clock.sleep(d); return err }
	}
	_ = tdx.Do(ctx, upstream(20*time.Millisecond, nil))
	clock.sleep(time.Second)
	_ = tdx.Do(ctx, upstream(5*time.Millisecond, errors.New("HTTP 503"))) // trips
	_ = tdx.Do(ctx, upstream(0, nil))                                     // refused
	if err := reg.Close(); err != nil {                                   // writes what is queued, and the end line
		fmt.Println(err)
	}
	// Output:
	// breakergen-recording v1 start=2026-03-02T09:30:00Z unit=ns sample=1
	// 0 20000000 success tdx
	// 1020000000 5000000 failure tdx
	// 1025000000 0 rejected tdx
	// # end calls=3 dropped=0
}
