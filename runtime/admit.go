package runtime

import (
	"context"
	"time"

	"github.com/breakergen/breakergen/runtime/internal/core"
)

// Acquire asks the breaker to admit one call. On success it returns a Token
// that must be passed to [Breaker.Release] exactly once with the call's
// error; otherwise it returns an error matching [ErrOpen] and the call must
// not be made. ctx is the caller's context (nil means background): Release
// uses it to classify a [context.Canceled] outcome. Acquire allocates
// nothing.
func (b *Breaker) Acquire(ctx context.Context) (Token, error) {
	w, err := b.admit(0)
	if err == nil && w&core.LoadFlag != 0 {
		if w, err = b.enterLoad(ctx, w, 0); err != nil {
			w = 0
		}
	}
	return Token{b: b, ctx: ctx, word: w}, err
}

// admit is the admission step of every call: Acquire and generated code's
// routes. hold is how long a probe may keep its slot when that is longer
// than the reset window (the route's timeout).
func (b *Breaker) admit(hold time.Duration) (uint64, error) {
	if s := b.state.Load(); s&fastMask == 0 {
		return s, nil
	}
	return b.admitSlow(hold)
}

func (b *Breaker) admitSlow(hold time.Duration) (uint64, error) {
	s := b.state.Load()
	for {
		switch State(s & stateMask) {
		case Closed, Bypassed: // BYPASSED admits as CLOSED does, and never trips (see mode.go)
			w := s
			if win := b.win.Load(); win != nil && win.tracking {
				var ok bool
				if w, ok = b.admitTracked(win, s, !b.slotTracked.Load()); !ok {
					s = b.state.Load() // overdue calls were counted, or Update replaced the window
					continue
				}
			}
			if b.count {
				b.calls.Add(1)
			}
			return w, nil
		case Open, Isolated:
			return 0, b.rejected()
		}
		// HALF_OPEN: claim a slot of this period without a lock.
		p := b.probes.Load()
		if period(p) != period(s) {
			s = b.state.Load() // the period ended under us
			continue
		}
		if int(uint32(p)) >= b.cfg().HalfOpenMax {
			return 0, b.rejected()
		}
		if !b.probes.CompareAndSwap(p, p+1) {
			s = b.state.Load()
			continue
		}
		if w, ok := b.admitProbe(s, hold); ok {
			return w, nil
		}
		if b.state.Load() == s { // the period ran out of probe ids, or its lease of time for one
			return 0, b.rejected()
		}
		s = b.state.Load()
	}
}

// rejected counts a refusal, with or without call counting (SPEC §4: it
// costs the CLOSED success path nothing), and returns the rejection.
func (b *Breaker) rejected() error {
	b.rejections.Add()
	return *b.reject.Load()
}

// setReject makes e the rejection of the period about to start.
func (b *Breaker) setReject(e *OpenError) {
	err := error(e)
	b.reject.Store(&err)
}

// admitProbe registers a probe whose slot was claimed in state word s. It
// fails when the period ended in between (the claimed slot went with it),
// or when the period has given out every probe id or, on a Sharer's
// lease, the probe could outlive the lease (the slot is freed).
func (b *Breaker) admitProbe(s uint64, hold time.Duration) (uint64, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.state.Load() != s {
		return 0, false
	}
	now := b.reg.clock.Now()
	window := max(b.cfg().ResetTimeout, hold)
	// A Sharer's lease must outlive every probe it admits (LeaseSharer).
	if b.probeSeq >= probeMask>>probeShift || !b.leaseEnd.IsZero() && now.Add(window).After(b.leaseEnd) {
		b.probes.Add(^uint64(0))
		return 0, false
	}
	if b.count {
		b.calls.Add(1)
	}
	b.probeSeq++
	b.inflight = append(b.inflight, probe{id: b.probeSeq, deadline: now.Add(window), window: window})
	// An Update may have shortened the window since an earlier probe
	// armed the timer: the earliest deadline must fire first.
	if deadline := now.Add(window); b.timer == nil || deadline.Before(b.reclaimAt) {
		if b.timer != nil {
			b.timer.Stop()
		}
		b.reclaimAt = deadline
		b.timer = b.reg.clock.AfterFunc(window, func() { b.reclaim(s) })
	}
	return s | b.probeSeq<<probeShift, true
}
