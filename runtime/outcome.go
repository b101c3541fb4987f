package runtime

import (
	"context"
	"fmt"
	"reflect"
	"time"
	"unsafe"

	"github.com/breakergen/breakergen/runtime/internal/core"
)

// Outcome is how a call counts for its breaker: one of the three below. Any
// other value (a classifier's or a Record caller's bug) counts as Ignored.
type Outcome uint8

const (
	// Success closes a probe and clears the consecutive-failure count.
	Success Outcome = iota
	// Failure counts towards tripping the breaker, and re-opens it from
	// HALF_OPEN.
	Failure
	// Ignored counts as neither: the call's slot is freed and nothing else
	// changes (a caller that gave up, a call the limiter refused).
	Ignored
)

// String returns "success", "failure" or "ignored".
func (o Outcome) String() string {
	switch o {
	case Success:
		return "success"
	case Failure:
		return "failure"
	case Ignored:
		return "ignored"
	}
	return fmt.Sprintf("Outcome(%d)", uint8(o))
}

// Release reports the outcome of a call admitted by [Breaker.Acquire]: nil
// is a success; a non-nil error is classified by the breaker's
// classifier ([WithClassifier]), or else is a failure, except a [context.Canceled] while the
// caller's context is done, which is ignored. The outcome counts only if the
// breaker is still in the state period that admitted the call. Release
// allocates nothing.
//
// A Token that admitted no call (the zero Token, or one that came with
// Acquire's rejection) counts nothing, and a Token counts on the breaker
// whose Acquire made it, whichever breaker's Release is given it.
func (b *Breaker) Release(t Token, err error) {
	if t.word == 0 || t.b != b {
		if t.word == 0 || t.b == nil {
			return // no call was admitted
		}
		b = t.b
	}
	b.core.Release(t.ctx, t.word, err)
}

// Record reports the outcome of a call admitted by [Breaker.Acquire] as
// decided by the caller; err, if not nil, becomes the reason of a
// transition it causes. Like Release it takes each Token once (see
// [Token]: a second Record counts again), ignores one
// that admitted no call and counts on the Token's own breaker.
func (b *Breaker) Record(t Token, o Outcome, err error) {
	if t.word == 0 || t.b == nil {
		return // no call was admitted
	}
	if o > Ignored {
		o = Ignored // not one of the three: see Outcome
	}
	t.b.finish(t.word, o, err)
}

// Classify returns how err, the error of a call made with ctx, counts for
// this breaker (see [Breaker.Release]).
func (b *Breaker) Classify(ctx context.Context, err error) Outcome {
	if err == nil {
		return Success
	}
	if b.class != nil {
		if o := b.class(ctx, err); o <= Ignored {
			return o
		}
		return Ignored // not one of the three: see Outcome
	}
	if ctx != nil && ctx.Err() != nil && core.ErrorIs(err, context.Canceled) {
		return Ignored
	}
	return Failure
}

// clearFails resets the consecutive-failure count of the period of w after a
// success.
func (b *Breaker) clearFails(w uint64) {
	for {
		f := b.fails.Load()
		if period(f) != period(w) || uint32(f) == 0 {
			return
		}
		if b.fails.CompareAndSwap(f, f&^0xffffffff) {
			return
		}
	}
}

// finish ends the call admitted as w with outcome o: it frees the call's
// load slot, if it took one, and counts o (see outcome).
func (b *Breaker) finish(w uint64, o Outcome, err error) bool {
	_, ok := b.finishAs(w, o, err)
	return ok
}

// finishAs is finish that also returns the outcome as it was counted (see
// outcomeAs).
func (b *Breaker) finishAs(w uint64, o Outcome, err error) (Outcome, bool) {
	if w&core.LoadFlag != 0 {
		b.exitLoad(w, o)
	}
	return b.outcomeAs(w, o, err)
}

// outcome counts outcome o of the call admitted as w. It reports false
// when the call had been counted already (a probe whose slot was
// reclaimed, a call found in flight past InFlight) and o was dropped.
func (b *Breaker) outcome(w uint64, o Outcome, err error) bool {
	_, ok := b.outcomeAs(w, o, err)
	return ok
}

// outcomeAs is outcome that also returns the outcome as it was counted: o,
// or Failure for a call that ran longer than InFlight (see endTracked).
func (b *Breaker) outcomeAs(w uint64, o Outcome, err error) (Outcome, bool) {
	if State(w&stateMask) == HalfOpen {
		return o, b.probeDone(w&^probeMask, w&probeMask>>probeShift, o, err)
	}
	var (
		bits uint8
		now  int64
		age  time.Duration // > 0: the call ran longer than InFlight
	)
	if win := b.win.Load(); win != nil && win.tracking && w&windowFlag != 0 {
		var ok bool
		if o, bits, now, age, ok = b.endTracked(w, o); !ok {
			return o, false // counted when found overdue, or forgotten
		}
	}
	now = b.countOutcome(o, now)
	switch o {
	case Success:
		if uint32(b.fails.Load()) != 0 {
			b.clearFails(w)
		}
		if b.win.Load() != nil {
			b.record(w, bits, now)
		}
	case Failure:
		b.closedFailure(w, err, age, bits|failedBit, now)
	}
	return o, true
}

