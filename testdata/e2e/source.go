// Package e2e is the module the end-to-end test generates into: its
// interfaces are wrapped by breakergen and mocked by mockgen, and
// behaviour_test.go drives the wrappers through the mocks.
package e2e

import (
	"context"
	"errors"
)

//go:generate breakergen

// ErrNotFound is excluded: it counts as a success.
var ErrNotFound = errors.New("not found")

// Source is the primary data source.
//
//breaker:name=quotes threshold=3 reset=10s exclude=ErrNotFound
//breaker:name=slow methods=Slow timeout=50ms
//breaker:name=limited methods=Limited ratelimit=1/1 maxwait=10ms
type Source interface {
	Quote(ctx context.Context, code string) (float64, error)
	Log(ctx context.Context, format string, args ...any) error
	Boom(ctx context.Context) error
	Slow(ctx context.Context) error
	Limited(ctx context.Context) error
	//breaker:name=indep threshold=1
	Indep(ctx context.Context) error
	Sync(code string) (int, error)
	Name() string
}

// Mirror shares the breaker "quotes" with Source.
//
//breaker:name=quotes
type Mirror interface {
	Quote(ctx context.Context, code string) (float64, error)
}

// Upstream is a source whose calls are retried (SPEC section 5).
//
//breaker:name=retried threshold=10 reset=1m attempts=3 backoff=1s
//breaker:name=cooled methods=Cooled threshold=5 reset=30s attempts=3
//breaker:name=jittered methods=Jitter attempts=4 backoff=1s..3s
//breaker:name=budgeted methods=Budgeted attempts=5 budget=2
type Upstream interface {
	Fetch(ctx context.Context, code string) (string, error)
	Cooled(ctx context.Context) error
	Jitter(ctx context.Context) error
	Budgeted(ctx context.Context) (int, error)
	// Plain has no ctx: its tries use context.Background().
	Plain(code string) (string, error)
}

// Flow is a day's money flow; a zero Net is no data.
type Flow struct{ Net float64 }

func nonEmpty(f Flow) bool { return f.Net != 0 }

// Flows is served by a fallback chain (SPEC section 6): an empty answer is
// no data, and a valid one is kept for an hour.
//
//breaker:name=flows threshold=2 reset=1m valid=nonEmpty stale=1h chain
type Flows interface {
	Flow(ctx context.Context, code string) (Flow, error)
	//breaker:attempts=2 budget=2 backoff=1s stale=0
	Budgeted(ctx context.Context, code string) (Flow, error)
}

// Windowed trips on rates over a window and bounds its load (SPEC sections
// 8 and 9); the keys reach the breaker's runtime.Config.
//
//breaker:name=windowed window=100 failrate=25% minimum=10 slow=2s slowrate=80% inflight=1m concurrency=4 throttle=2
type Windowed interface {
	Get(ctx context.Context) error
}

// Prices is served by a hedged chain (SPEC section 9): a source that has
// not answered within 100ms is raced by the next, two extra at most.
//
//breaker:name=em threshold=1 reset=1m hedge=100ms hedges=2 chain
type Prices interface {
	Price(ctx context.Context, code string) (float64, error)
	Depth(ctx context.Context, code string) ([]float64, int, error)
}
