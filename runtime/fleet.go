package runtime

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Sharer connects a [Registry] to the other processes of a fleet, through
// [Registry.Share]. Package redisstate implements it over Redis; most
// programs never implement one. Its methods are called by the registry
// and must be safe for concurrent use.
type Sharer interface {
	// Created is called with each breaker created after Share, before
	// [Registry.Breaker] returns it, so that a breaker a peer has opened
	// starts OPEN (see [Breaker.PeerOpen]). It may block briefly.
	Created(b *Breaker)
	// Transition is called with each transition the breaker made on its
	// own (not those made by [Breaker.PeerOpen] or [Breaker.PeerClose])
	// and, for a move to OPEN, the window until the next probe. It is
	// called with the breaker's lock held, in transition order: it must
	// only queue what it sends, never block nor call into the breaker.
	Transition(b *Breaker, ev Event, window time.Duration)
	// Probe is called when an OPEN breaker's window has ended, on a
	// timer's goroutine (it may block briefly). probe true lets the
	// breaker move to HALF_OPEN; false keeps it OPEN, rejecting, and asks
	// again after retry (a peer is probing and will publish its result).
	Probe(b *Breaker) (probe bool, retry time.Duration)
	// Wait replaces the wait of the limiter l ([Limiter.Wait]) when
	// handled is true; err is nil for a token, [ErrRateLimited] for a
	// refusal (the limiter returns its own [RateLimitError]) or ctx's
	// error. It must take no token when it returns an error.
	Wait(ctx context.Context, l *Limiter, maxWait time.Duration) (handled bool, err error)
	// Health is what [Health].Fleet reports. It must not block.
	Health() FleetHealth
}

// TokenRefunder is a [Sharer] whose Wait takes tokens it can give back:
// [Limiter.Refund] of a limiter whose waits the Sharer took over calls
// RefundToken, which reports whether it handled the refund (false leaves
// it to the local bucket). It may block briefly. It is a separate
// interface so that existing Sharers keep compiling.
type TokenRefunder interface {
	RefundToken(l *Limiter) (handled bool)
}

// LeaseSharer is a [Sharer] whose grant of a probe is a lease that runs
// out, so that a holder with no call to probe with cannot keep it: the
// runtime calls ProbeLease instead of Probe. lease is how long the grant
// holds from just before the call (0 for a grant that is no lease, such
// as one made with the fleet away); Package redisstate leases twice
// [Breaker.ProbeWindow]. A breaker moved to HALF_OPEN by a lease admits
// only probes whose slot is reclaimed (ProbeWindow) before the lease
// ends; once no more can be admitted and none is in flight, it goes back
// to OPEN, with an [Event] but no Transition (its peers have nothing to
// follow), calls LeaseLapsed to give the lease back (it may block
// briefly), and asks again a little after the lease would have ended.
// It is a separate interface so that existing Sharers keep compiling.
type LeaseSharer interface {
	ProbeLease(b *Breaker) (probe bool, lease, retry time.Duration)
	LeaseLapsed(b *Breaker)
}

// LimitSharer is a [Sharer] that takes over the waits of limiters by
// name: SharedLimits returns those names, and [Registry.Unmatched] lists
// each one that no limiter of the registry has (yet), as it lists a
// setting that names nothing: a typo would otherwise leave the limiter
// local without a word. It must not block. It is a separate interface so
// that existing Sharers keep compiling.
type LimitSharer interface {
	SharedLimits() []string
}

// FleetHealth is whether a registry's shared state is live, in
// [Health].Fleet: Redis "ok" or "down", and how many processes of the
// fleet are attached: those that sent a heartbeat in the two seconds
// before this process's last answered one, and 0 once that is more than
// two seconds old (Redis away: the process knows of no member).
type FleetHealth struct {
	Redis   string `json:"redis"`
	Members int    `json:"members"`
	// DuplicateOrigin is this process's name in the fleet while another
	// live member uses it too: each drops the other's news as its own,
	// so neither follows the other's trips. "" (left out of the JSON)
	// while the name is its own.
	DuplicateOrigin string `json:"duplicate_origin,omitempty"`
}

