package runtime

import (
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/breakergen/breakergen/runtime/internal/core"
)

// Clock is the source of time for a [Registry] and everything it creates.
// The default reads the real clock and uses the standard library's timers,
// which also makes the runtime work inside a testing/synctest bubble.
// Tests that want to step time by hand pass their own through [WithClock].
// With the real clock a breaker records the time of each failure with one
// monotonic read (see [Stats].LastFailure); any other clock is read through
// Now.
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

// stamps turns the instants the hot paths record (the last failure, the
// last success) into words an atomic holds, 0 meaning never, and back.
//
// With the real clock an instant is taken as the time since an anchor on
// the monotonic clock: one monotonic read (time.Since) costs about half of
// time.Now on a virtual machine, and a failing call records its time on
// every call. The anchor is a wall-clock reading with its monotonic
// reading, taken when the breaker is created, so the time read back is that
// wall time plus the elapsed monotonic time: exact to the monotonic clock
// (within anchorSkew), and unmoved by a later step of the wall clock (as
// time.Time's own Sub and Since are); on Linux that clock stops while the
// machine is suspended. Inside a testing/synctest bubble the time package
// reads no monotonic clock and Since falls back to wall times, so a failure
// records the bubble's time wherever the breaker was created.
//
// With any other clock ([WithClock]) an instant is its Unix nanoseconds.
type stamps struct {
	clock  Clock
	mono   bool      // clock is the real clock: instants are offsets from anchor
	anchor time.Time // a nanosecond before creation, so every offset is > 0
}

func newStamps(clock Clock) stamps {
	_, mono := clock.(realClock)
	s := stamps{clock: clock, mono: mono}
	if mono {
		s.anchor = newAnchor().Add(-time.Nanosecond)
	}
	return s
}

// anchorSkew bounds how much earlier than its monotonic reading an anchor's
// wall-clock reading was taken: time.Now reads one after the other, and a
// thread descheduled in between would shift every time read back from the
// anchor by as long.
const anchorSkew = time.Microsecond

// newAnchor returns time.Now, taken so that its wall-clock reading is at
// most anchorSkew older than its monotonic one: when two readings are less
// than anchorSkew apart on the monotonic clock, the second's wall-clock
// reading lies between the first's monotonic reading and its own.
func newAnchor() time.Time {
	prev := time.Now()
	for range 8 {
		t := time.Now()
		if t.Sub(prev) < anchorSkew {
			return t
		}
		prev = t
	}
	return prev // a machine too busy to tell: as good as any
}

// now returns the current instant; it reads the clock once.
func (s *stamps) now() int64 {
	if s.mono {
		return int64(time.Since(s.anchor))
	}
	return s.clock.Now().UnixNano()
}

// time returns the instant n, the zero Time for 0, without a monotonic
// reading.
func (s *stamps) time(n int64) time.Time {
	switch {
	case n == 0:
		return time.Time{}
	case s.mono:
		return s.anchor.Add(time.Duration(n)).Round(0)
	}
	return time.Unix(0, n)
}

// putStamp stores instant n in *p, a breaker's last failure or last
// success, with a plain store: atomic.Int64's Store is an XCHG on amd64, a
// locked instruction (about 5 ns) on every failing call, and nothing here
// needs its order. Stats loads the word atomically; a word-sized aligned
// store is not torn (where 64 bits are not the machine's word the store is
// atomic), and concurrent calls storing their instants leave one of them,
// as atomic stores would. The race detector does not watch this function:
// its one conflicting access is that intended one.
//
//go:norace
func putStamp(p *atomic.Int64, n int64) {
	if core.Word64 {
		*(*int64)(unsafe.Pointer(p)) = n
		return
	}
	p.Store(n)
}
