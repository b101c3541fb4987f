package runtime

import (
	"fmt"
	"strings"
)

// The operator's modes (SPEC §14). A mode is a state of its own in the
// state word (see package core): ISOLATED rejects every call at admission,
// with the rejection built when the mode was set; BYPASSED admits every
// call as CLOSED does, counts it, and never trips, because every trip
// checks that its period is a CLOSED one. Neither has a timer. Calls of
// both leave the fast path, so the CLOSED success path pays nothing for
// modes. Only [Breaker.Resume] (here or, with a fleet, in any process)
// ends a mode: no failure, timer, peer's trip or probe result does, and
// [Breaker.Reset] keeps it.

// Isolate puts the breaker in ISOLATED until [Breaker.Resume]: every call
// is refused with an [*OpenError] matching [ErrOpen] whose message gives
// reason, the wrapped method is not called and no limiter token is taken.
// There is no timer and no probe. It records an [Event] (reason
// "isolated by operator: <reason>") and calls the hooks; with a fleet
// attached, every process follows. Calls admitted before it no longer
// count. reason is cleaned like every reason (one line, control
// characters replaced, at most 200 characters in all).
//
// On a [Family] key's breaker, Isolate, [Breaker.Bypass] and
// [Breaker.Resume] act on the key's live breaker, the one its calls go
// through: when the family dropped b since the caller got it, the key is
// made again (if it is not live) and that breaker takes the mode, and
// records the Event; b itself is left as it was. A key in a mode is never
// dropped, so the operator's decision holds until Resume.
func (b *Breaker) Isolate(reason string) { b.operate(Isolated, reason) }

// Bypass puts the breaker in BYPASSED until [Breaker.Resume]: every call
// is admitted, whatever the failures, and counted (Stats, the window,
// metrics), and the breaker never trips. The limiter, the route's timeout,
// the bulkhead and retries still apply: bypassing the breaker never lifts
// a rate limit. It records an [Event] ("bypassed by operator: <reason>")
// and calls the hooks; with a fleet attached, every process follows.
func (b *Breaker) Bypass(reason string) { b.operate(Bypassed, reason) }

// Resume puts the breaker back to automatic: CLOSED, with fresh
// consecutive counts and window (the totals stay), from a mode, from OPEN
// or HALF_OPEN, and from CLOSED too (calls admitted before it no longer
// count). It records an [Event] ("resumed by operator: <reason>") and
// calls the hooks, unless the breaker was CLOSED already (no transition:
// it logs instead); with a fleet attached it ends the mode in every
// process, also when this process had not heard of it.
func (b *Breaker) Resume(reason string) { b.operate(Closed, reason) }

// Mode returns the operator's mode the breaker is in: [Isolated],
// [Bypassed], or [Closed] for none (automatic).
func (b *Breaker) Mode() State {
	if s := State(b.state.Load() & stateMask); s.isMode() {
		return s
	}
	return Closed
}

// ModeFromEnv reports whether the breaker is in the mode the environment
// gave it as it was made (BREAKER_<NAME>_MODE of its name or, for a
// [Family] key's breaker, of its family's), which no operator or peer has
// changed since; false for a breaker in no mode. A family drops a key in
// such a mode like a CLOSED one (the key comes back in it), but never a
// key an operator put in a mode: package httphealth bounds those alone.
func (b *Breaker) ModeFromEnv() bool {
	return b.envMode.Load() && b.Mode() != Closed
}

// isMode reports whether s is one of the operator's modes.
func (s State) isMode() bool { return s == Isolated || s == Bypassed }

// ModeSharer is a [Sharer] that also shares the operator's modes with the
// fleet (package redisstate is one). The registry calls Mode, instead of
// [Sharer.Transition], for each [Breaker.Isolate], [Breaker.Bypass] and
// [Breaker.Resume] made in this process, with mode Isolated, Bypassed or
// Closed (for Resume, also of a breaker that was CLOSED already) and the
// Event's reason. It is called with the breaker's lock held, in order: it
// must only queue what it sends, never block nor call into the breaker.
type ModeSharer interface {
	Sharer
	Mode(b *Breaker, mode State, reason string)
}

// operatorReason is the reason of a mode's Event: "isolated by operator:
// <reason>" and the like, or the first part alone for an empty reason.
func operatorReason(to State, reason string) string {
	verb := "resumed by operator"
	switch to {
	case Isolated:
		verb = "isolated by operator"
	case Bypassed:
		verb = "bypassed by operator"
	}
	if reason = CleanReason(reason); reason == "" {
		return verb
	}
	return truncate(verb+": "+reason, reasonMax)
}