// errShared is returned by Share when a Sharer is already attached.
var errShared = errors.New("breaker: registry already shares its state")

// sharing holds the registry's Sharer (one at a time).
type sharing struct{ s Sharer }

// Share attaches s to the registry: from now on s learns of every
// breaker created and every transition made on its own, gates the
// OPEN → HALF_OPEN move and may take over limiter waits. The breakers
// existing already are in [Registry.Breakers]. stop detaches s; a
// registry shares with one Sharer at a time.
func (r *Registry) Share(s Sharer) (stop func(), err error) {
	if s == nil {
		return nil, errors.New("breaker: Share of a nil Sharer")
	}
	sh := &sharing{s: s}
	if !r.share.CompareAndSwap(nil, sh) {
		return nil, errShared
	}
	return func() { r.share.CompareAndSwap(sh, nil) }, nil
}

// sharer returns the attached Sharer, or nil.
func (r *Registry) sharer() Sharer {
	if sh := r.share.Load(); sh != nil {
		return sh.s
	}
	return nil
}

// created tells the Sharer of a breaker just created.
func (r *Registry) created(b *Breaker) {
	if s := r.sharer(); s != nil {
		s.Created(b)
	}
}

// sharedLocked tells the Sharer of a transition b made on its own; b.mu
// is held. A breaker that injects faults or latency (SPEC §13) tells it
// nothing: a rehearsal in one process must not trip the fleet (its peers
// inject nothing, and would refuse a healthy upstream for a window), so
// its trips and probe results stay its own, and it probes without the
// fleet's lease (gated); it still follows its peers' trips and modes, and
// an operator's mode set on it is shared as any.
func (b *Breaker) sharedLocked(ev Event, window time.Duration) {
	if b.peerMove || b.injector != nil {
		return
	}
	if s := b.reg.sharer(); s != nil {
		s.Transition(b, ev, window)
	}
}

// gated asks the Sharer whether OPEN state word s may move to HALF_OPEN;
// when it may not, it re-arms the period's timer for the Sharer's retry
// and reports wait true; it reports wait true without asking when s has
// ended. end is when the Sharer's lease on the probe ends (see
// [LeaseSharer]), zero for a grant that is no lease. Called on the
// timer's goroutine, with no lock held.
func (b *Breaker) gated(s uint64) (wait bool, end time.Time) {
	sh := b.reg.sharer()
	if sh == nil || b.injector != nil { // a rehearsal probes alone: see sharedLocked
		return false, time.Time{}
	}
	if b.state.Load() != s {
		return true, time.Time{} // a timer that fired as its period ended: asking would take a lease for nothing
	}
	var probe bool
	var lease, retry time.Duration
	if ls, ok := sh.(LeaseSharer); ok {
		asked := b.reg.clock.Now() // before the lease is taken: it ends no sooner than this says
		if probe, lease, retry = ls.ProbeLease(b); probe && lease > 0 {
			end = asked.Add(lease)
		}
	} else {
		probe, retry = sh.Probe(b)
	}
	if probe {
		return false, end
	}
	b.mu.Lock()
	if b.state.Load() == s {
		b.timer = b.reg.clock.AfterFunc(max(retry, time.Millisecond), func() { b.openElapsed(s) })
	}
	b.mu.Unlock()
	return true, time.Time{}
}

// leaseLapsedLocked moves HALF_OPEN back to OPEN when the Sharer's lease
// on the probe can admit no more probes and none is in flight (see
// [LeaseSharer]): its own news, not the fleet's, so not passed to the
// Sharer and not a failed probe (the backoff is left as it was). The new
// window ends a little after the lease would have: a peer whose wait
// ends with the lease asks first, and this process, which had no call to
// probe with, asks after it. b.mu is held; the caller gives the lease
// back once it is released.
func (b *Breaker) leaseLapsedLocked(now time.Time) {
	w := b.ProbeWindow()
	next := max(b.leaseEnd.Sub(now), 0) + max(w/8, 10*time.Millisecond)
	failed := b.failedProbes
	b.peerMove = true
	b.transitionLocked(Open, fmt.Sprintf("no call to probe with while holding the fleet's probe lease, given back; asking again in %s",
		next.Round(time.Millisecond)), next)
	b.peerMove = false
	b.failedProbes = failed
}

