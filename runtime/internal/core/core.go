// Package core is what package runtime and package breakerimpl share: the
// breaker's state word, the one call protocol (admission, outcome, the panic
// rule), the call records a ctx carries (budgets and provenance) and the
// wait on a clock.
//
// Package runtime owns the breakers; package breakerimpl, which generated
// code calls, reaches a *runtime.Breaker's internals through [BreakerOf],
// a function variable that package runtime sets in its init (the seam grpc
// keeps in its internal package). Nothing here is exported to users: an
// internal package can change with every release.
package core

import (
	"context"
	"errors"
	"sync/atomic"
	"time"
)

// The state word packs the state period (a counter bumped by every
// transition and reset) in its high 32 bits, and the counting flag and the
// state in its low bits, so that the hot paths decide with one load and one
// test that a call is a plain CLOSED one (word&FastMask == 0). The state
// takes three bits: CLOSED, HALF_OPEN, OPEN and the operator's modes
// ISOLATED and BYPASSED (SPEC §14), whose calls all leave the fast path
// (a mode costs the CLOSED success path nothing). An admission
// is the state word it was admitted in, plus, in bits 7-31, the probe's id
// for HALF_OPEN probes, or the tracking id of a CLOSED call that the
// breaker times (Config.SlowCall, Config.InFlight). The fails and probes
// words carry the period in their high 32 bits too, so that an outcome
// from an older period never counts.
//
// WindowFlag, only ever set in a CLOSED word, marks a breaker whose calls
// must be recorded one by one (a window that is not clean, slow or
// in-flight timing; issue 14): runtime sets and clears it within a period
// (a compare-and-swap), so code that compares an admission with the state
// word compares periods. LoadFlag marks one whose calls take a bulkhead
// slot or feed a throttle (issue 15). Either sends every call off the fast
// path.
//
// ProvFlag is never in a state word: package breakerimpl sets it in the
// admission of a call that claimed the provenance record of its ctx
// (runtime.WithProvenance), so that the call's exit, which tests the
// admission against FastMask|ProvFlag where it tested FastMask, leaves
// its fast path and writes the record, and clears it before the admission
// reaches the breaker. It is the bit after FastMask's, so that the mask
// with it is still a one-byte constant in the exit's test.
const (
	StateMask  = 7
	CountFlag  = 8
	WindowFlag = 16
	LoadFlag   = 32
	FastMask   = StateMask | CountFlag | WindowFlag | LoadFlag
	ProvFlag   = 64
	ProbeShift = 7
	ProbeMask  = 1<<32 - 1<<ProbeShift
	PeriodOne  = 1 << 32

	// Open is the state bits of an OPEN breaker (runtime.Open).
	Open = 2
)

// Period returns the state period of a state, fails or probes word.
func Period(w uint64) uint32 { return uint32(w >> 32) }

// Ops is the slow part of a breaker, implemented by package runtime.
type Ops interface {
	// Admit admits one call and returns its admission word, or the
	// rejection. hold is how long a probe may keep its slot when that is
	// longer than the reset window.
	Admit(hold time.Duration) (uint64, error)
	// AdmitTimed is Admit for a CLOSED word s with WindowFlag and no other
	// flag, on a route with no limiter and nothing else to do: it times
	// the call (Config.SlowCall, Config.InFlight) and returns its
	// admission, or ok false when the caller must call Admit (the window
	// does not time calls, a call was found overdue, the state moved).
	AdmitTimed(s uint64) (w uint64, ok bool)
	// Settle counts the outcome of the call admitted as w whose error is
	// err (nil for a success), as the breaker classifies it.
	Settle(ctx context.Context, w uint64, err error)
	// Settled is Settle that returns how the breaker counted the call,
	// for its record: Succeeded, Failed or Ignored (whatever in-flight
	// timing later made of it; see runtime's recorder).
	Settled(ctx context.Context, w uint64, err error) Stage
	// Failed is Settle for a plain CLOSED admission w (no flag of
	// FastMask) whose non-nil err is not excluded, made with a ctx that has
	// not ended: an error the breaker counts as a failure unless its
	// classifier says otherwise. It is the failing call's short way,
	// without the steps Settle takes for the outcomes it cannot be.
	Failed(ctx context.Context, w uint64, err error)
	// Ignore frees the call admitted as w and counts it as neither.
	Ignore(w uint64)
	// Load takes the last steps of the admission of w, a word with
	// LoadFlag: the throttle, then a concurrency slot, waiting for one up
	// to maxWait (when > 0) or until ctx ends. A refusal (matching
	// runtime.ErrThrottled or runtime.ErrBulkheadFull) has freed w. It
	// returns the admission to go on with: w, or w timed from now when
	// the breaker times calls from when they hold their slot.
	Load(ctx context.Context, w uint64, maxWait time.Duration) (uint64, error)
	// LoadSucceeded counts the success of a CLOSED call admitted as w, a
	// word with LoadFlag and no other flag: Settle for a nil error,
	// without classifying it.
	LoadSucceeded(w uint64)
	// WindowSuccess is LoadSucceeded for a word with WindowFlag and no
	// other flag: a call that a window records or that the breaker times.
	WindowSuccess(w uint64)
	// Withdraw is Ignore for a call refused before Load (a limiter wait
	// that its ctx ended): it has no slot to free.
	Withdraw(w uint64)
	// Limited is Withdraw for a call the limiter refused.
	Limited(w uint64)
	// Panicked counts a call that panicked with v as a failure.
	Panicked(w uint64, v any)
	// ClearFails clears the consecutive failures of w's period.
	ClearFails(w uint64)
	// Hold records that a route through the breaker may hold a probe's
	// slot for d (its timeout), when that is longer than the reset window.
	Hold(d time.Duration)
}

