package runtime

import (
	"context"
	"time"

	"github.com/breakergen/breakergen/runtime/internal/core"
)

// ops is a Breaker seen as the slow paths of [core.Ops]: methods that
// generated code reaches through package breakerimpl without their being
// in this package's API.
type ops Breaker

func (o *ops) b() *Breaker { return (*Breaker)(o) }

// Admit is admitSlow: a route asks only for a word with a flag set, which
// admit's own test would send there.
func (o *ops) Admit(hold time.Duration) (uint64, error) { return o.b().admitSlow(hold) }
func (o *ops) Ignore(w uint64)                          { o.b().finish(w, Ignored, nil) }
func (o *ops) Withdraw(w uint64)                        { o.b().outcome(w, unmade, nil) }
func (o *ops) ClearFails(w uint64)                      { o.b().clearFails(w) }

// AdmitTimed is admitSlow's CLOSED case for a state word s with WindowFlag
// and no other flag, when the breaker times its calls from their
// admission: the success path of SlowCall and InFlight, without
// admitSlow's loop. ok false sends the caller to Admit. It is
// admitTracked(win, s, true) written out with the tracker's first look
// for a slot (see tracker.claim), so that the path makes no call but the
// clock read and the pin to the P.
func (o *ops) AdmitTimed(s uint64) (uint64, bool) {
	b := o.b()
	win := b.win.Load()
	if win == nil || !win.tracking || b.slotTracked.Load() || b.beforeWindow(s) {
		return 0, false
	}
	limit := b.cfg().InFlight
	var now int64
	if b.stamps.mono { // b.stamps.now(), one call sooner
		now = int64(time.Since(b.stamps.anchor))
	} else {
		now = b.stamps.now()
	}
	t := win.track
	if limit > 0 && t.mayBeOverdue(now, limit) && !b.countOverdueAt(win, s, now, limit) {
		return 0, false // overdue calls were counted: look at the state again
	}
	var id uint64
	segs := *t.segs.Load()
	if i := core.ProcPin(); i < t.home {
		seg := segs[i]
		j := seg.nextSlot()
		sl := &seg.slots[j]
		if sw := sl.word.Load(); sw&slotState == slotFree {
			seg.setNext(j + 1)
			id = t.fill(sl, sw, i, j, now, period(s))
		}
	}
	core.ProcUnpin()
	if id == 0 {
		if id = t.claim(now, period(s)); id == 0 {
			id = win.claimLocked(now, period(s))
		}
	}
	if limit > 0 { // after the slot is written (see tracker): the deadline of this call
		if d := now + int64(limit); d < t.due.Load() {
			t.lowerDue(d)
		}
	}
	return s | id<<probeShift, true
}

func (o *ops) LoadSucceeded(w uint64) {
	b := o.b()
	b.exitLoad(w, Success)
	if uint32(b.fails.Load()) != 0 {
		b.clearFails(w)
	}
}

// WindowSuccess is outcomeAs(w, Success, nil) for a CLOSED call admitted
// as w, a word with WindowFlag and no other flag. For a breaker that times
// its calls (SlowCall, InFlight), win being its window, it is the success
// path of SlowCall and InFlight, written out in one function but for the
// tracker's end (tracker.end: the slot protocol stays in one place, for 9
// instructions of about 630): no lock while the window can count the
// success without one (see record).
func (o *ops) WindowSuccess(w uint64) {
	b := o.b()
	win := b.win.Load()
	if win == nil || !win.tracking {
		b.outcomeAs(w, Success, nil)
		return
	}
	var (
		start int64
		bits  uint8
		now   int64
	)
	if id := w & probeMask >> probeShift; id != 0 && !b.beforeWindow(w) { // else not timed
		var ok bool
		if start, ok = win.track.end(id); !ok {
			return // counted when found overdue, or forgotten
		}
	}
	if start != 0 { // else not timed (see tracker.claimLocked)
		if b.stamps.mono { // b.stamps.now(), one call sooner, as in AdmitTimed
			now = int64(time.Since(b.stamps.anchor))
		} else {
			now = b.stamps.now()
		}
		ran := time.Duration(now - start)
		cfg := b.cfg()
		if cfg.SlowCall > 0 && ran > cfg.SlowCall {
			bits = slowBit
		}
		if cfg.InFlight > 0 && ran > cfg.InFlight {
			b.countOutcome(Failure, now)
			b.closedFailure(w, nil, ran, bits|failedBit, now)
			return
		}
	}
	if b.count {
		b.countOutcome(Success, now)
	}
	if uint32(b.fails.Load()) != 0 {
		b.clearFails(w)
	}
	// record's first steps, without its call: no window to count in
	// (InFlight alone); or, for a success that is not slow, a clean
	// count window, which it cannot change, or a time window that
	// counts it without a lock in its published bucket.
	if !win.counting || (bits == 0 && win.clean.Load()) {
		return
	}
	if bits == 0 && win.fast != nil && win.fast.Count(w) {
		return
	}
	b.record(w, bits, now)
}