// PeerOpen opens the breaker for d because a peer of the fleet did
// (origin names it, reason is its reason); the event's reason is "peer
// <origin>: <reason>". It can open the breaker or lengthen its OPEN
// window up to d from now, never shorten it nor close the breaker, and
// leaves a breaker in an operator's mode alone; d is capped at
// [MaxCooldown] and a d <= 0 does nothing. A key of a [Family] whose
// share of keys OPEN (FamilyConfig.MaxOpen) is taken stays CLOSED, as for
// a trip of its own, and an Event says why. It reports whether the
// breaker changed. The transition is not passed back to the [Sharer]. For
// fleet integrations such as package redisstate.
func (b *Breaker) PeerOpen(origin, reason string, d time.Duration) bool {
	if d <= 0 {
		return false
	}
	d = min(d, MaxCooldown)
	reason = fmt.Sprintf("peer %s: %s", origin, reason)
	b.mu.Lock()
	cur := b.state.Load()
	now := b.reg.clock.Now()
	changed := true
	switch State(cur & stateMask) {
	case Isolated, Bypassed:
		changed = false // an operator's mode: only Resume ends it
	case Open:
		if !b.nextProbe.Before(now.Add(d)) {
			changed = false
			break
		}
		opened, changes := b.openedAt, b.stateChanges
		b.startPeriodLocked(cur, Open, now, d) // a longer window, no new event
		b.openedAt, b.stateChanges = opened, changes
	default:
		fam := b.fam
		if fam == nil {
			fam = b.joining // a new key's breaker, reading a note as it is made
		}
		if State(cur&stateMask) == Closed && fam != nil {
			if ok, why := fam.mayTrip(b); !ok {
				// The family's share of keys OPEN is taken here: the key
				// stays CLOSED, its own counts kept, and the log says why.
				b.reg.logOnly(Event{Source: b.cfg().Name, From: Closed, To: Closed,
					Reason: truncate(foldSpace(why+": "+reason), reasonMax)})
				changed = false
				break
			}
		}
		b.peerMove = true
		b.transitionLocked(Open, reason, d)
		b.peerMove = false
	}
	b.mu.Unlock()
	b.reg.flush()
	return changed
}

// PeerClose closes the breaker because a peer's probe succeeded (the
// event's reason is "peer <origin>: <reason>"); it does nothing to a
// CLOSED breaker and reports whether the breaker changed. The transition
// is not passed back to the [Sharer]. For fleet integrations such as
// package redisstate.
func (b *Breaker) PeerClose(origin, reason string) bool {
	b.mu.Lock()
	if State(b.state.Load() & stateMask).isMode() {
		b.mu.Unlock()
		return false // an operator's mode: only Resume ends it
	}
	changed := State(b.state.Load()&stateMask) != Closed
	b.peerMove = true
	b.transitionLocked(Closed, fmt.Sprintf("peer %s: %s", origin, reason), 0)
	b.peerMove = false
	b.mu.Unlock()
	b.reg.flush()
	return changed
}

// shareWait runs the Sharer's wait for l, if it takes l over.
func (l *Limiter) shareWait(ctx context.Context, maxWait time.Duration) (bool, error) {
	r := l.reg
	if r == nil {
		return false, nil
	}
	s := r.sharer()
	if s == nil {
		return false, nil
	}
	handled, err := s.Wait(ctx, l, maxWait)
	if err == ErrRateLimited {
		err = l.err
	}
	return handled, err
}

// shareRefund gives back a token through the Sharer, if it takes l's
// waits over and can give tokens back; it reports whether it did.
func (l *Limiter) shareRefund() bool {
	if l.reg == nil {
		return false
	}
	r, ok := l.reg.sharer().(TokenRefunder)
	return ok && r.RefundToken(l)
}

// Fleet returns the health of the fleet the registry shares its state
// with ([Health].Fleet), or nil when it shares with none.
func (r *Registry) Fleet() *FleetHealth {
	if s := r.sharer(); s != nil {
		h := s.Health()
		return &h
	}
	return nil
}
