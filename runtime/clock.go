package runtime

import "time"

// Clock is the source of time for a [Registry] and everything it creates.
// The default reads the real clock and uses the standard library's timers,
// which also makes the runtime work inside a testing/synctest bubble.
// Tests that want to step time by hand pass their own through [WithClock].
//
// Implementations must be safe for concurrent use.
type Clock interface {
	// Now returns the current time.
	Now() time.Time
	// AfterFunc calls f in its own goroutine once d has passed, unless the
	// returned Timer is stopped first.
	AfterFunc(d time.Duration, f func()) Timer
}

// Timer is a pending call made by [Clock.AfterFunc].
type Timer interface {
	// Stop prevents the call if it has not run yet, and reports whether it
	// did so.
	Stop() bool
}

type realClock struct{}

func (realClock) Now() time.Time                            { return time.Now() }
func (realClock) AfterFunc(d time.Duration, f func()) Timer { return time.AfterFunc(d, f) }