func (o *ops) Load(ctx context.Context, w uint64, maxWait time.Duration) (uint64, error) {
	return o.b().enterLoad(ctx, w, maxWait)
}

func (o *ops) Settle(ctx context.Context, w uint64, err error) { o.b().settle(ctx, w, err) }

func (o *ops) Settled(ctx context.Context, w uint64, err error) core.Stage {
	return stageOf(o.b().settle(ctx, w, err))
}

// settle ends the call admitted as w whose error is err, as the breaker
// classifies it, and returns that verdict (not what in-flight timing made
// of the call: see outcomeAs).
func (b *Breaker) settle(ctx context.Context, w uint64, err error) Outcome {
	var out Outcome
	if b.class != nil && err != nil {
		out = b.classifyAdmitted(ctx, w, err)
	} else {
		out = b.Classify(ctx, err) // no classifier to guard: the call of classifyAdmitted, not inlined, is spared
	}
	if counted, ok := b.finishAs(w, out, err); ok && counted == Ignored {
		b.canceled.Add(1) // not for a call counted already: Canceled is within Ignored
	}
	return out
}

// classifyAdmitted is Classify for the call admitted as w. A classifier
// that panics must not leave the call unfinished: its load slot (a
// bulkhead's, a probe's) would be held for good, and an inflight bound
// would count the call as hung. The call then ends as a failure, as a
// panic in the call itself does, and the panic goes on to the caller. Only
// the classifier's panic: once it has answered, the call is the caller's
// to finish (finishing it here too would free its slot twice). For a
// failing call of a breaker with a classifier.
func (b *Breaker) classifyAdmitted(ctx context.Context, w uint64, err error) Outcome {
	answered := false
	defer func() {
		if !answered {
			if v := recover(); v != nil {
				b.finish(w, Failure, &panicError{value: v})
				panic(v)
			}
		}
	}()
	out := b.Classify(ctx, err)
	answered = true
	return out
}

func (o *ops) Failed(ctx context.Context, w uint64, err error) {
	b := o.b()
	if b.class != nil {
		o.Settle(ctx, w, err)
		return
	}
	// outcomeAs and countOutcome for a CLOSED failure, written out (a call
	// to countOutcome costs the failing call 22 instructions of 440): no
	// state but CLOSED, no timing and no load slot to look at.
	now := b.stamps.now() // before the atomic writes: see countOutcome
	b.failures.Add(1)
	putStamp(&b.lastFailure, now)
	b.closedFailure(w, err, 0, failedBit, now)
}

func (o *ops) Limited(w uint64) {
	if o.b().outcome(w, unmade, nil) {
		o.limited.Add(1) // as Canceled in Settle
	}
}

func (o *ops) Panicked(w uint64, v any) {
	o.b().finish(w, Failure, &panicError{value: v})
}

func (o *ops) Hold(d time.Duration) {
	for {
		cur := o.hold.Load()
		if int64(d) <= cur || o.hold.CompareAndSwap(cur, int64(d)) {
			return
		}
	}
}