// closedFailure counts a failure of the CLOSED call admitted as w towards
// the threshold and the window, at instant now (0 when not read): its
// error is err, or it ran age (> 0) past InFlight; bits are its outcome
// bits.
func (b *Breaker) closedFailure(w uint64, err error, age time.Duration, bits uint8, now int64) {
	if age == 0 && State(w&stateMask) == Closed { // BYPASSED counts a cooldown as a failure like any
		if reason, d, ok := cooldown(err); ok {
			b.trip(w, reason, d)
			return
		}
	}
	for {
		f := b.fails.Load()
		if period(f) != period(w) {
			return // admitted in an older period
		}
		if b.fails.CompareAndSwap(f, f+1) {
			// >=: an Update may have lowered the threshold below the
			// count; BYPASSED never trips, so it need not try.
			if t := b.cfg().FailureThreshold; t > 0 && int(uint32(f))+1 >= t && State(w&stateMask) == Closed {
				reason := reasonOf(err)
				if age > 0 {
					reason = overdueReason(age, b.cfg().InFlight)
				}
				b.trip(w, reason, 0)
				return
			}
			break
		}
	}
	if b.win.Load() != nil {
		b.record(w, bits, now)
	}
}

// countOutcome adds one outcome to the totals, the outcome's instant
// among them: now, or the clock's time when now is 0 (not read yet). It
// returns the instant, so that the rest of the outcome reads no clock
// again (SPEC §8: a timed call reads it twice, a failure once). It reads
// the clock before the atomic writes: the clock read waits for earlier
// instructions to finish, a locked write among them (about 4 ns of a
// failing call).
func (b *Breaker) countOutcome(o Outcome, now int64) int64 {
	switch o {
	case Success:
		if b.count {
			if now == 0 {
				now = b.stamps.now()
			}
			b.successes.Add(1)
			putStamp(&b.lastSuccess, now)
		}
	case Failure:
		if now == 0 {
			now = b.stamps.now()
		}
		b.failures.Add(1)
		putStamp(&b.lastFailure, now)
	case Ignored, unmade:
		b.ignored.Add(1)
	}
	return now
}

// trip moves the breaker to OPEN for window (0: the reset period, see
// backoff.go) if it is still in the CLOSED period of admission w. A
// BYPASSED breaker never trips: its period is not a CLOSED one.
func (b *Breaker) trip(w uint64, reason string, window time.Duration) {
	b.mu.Lock()
	if s := b.state.Load(); period(s) != period(w) || State(s&stateMask) != Closed {
		b.mu.Unlock()
		return
	}
	if b.fam != nil && b.keptClosedLocked(reason) {
		b.mu.Unlock()
		return
	}
	if window == 0 {
		window = b.tripPeriodLocked()
	}
	b.transitionLocked(Open, reason, window)
	b.mu.Unlock()
	b.reg.flush()
}

// probeDone counts the outcome of probe id admitted in state word s; false
// when its slot was reclaimed, which counted it.
func (b *Breaker) probeDone(s, id uint64, o Outcome, err error) bool {
	b.mu.Lock()
	if b.wasReclaimedLocked(s | id<<probeShift) {
		b.mu.Unlock()
		return false // already counted as a failure when its slot was reclaimed
	}
	b.countOutcome(o, 0)
	if b.state.Load() != s || !b.removeProbeLocked(id) {
		b.mu.Unlock()
		return true // a later period, or the slot was reclaimed
	}
	switch o {
	case Success:
		b.probeWins++
		if need := b.cfg().SuccessThreshold; b.probeWins >= need {
			// SPEC §4's "(n/m)", n at most m: an Update may have lowered
			// successes below the wins of the period.
			b.transitionLocked(Closed, fmt.Sprintf("half-open probe succeeded (%d/%d)", min(b.probeWins, need), need), 0)
		}
	case Failure:
		reason, d := b.reopenLocked(reasonOf(err), err)
		b.transitionLocked(Open, reason, d)
	}
	b.mu.Unlock()
	b.reg.flush()
	return true
}

