package runtime

import (
	"context"
	"time"
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
// admitSlow's loop (and written here, one call sooner). ok false sends
// the caller to Admit.
func (o *ops) AdmitTimed(s uint64) (uint64, bool) {
	b := o.b()
	win := b.win.Load()
	if win == nil || !win.tracking || b.slotTracked.Load() {
		return 0, false
	}
	return b.admitTracked(win, s, true)
}

func (o *ops) LoadSucceeded(w uint64) {
	b := o.b()
	b.exitLoad(w, Success)
	if uint32(b.fails.Load()) != 0 {
		b.clearFails(w)
	}
}

func (o *ops) WindowSuccess(w uint64) {
	b := o.b()
	if win := b.win.Load(); win != nil && win.tracking {
		b.timedSuccess(win, w)
	} else {
		b.outcomeAs(w, Success, nil)
	}
}

func (o *ops) Load(ctx context.Context, w uint64, maxWait time.Duration) (uint64, error) {
	return o.b().enterLoad(ctx, w, maxWait)
}

func (o *ops) Settle(ctx context.Context, w uint64, err error) {
	b := o.b()
	out := b.Classify(ctx, err)
	if counted, ok := b.finishAs(w, out, err); ok && counted == Ignored {
		b.canceled.Add(1) // not for a call counted already: Canceled is within Ignored
	}
}

func (o *ops) Failed(ctx context.Context, w uint64, err error) {
	b := o.b()
	if b.class != nil {
		o.Settle(ctx, w, err)
		return
	}
	// outcomeAs and countOutcome for a CLOSED failure, written out: no
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