// CleanReason makes an operator's reason as safe to show as every other
// reason: one line (white space folded), control characters and bytes that
// are not UTF-8 replaced by U+FFFD, URLs' credentials redacted as
// [Brief] does, and at most 200 characters. Package httphealth cleans the
// reasons of its controls with it.
func CleanReason(reason string) string {
	return truncate(redactWords(foldSpace(reason)), reasonMax)
}

// isolatedReason returns the reason of an isolated breaker's refusals;
// b.mu held.
func (b *Breaker) isolatedReason() string {
	if p := b.reject.Load(); p != nil {
		if e, ok := (*p).(*OpenError); ok {
			return e.Reason
		}
	}
	return ""
}

// operate sets the mode to (Closed for Resume) on the operator's behalf.
// A family key's breaker passes it on to its key's live breaker, the one
// calls on the key go through, which is another when b was dropped since
// the caller got it: setting the mode on b then would report a decision
// that no call sees (see Family.operateKey).
func (b *Breaker) operate(to State, reason string) {
	b.mu.Lock()
	f := b.home
	b.mu.Unlock()
	if f != nil {
		f.operateKey(b.cfg().Name[len(f.name)+1:], to, reason)
		return
	}
	b.operateHere(to, reason)
}

// operateKey sets the mode of key's live breaker (Closed for Resume),
// making the key when it is not live, so that the operator's decision is
// never lost. It holds the key as a call does (Family.Enter) while it sets
// the mode, so that the family cannot drop the key in between; once in a
// mode the key is never dropped (a resumed one may go again). The Event and
// the hooks name that breaker, which is b of operate when it is still the
// key's.
func (f *Family) operateKey(key string, to State, reason string) {
	k := f.Enter(key)
	defer k.Done()
	k.Breaker().operateHere(to, reason)
}

// operateHere is operate on b itself.
func (b *Breaker) operateHere(to State, reason string) {
	full := operatorReason(to, reason)
	b.mu.Lock()
	b.envMode.Store(false) // the operator's decision now: a family keeps the key
	fresh := false
	if !b.setModeLocked(to, full) && to == Closed {
		// Resume of a CLOSED breaker: fresh counts all the same (SPEC
		// §14), which an operator resuming "to start over" counts on.
		cur := b.state.Load()
		b.startPeriodLocked(cur, Closed, b.reg.clock.Now(), 0)
		fresh = true
	}
	if ms, ok := b.reg.sharer().(ModeSharer); ok {
		ms.Mode(b, to, full)
	}
	b.mu.Unlock()
	b.reg.flush()
	if fresh {
		b.reg.log().Info(fmt.Sprintf("breaker[%s] resumed while CLOSED: counts start afresh", b.cfg().Name),
			"breaker", b.cfg().Name, "reason", full)
	}
}

// setModeLocked moves the breaker to mode to (Closed: out of any mode and
// state) with the Event's reason, which is full; the move is not passed to
// the Sharer's Transition (modes go through ModeSharer.Mode). It reports
// whether the state changed. Isolating an isolated breaker again with
// another reason gives its refusals that reason, so that callers read what
// the operator said last; it records no Event, since it is no transition
// (SPEC §14 keeps the one Event that is not a transition for Update).
func (b *Breaker) setModeLocked(to State, reason string) bool {
	if State(b.state.Load()&stateMask) == to {
		if to == Isolated && b.isolatedReason() != reason {
			b.setReject(newIsolatedError(b.cfg().Name, reason))
		}
		return false
	}
	if to == Isolated {
		// Before the state word says ISOLATED, so that no admission of the
		// new period finds the rejection of an older one (or none).
		b.setReject(newIsolatedError(b.cfg().Name, reason))
	}
	b.peerMove = true
	b.transitionLocked(to, reason, 0)
	b.peerMove = false
	return true
}

// PeerMode applies a mode an operator set in a peer of the fleet (origin
// names it; reason is the Event's reason there, such as "isolated by
// operator: maintenance"): mode Isolated or Bypassed puts the breaker in
// it, Closed ends a mode (a peer's Resume) and does nothing to a breaker
// in none. The event's reason is "peer <origin>: <reason>". It reports
// whether the breaker changed. The move is not passed back to the
// [Sharer]. For fleet integrations such as package redisstate.
func (b *Breaker) PeerMode(origin string, mode State, reason string) bool {
	if mode != Closed && !mode.isMode() {
		return false
	}
	reason = fmt.Sprintf("peer %s: %s", origin, strings.TrimSpace(reason))
	b.mu.Lock()
	changed := false
	if mode.isMode() || State(b.state.Load()&stateMask).isMode() {
		changed = b.setModeLocked(mode, reason)
		b.envMode.Store(false) // an operator's decision, in a peer
	}
	b.mu.Unlock()
	b.reg.flush()
	return changed
}