// Words are a breaker's state word and its fails word, on one line: in
// the breaker itself, or for a family key's breaker in the key's entry
// ([KeyEntry]), so that a call on the key reads one line for both.
type Words struct {
	State atomic.Uint64 // period<<32 | flags | state
	Fails atomic.Uint64 // period<<32 | consecutive failures in CLOSED
}

// Breaker is the part of a *runtime.Breaker that the call protocol drives:
// what the hot paths read, and the slow paths.
type Breaker struct {
	State  *atomic.Uint64         // period<<32 | flags | state
	Fails  *atomic.Uint64         // period<<32 | consecutive failures in CLOSED
	Reject *atomic.Pointer[error] // the rejection of an OPEN or HALF_OPEN period
	// Rejections counts the calls the breaker refused (runtime's
	// Stats.Rejections): a caller that refuses a call itself on seeing
	// an OPEN state word adds one, as Ops.Admit does for the refusals it
	// makes.
	Rejections *Tally
	// Slots are the concurrency slots of a breaker that has them and no
	// throttle, so that a call can take and free one without Ops; nil
	// otherwise (calls then go through Ops.Load).
	Slots *Slots
	// Win holds the counter of a time window's successes without a lock
	// when the breaker has one (see [Window]), nil otherwise; a live
	// change of the window (runtime's Registry.Update) replaces it.
	Win *atomic.Pointer[Window]
	Ops
}

// Slots counts the concurrency slots of a breaker (Config.Concurrency).
// A free slot is taken with one compare-and-swap and freed with one add;
// calls that find none queue in package runtime, which hands them the
// slots that finishing calls free.
//
// A waiter adds itself to Waiting before it looks for a free slot, and a
// finishing call frees its slot before it looks at Waiting: of the two, at
// least one sees the other, so no waiter sleeps through a free slot.
//
// Limit may change while calls hold slots (runtime's Registry.Update): a
// lowered limit refuses new takers until enough holders have finished.
// Routed, once set, makes TryTake refuse, so that a route that takes its
// slots itself goes through Ops.Load instead: runtime sets it for good
// when a live change reshapes the breaker, which may give it a throttle or
// slot timing that the short cut would skip.
type Slots struct {
	Limit   atomic.Int64 // most slots taken at once
	InUse   atomic.Int64 // slots taken
	Waiting atomic.Int64 // calls queued for a slot
	Routed  atomic.Bool  // TryTake refuses: take slots through Ops.Load
	// Grant hands free slots to queued calls: Release calls it when
	// Waiting is not zero.
	Grant func()
}

// TryTake takes a free slot, if no call is queued for one and Routed is
// not set, without waiting.
func (s *Slots) TryTake() bool {
	return !s.Routed.Load() && s.Waiting.Load() == 0 && s.Take()
}

