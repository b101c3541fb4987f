package runtime

import (
	"fmt"
	"time"
)

// reclaim is the probe timer of HALF_OPEN state word s; in a HALF_OPEN
// on a Sharer's lease, also the timer of the lease's lapse.
func (b *Breaker) reclaim(s uint64) {
	b.mu.Lock()
	if b.state.Load() != s {
		b.mu.Unlock()
		return
	}
	b.timer = nil
	now := b.reg.clock.Now()
	lapsed := b.reclaimLocked(now)
	if lapsed {
		b.leaseLapsedLocked(now)
	}
	b.mu.Unlock()
	b.reg.flush()
	if lapsed {
		b.giveLeaseBack()
	}
}

// reclaimLocked re-opens the breaker if a probe outlived its deadline, and
// otherwise re-arms the timer for the earliest pending deadline, or for
// the end of the admissions a Sharer's lease allows when that comes
// first. It reports lapsed true, moving nothing, when those admissions
// have ended with no probe in flight: the caller then moves back to OPEN
// (leaseLapsedLocked).
func (b *Breaker) reclaimLocked(now time.Time) (lapsed bool) {
	var first time.Time
	for _, p := range b.inflight {
		if !now.Before(p.deadline) {
			b.countOutcome(Failure, 0)
			if len(b.reclaimed) == cap(b.reclaimed) {
				b.reclaimed = b.reclaimed[1:]
			}
			b.reclaimed = append(b.reclaimed, b.state.Load()|p.id<<probeShift)
			reason, d := b.reopenLocked(fmt.Sprintf("probe not released within %s, slot reclaimed as a failure", p.window), nil)
			b.transitionLocked(Open, reason, d)
			return false
		}
		if first.IsZero() || p.deadline.Before(first) {
			first = p.deadline
		}
	}
	if !b.leaseEnd.IsZero() {
		// On a lease: after last no probe is admitted (see admitProbe).
		last := b.leaseEnd.Add(-b.ProbeWindow())
		switch {
		case now.Before(last):
			if first.IsZero() || last.Before(first) {
				first = last
			}
		case len(b.inflight) == 0:
			return true
		}
	}
	if first.IsZero() {
		return false
	}
	if b.timer == nil {
		s := b.state.Load()
		b.reclaimAt = first
		b.timer = b.reg.clock.AfterFunc(first.Sub(now), func() { b.reclaim(s) })
	}
	return false
}

// openElapsed is the timer of OPEN state word s.
func (b *Breaker) openElapsed(s uint64) {
	wait, end := b.gated(s)
	if wait {
		return
	}
	lapsed := false
	b.mu.Lock()
	if b.state.Load() == s {
		b.timer = nil
		b.transitionLocked(HalfOpen, "", 0)
		if !end.IsZero() {
			b.leaseEnd = end
			now := b.reg.clock.Now()
			if lapsed = b.reclaimLocked(now); lapsed { // arms the lapse's timer, or a lease too short for a probe has lapsed
				b.leaseLapsedLocked(now)
			}
		}
	}
	b.mu.Unlock()
	b.reg.flush()
	if lapsed {
		b.giveLeaseBack()
	}
}

// giveLeaseBack tells the Sharer that a lease's lapse moved the breaker
// back to OPEN; no lock is held.
func (b *Breaker) giveLeaseBack() {
	if ls, ok := b.reg.sharer().(LeaseSharer); ok {
		ls.LeaseLapsed(b)
	}
}

// advance makes the moves that time has made due, for readers that must not
// see a state that has already ended (a late timer, a stepped test clock),
// and in CLOSED counts the calls in flight past InFlight.
func (b *Breaker) advance() {
	s := b.state.Load()
	switch State(s & stateMask) {
	case Closed, Bypassed:
		if b.cfg().InFlight > 0 {
			b.checkOverdue(s)
		}
		return
	case Isolated:
		return // no timer, nothing time makes due
	}
	b.mu.Lock()
	now := b.reg.clock.Now()
	switch State(b.state.Load() & stateMask) {
	case Open:
		if !now.Before(b.nextProbe) && b.reg.sharer() == nil { // a fleet's move waits for its timer
			b.transitionLocked(HalfOpen, "", 0)
		}
	case HalfOpen:
		b.reclaimLocked(now) // a lease's lapse is left to the timer: giving it back may block
	}
	b.mu.Unlock()
	b.reg.flush()
}
