package runtime

import (
	"fmt"
	"time"
)

// reclaim is the probe timer of HALF_OPEN state word s.
func (b *Breaker) reclaim(s uint64) {
	b.mu.Lock()
	if b.state.Load() != s {
		b.mu.Unlock()
		return
	}
	b.timer = nil
	b.reclaimLocked(b.reg.clock.Now())
	b.mu.Unlock()
	b.reg.flush()
}

// reclaimLocked re-opens the breaker if a probe outlived its deadline, and
// otherwise re-arms the timer for the earliest pending deadline.
func (b *Breaker) reclaimLocked(now time.Time) {
	if len(b.inflight) == 0 {
		return
	}
	first := b.inflight[0].deadline
	for _, p := range b.inflight {
		if !now.Before(p.deadline) {
			b.countOutcome(Failure, 0)
			if len(b.reclaimed) == cap(b.reclaimed) {
				b.reclaimed = b.reclaimed[1:]
			}
			b.reclaimed = append(b.reclaimed, b.state.Load()|p.id<<probeShift)
			reason, d := b.reopenLocked(fmt.Sprintf("probe not released within %s, slot reclaimed as a failure", p.window), nil)
			b.transitionLocked(Open, reason, d)
			return
		}
		if p.deadline.Before(first) {
			first = p.deadline
		}
	}
	if b.timer == nil {
		s := b.state.Load()
		b.reclaimAt = first
		b.timer = b.reg.clock.AfterFunc(first.Sub(now), func() { b.reclaim(s) })
	}
}

// openElapsed is the timer of OPEN state word s.
func (b *Breaker) openElapsed(s uint64) {
	if b.gated(s) {
		return
	}
	b.mu.Lock()
	if b.state.Load() == s {
		b.timer = nil
		b.transitionLocked(HalfOpen, "", 0)
	}
	b.mu.Unlock()
	b.reg.flush()
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
		b.reclaimLocked(now)
	}
	b.mu.Unlock()
	b.reg.flush()
}