// Take takes a free slot, queue or not, without waiting.
func (s *Slots) Take() bool {
	for {
		n := s.InUse.Load()
		if n >= s.Limit.Load() {
			return false
		}
		if s.InUse.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// Release frees a slot, and hands it to a queued call if there is one.
func (s *Slots) Release() {
	s.InUse.Add(-1)
	if s.Waiting.Load() != 0 {
		s.Grant()
	}
}

// BreakerOf returns the core of a *runtime.Breaker. Package runtime sets it
// in its init; its argument is typed any because this package cannot name
// runtime's types.
var BreakerOf func(b any) *Breaker

// IsRealClock reports whether c, a runtime.Clock, is the real clock
// (time.Now and time.AfterFunc). Package runtime sets it in its init.
var IsRealClock func(c any) bool

// Attach returns the breaker of the *runtime.Registry reg named by cfg (a
// runtime.Config) and, when the final settings give that name a rate
// limit, its limiter, else nil: the annotation's cfg, rate and burst and
// the registry's run-time layers are resolved once for both. Package
// runtime sets it in its init.
var Attach func(reg, cfg any, rate float64, burst int) (breaker, limiter any)

// WarnOnce logs msg as a warning through the *runtime.Registry reg's
// logger, once for each kind and key. Package runtime sets it in its init.
var WarnOnce func(reg any, kind, key, msg string)

// Detached returns a new *runtime.Breaker of reg with the settings cfg (a
// runtime.Config) that the registry does not hold: no lookup, Health or
// event sees it. A family of a nil implementation names its refusals
// with one. Package runtime sets it in its init.
var Detached func(reg, cfg any) (breaker any)

// PanicGuard is the error a guarded call holds until the guarded function
// returns: an exit that still finds it knows the function panicked (or its
// goroutine exited), without calling recover on every call. No function
// ever returns it.
//
// It has a type of its own: comparing an error with it then costs one word
// compare for every other error, where an errors.New value would send the
// many errors of that same type through the runtime's interface equality.
var PanicGuard error = &guardError{"breaker: guarded call did not return"}

type guardError struct{ msg string }

func (e *guardError) Error() string { return e.msg }

// Release counts the outcome of the call admitted as w whose error is err:
// a plain CLOSED success costs a load; every other outcome is settled by the
// breaker.
func (b *Breaker) Release(ctx context.Context, w uint64, err error) {
	if err == nil && w&FastMask == 0 {
		b.Succeeded(w)
		return
	}
	if err == nil && w&FastMask == WindowFlag {
		b.WindowSucceeded(w)
		return
	}
	b.Settle(ctx, w, err)
}

// WindowSucceeded counts the success of a CLOSED call admitted as w with
// WindowFlag and no other flag: in a time window's count without a lock
// when it can, else recorded by the window, or timed (SlowCall,
// InFlight).
func (b *Breaker) WindowSucceeded(w uint64) {
	if win := b.Win.Load(); win != nil && win.Count(w) {
		b.Succeeded(w)
		return
	}
	b.WindowSuccess(w)
}

// Succeeded counts a plain CLOSED success admitted as w.
func (b *Breaker) Succeeded(w uint64) {
	if uint32(b.Fails.Load()) != 0 {
		b.ClearFails(w)
	}
}

// Unreturned settles a call admitted as w whose function never returned:
// it panicked with v, a failure re-raised here, or its goroutine exited
// (v == nil), which counts as neither. The deferred exit calls recover and
// passes its value.
func (b *Breaker) Unreturned(w uint64, v any) {
	if v == nil {
		b.Ignore(w)
		return
	}
	b.Panicked(w, v)
	panic(v)
}

// Sleep waits d on a clock's AfterFunc, or until ctx ends; it reports
// whether the wait ran its course. The timer is stopped when ctx ends.
func Sleep[T interface{ Stop() bool }](ctx context.Context, d time.Duration, afterFunc func(time.Duration, func()) T) bool {
	done := make(chan struct{})
	t := afterFunc(d, func() { close(done) })
	select {
	case <-done:
		return true
	case <-ctx.Done():
		t.Stop()
		return false
	}
}

// ErrorIs is errors.Is for an error a caller's call returned: it answers
// false where a method of the error's tree panics (the Is or Unwrap of a
// nil pointer in an upstream's error, a common Go mistake), where
// errors.Is would panic in the runtime's own path, which must still finish
// the call (free its slot, count it). The runtime asks it of callers'
// errors on the paths that settle, classify or record a call.
func ErrorIs(err, target error) (is bool) {
	defer func() {
		if recover() != nil {
			is = false
		}
	}()
	return errors.Is(err, target)
}