// wasReclaimedLocked reports whether the probe admitted as w had its slot
// reclaimed, and forgets it.
func (b *Breaker) wasReclaimedLocked(w uint64) bool {
	for i, r := range b.reclaimed {
		if r == w {
			b.reclaimed = append(b.reclaimed[:i], b.reclaimed[i+1:]...)
			return true
		}
	}
	return false
}

// removeProbeLocked frees the slot of probe id; false if it is not pending.
func (b *Breaker) removeProbeLocked(id uint64) bool {
	for i, p := range b.inflight {
		if p.id == id {
			b.inflight = append(b.inflight[:i], b.inflight[i+1:]...)
			b.probes.Add(^uint64(0)) // period unchanged: we hold mu
			return true
		}
	}
	return false
}

// panicError is what a panic in a guarded call is recorded as (the panic
// itself is re-raised to the caller): the reason "panic: <value>".
type panicError struct{ value any }

func (e *panicError) Error() string { return fmt.Sprintf("panic: %v", e.value) }

// cooldown returns the OPEN period the first error in err's chain (through
// Unwrap() error and Unwrap() []error) with a RetryAfter() time.Duration
// method asks for, capped at MaxCooldown, and the transition's reason; ok
// is false when no error asks for more than zero.
func cooldown(err error) (reason string, d time.Duration, ok bool) {
	if d, _ = retryAfter(err); d <= 0 {
		return "", 0, false // every failing call: no call more
	}
	return cooldownOf(err, d)
}

// cooldownLocked is cooldown for a caller that holds the breaker's lock
// (see retryAfterGuarded).
func cooldownLocked(err error) (reason string, d time.Duration, ok bool) {
	d, _ = retryAfterGuarded(err)
	return cooldownOf(err, d)
}

// cooldownOf is cooldown's result for err, which asks for d.
func cooldownOf(err error, d time.Duration) (reason string, _ time.Duration, ok bool) {
	if d <= 0 {
		return "", 0, false
	}
	d = min(d, MaxCooldown)
	return "retry after " + d.String() + ": " + reasonOf(err), d, true
}

// retryAfter returns what the first error in err's tree, depth first, with
// a RetryAfter() time.Duration method asks for; found is false when there
// is none. Every failing call asks, so it walks with one type switch per
// error (one cached type test), no callback and no deferred recover. A
// typed nil (a nil pointer in a non-nil error, whose methods would read
// its fields) asks for nothing and is not unwrapped, and the walk stops
// after maxErrorNodes errors (one that unwraps to itself would never end).
// A caller that holds the breaker's lock asks retryAfterGuarded.
func retryAfter(err error) (d time.Duration, found bool) {
	d, found, _ = retryAfterIn(err, maxErrorNodes)
	return d, found
}

// retryAfterGuarded is retryAfter for a caller that holds the breaker's
// lock (a failed probe): a RetryAfter or Unwrap method that panics asks for
// nothing, where a panic would leave the breaker locked for ever.
func retryAfterGuarded(err error) (d time.Duration, found bool) {
	defer func() {
		if recover() != nil {
			d, found = 0, false
		}
	}()
	return retryAfter(err)
}

// typedNil reports whether err holds a nil pointer. The data word of its
// interface is nil then, which a load tells on every failing call; so is
// it for a value of a pointer-shaped type (a struct of one nil pointer
// field, stored in the interface directly), which is no typed nil, and
// reflect tells the two apart only then.
func typedNil(err error) bool {
	return (*[2]unsafe.Pointer)(unsafe.Pointer(&err))[1] == nil && isPointer(err)
}

// isPointer reports whether err's dynamic type is a pointer type: out of
// line, as typedNil asks it only of a nil data word.
//
//go:noinline
func isPointer(err error) bool { return reflect.TypeOf(err).Kind() == reflect.Pointer }

// retryAfterIn is retryAfter's walk of at most budget errors; left is
// what it did not spend.
func retryAfterIn(err error, budget int) (d time.Duration, found bool, left int) {
	for ; budget > 0; budget-- {
		if err == nil || typedNil(err) {
			return 0, false, budget
		}
		switch e := err.(type) {
		case interface{ RetryAfter() time.Duration }:
			return e.RetryAfter(), true, budget
		case sourceError: // a ChainError's source's error (chain.go)
			err = e.err
		case interface{ Unwrap() error }:
			err = e.Unwrap()
		case interface{ Unwrap() []error }:
			return retryAfterJoined(e.Unwrap(), budget-1)
		default:
			return 0, false, budget
		}
	}
	return 0, false, 0
}

// retryAfterJoined is retryAfterIn over the errors a join holds, in order.
func retryAfterJoined(errs []error, budget int) (d time.Duration, found bool, left int) {
	for _, err := range errs {
		if d, found, budget = retryAfterIn(err, budget); found || budget <= 0 {
			return d, found, budget
		}
	}
	return 0, false, budget
}
