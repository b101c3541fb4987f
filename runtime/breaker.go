package runtime

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/breakergen/breakergen/runtime/internal/core"
)

// Defaults for the zero fields of a [Config] and for [NewRegistry], and the
// longest cooldown an error can ask for.
const (
	DefaultFailureThreshold = 5
	DefaultResetTimeout     = 30 * time.Second
	DefaultHalfOpenMax      = 1
	DefaultSuccessThreshold = 1

	// DefaultEventCapacity is how many events a [Registry] keeps unless
	// [WithEventCapacity] says otherwise.
	DefaultEventCapacity = 100

	// EventQueueCapacity is how many transitions a [Registry] lets wait
	// for their log line and hooks (64 KB, allocated at the first
	// transition). When a log handler or a hook is slower than the
	// transitions, the queue fills, and each new transition drops the
	// oldest queued one: its log line and hook calls are skipped and
	// counted in [Health].DroppedEvents, but its [Event] is in
	// [Registry.Events] and the state change itself is never lost.
	EventQueueCapacity = 1024

	// MaxCooldown caps the OPEN period an error's RetryAfter can ask for.
	MaxCooldown = 24 * time.Hour
)

// Config is the configuration of one named breaker. Zero (or negative)
// fields take the defaults.
type Config struct {
	// Name identifies the breaker in its registry, in logs and in events.
	// Default "default".
	Name string
	// FailureThreshold is how many consecutive failures trip the breaker
	// from CLOSED to OPEN. Default 5 without a window; with one (WindowCalls
	// or WindowPeriod), 0 means no threshold: only the window's rates trip.
	FailureThreshold int
	// ResetTimeout is how long OPEN lasts before a probe is allowed.
	// Default 30s.
	ResetTimeout time.Duration
	// HalfOpenMax is how many probe calls HALF_OPEN admits at once.
	// Default 1.
	HalfOpenMax int
	// SuccessThreshold is how many consecutive probe successes close the
	// breaker. Default 1.
	SuccessThreshold int

	// WindowCalls (the last N calls admitted in CLOSED, N >= 10) or
	// WindowPeriod (the calls that ended in the last D, D >= 1s, kept as
	// buckets of D/10 that roll lazily) turns on rate-based tripping; they
	// are one setting, and a layer that sets either replaces the lower
	// layer's window. With a window, FailureThreshold applies only when it
	// is given explicitly; either condition trips. The window is emptied at
	// every transition. Default none. A smaller window is raised to the
	// smallest (10 calls, 1s), a count window is capped at 1<<20 calls, and
	// when both are set WindowCalls wins. A count window reads no clock; a
	// time window reads it once as each call ends.
	WindowCalls  int
	WindowPeriod time.Duration
	// FailureRate (0..1) trips the breaker when the window holds at least
	// MinimumCalls ended calls and failures/calls reaches it. Default 0.5,
	// also for a value that is not above 0; above 1 means 1. Ignored
	// without a window.
	FailureRate float64
	// MinimumCalls is how many calls the window must hold before a rate
	// applies. Default 20; it is at most WindowCalls. Ignored without a
	// window.
	MinimumCalls int
	// SlowCall makes a call that ends more than this long after its
	// admission a slow one, whatever its outcome; SlowRate (0..1, default
	// 0.5, with FailureRate's rules) trips the breaker when slow/calls in
	// the window reaches it. Default none; ignored without a window. It
	// reads the clock as each call is admitted and as it ends.
	SlowCall time.Duration
	SlowRate float64
	// InFlight counts a call admitted in CLOSED that is still running more
	// than this long after its admission as one failure, for
	// FailureThreshold and the window: at the next admission or look at the
	// state ([Breaker.State], Stats, Health), with no timer, or when it
	// ends, whichever comes first. An admission that finds such a call
	// counts it first, and is refused when that trips the breaker. Its
	// later outcome is ignored. Default none; it works with or without a
	// window and reads the clock as each call is admitted and as it ends.
	InFlight time.Duration

	// Concurrency is the most calls of this name in flight at once (a
	// bulkhead). A call over the limit waits for a slot, first come first
	// served, up to the route's maxwait or its ctx's deadline, then fails
	// with [ErrBulkheadFull]. Default 0: no limit.
	Concurrency int
	// Throttle is K of adaptive client-side throttling (the Google SRE
	// book's): over the last two minutes, with R requests and A accepted
	// (successes, excluded errors included), a new call is refused with
	// [ErrThrottled] with probability max(0, (R − K·A) / (R + 1)), drawn
	// from the registry's source ([WithRand]); refused calls count in R.
	// Values between 0 and 1 are taken as 1. Default 0: none (so are NaN
	// and infinities).
	Throttle float64
}

func (c Config) withDefaults() Config {
	if c.Name == "" {
		c.Name = "default"
	}
	c = c.windowDefaults()
	switch {
	case c.FailureThreshold > 0:
	case c.windowed():
		c.FailureThreshold = 0 // not given: the window's rates alone trip
	default:
		c.FailureThreshold = DefaultFailureThreshold
	}
	if c.ResetTimeout <= 0 {
		c.ResetTimeout = DefaultResetTimeout
	}
	if c.HalfOpenMax <= 0 {
		c.HalfOpenMax = DefaultHalfOpenMax
	}
	if c.SuccessThreshold <= 0 {
		c.SuccessThreshold = DefaultSuccessThreshold
	}
	if !(c.Throttle > 0 && c.Throttle <= maxThrottleK) {
		c.Throttle = 0 // none; a NaN would make the Config unequal to itself
	}
	return c
}

// Outcome is how a call counts for its breaker.
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

// The state word and its bits are described in package core.
const (
	stateMask  = core.StateMask
	countFlag  = core.CountFlag
	fastMask   = core.FastMask
	probeShift = core.ProbeShift
	probeMask  = core.ProbeMask
	periodOne  = core.PeriodOne
)

func period(w uint64) uint32 { return core.Period(w) }

// Token is the admission of one call by [Breaker.Acquire]: a small value to
// pass to [Breaker.Release] exactly once. The zero Token is not valid.
type Token struct {
	b    *Breaker
	ctx  context.Context
	word uint64 // the admission: state word, plus the probe id
}

// probe is a HALF_OPEN admission whose outcome is pending.
type probe struct {
	id       uint64
	deadline time.Time     // after this the slot is reclaimed as a failure
	window   time.Duration // how long the slot may be held
}

// Breaker is one named circuit breaker. Get one from [Registry.Breaker];
// the zero value is not usable. A Breaker is safe for concurrent use.
type Breaker struct {
	// Read on every call; written only by transitions.
	state  atomic.Uint64         // period<<32 | flags | State
	reject atomic.Pointer[error] // the rejection (*OpenError) of the current period
	reg    *Registry             // owner: clock, logger, events
	cfg    Config                // with defaults applied; immutable
	class  classifier            // nil for the default rule
	count  bool                  // exact call counting (WithCallCounts)
	flags  uint64                // countFlag when count, core.LoadFlag with load control
	stamps stamps                // the clock of lastFailure and lastSuccess
	win    *window               // nil without a window, SlowCall or InFlight
	load                         // Config.Concurrency and Throttle; see bulkhead.go
	_      [64]byte              // keep the counters below off this cache line

	// Written by failures and probes; periods tagged like the state word.
	fails  atomic.Uint64 // uint32(period)<<32 | consecutive failures in CLOSED
	probes atomic.Uint64 // uint32(period)<<32 | probes in flight in HALF_OPEN

	failures    atomic.Uint64
	ignored     atomic.Uint64
	limited     atomic.Uint64
	canceled    atomic.Uint64
	lastFailure atomic.Int64 // a stamp (see stamps), 0 for never
	hold        atomic.Int64 // the longest timeout of a route through it (see ProbeWindow)
	_           [64]byte

	// Written on every call only when counting is on (WithCallCounts).
	calls       atomic.Uint64
	successes   atomic.Uint64
	rejections  atomic.Uint64
	lastSuccess atomic.Int64 // a stamp, like lastFailure
	_           [64]byte

	core core.Breaker // what the call protocol drives; see package core

	mu           sync.Mutex // guards the fields below and every transition
	stateChanges uint64
	transitions  [3][3]uint64 // [from][to]
	openedAt     time.Time
	nextProbe    time.Time
	probeWins    int      // consecutive probe successes in this HALF_OPEN period
	inflight     []probe  // HALF_OPEN probes whose outcome is pending
	reclaimed    []uint64 // admissions of the latest reclaimed probes
	probeSeq     uint64
	timer        Timer // OPEN: the move to HALF_OPEN; HALF_OPEN: probe reclaim
	peerMove     bool  // the transition under way is a fleet peer's (see fleet.go)
}

func newBreaker(reg *Registry, cfg Config, class classifier) *Breaker {
	b := &Breaker{reg: reg, cfg: cfg, class: class, count: reg.countCalls, stamps: newStamps(reg.clock)}
	if b.count {
		b.flags = countFlag
	}
	if cfg.windowed() || cfg.InFlight > 0 {
		b.win = newWindow(&b.cfg)
		b.win.resetLocked(1)
	}
	b.newLoad()
	b.state.Store(periodOne | b.closedFlags()) // period 1: no admission word is 0
	b.fails.Store(periodOne)
	b.probes.Store(periodOne)
	b.inflight = make([]probe, 0, min(cfg.HalfOpenMax, 64)) // grows past 64 probes at once
	b.reclaimed = make([]uint64, 0, 16)
	b.core = core.Breaker{State: &b.state, Fails: &b.fails, Reject: &b.reject, Slots: b.bareSlots(), Ops: (*ops)(b)}
	return b
}

// closedFlags returns the flags of a CLOSED state word that starts a
// period: an empty window is not clean, so every call is recorded.
func (b *Breaker) closedFlags() uint64 {
	if b.win != nil {
		return b.flags | windowFlag
	}
	return b.flags
}

func init() {
	core.BreakerOf = func(b any) *core.Breaker { return &b.(*Breaker).core }
}

// ProbeWindow returns how long a HALF_OPEN probe may keep its slot before
// it is reclaimed as a failure: the reset window, or the longest timeout
// of a generated route through the breaker when that is longer. A fleet
// (package redisstate) leases the probe for as long.
func (b *Breaker) ProbeWindow() time.Duration {
	return max(b.cfg.ResetTimeout, time.Duration(b.hold.Load()))
}

// Name returns the breaker's name.
func (b *Breaker) Name() string { return b.cfg.Name }

// Config returns the breaker's configuration, with defaults applied.
func (b *Breaker) Config() Config { return b.cfg }

// State returns the current state. It also makes any move that is due (an
// elapsed OPEN period, a probe slot past its deadline, a call in flight
// past [Config].InFlight), so it never reports a state that time has
// already ended.
func (b *Breaker) State() State {
	b.advance()
	return State(b.state.Load() & stateMask)
}

// Acquire asks the breaker to admit one call. On success it returns a Token
// that must be passed to [Breaker.Release] exactly once with the call's
// error; otherwise it returns an error matching [ErrOpen] and the call must
// not be made. ctx is the caller's context (nil means background): Release
// uses it to classify a [context.Canceled] outcome. Acquire allocates
// nothing.
func (b *Breaker) Acquire(ctx context.Context) (Token, error) {
	w, err := b.admit(0)
	if err == nil && w&core.LoadFlag != 0 {
		if err = b.enterLoad(ctx, w, 0); err != nil {
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
		case Closed:
			w := s
			if b.win != nil && b.win.tracking {
				var ok bool
				if w, ok = b.admitTracked(s); !ok {
					s = b.state.Load() // overdue calls were counted
					continue
				}
			}
			if b.count {
				b.calls.Add(1)
			}
			return w, nil
		case Open:
			return 0, b.rejected()
		}
		// HALF_OPEN: claim a slot of this period without a lock.
		p := b.probes.Load()
		if period(p) != period(s) {
			s = b.state.Load() // the period ended under us
			continue
		}
		if int(uint32(p)) >= b.cfg.HalfOpenMax {
			return 0, b.rejected()
		}
		if !b.probes.CompareAndSwap(p, p+1) {
			s = b.state.Load()
			continue
		}
		if w, ok := b.admitProbe(s, hold); ok {
			return w, nil
		}
		if b.state.Load() == s { // the period ran out of probe ids
			return 0, b.rejected()
		}
		s = b.state.Load()
	}
}

func (b *Breaker) rejected() error {
	if b.count {
		b.rejections.Add(1)
	}
	return *b.reject.Load()
}

// setReject makes e the rejection of the period about to start.
func (b *Breaker) setReject(e *OpenError) {
	err := error(e)
	b.reject.Store(&err)
}

// admitProbe registers a probe whose slot was claimed in state word s. It
// fails when the period ended in between (the claimed slot went with it),
// or when the period has given out every probe id (the slot is freed).
func (b *Breaker) admitProbe(s uint64, hold time.Duration) (uint64, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.state.Load() != s {
		return 0, false
	}
	if b.probeSeq >= probeMask>>probeShift {
		b.probes.Add(^uint64(0))
		return 0, false
	}
	if b.count {
		b.calls.Add(1)
	}
	now := b.reg.clock.Now()
	b.probeSeq++
	window := max(b.cfg.ResetTimeout, hold)
	b.inflight = append(b.inflight, probe{id: b.probeSeq, deadline: now.Add(window), window: window})
	if b.timer == nil {
		b.timer = b.reg.clock.AfterFunc(window, func() { b.reclaim(s) })
	}
	return s | b.probeSeq<<probeShift, true
}

// Release reports the outcome of a call admitted by [Breaker.Acquire]: nil
// is a success; a non-nil error is classified by the breaker's
// classifier ([WithClassifier]), or else is a failure, except a [context.Canceled] while the
// caller's context is done, which is ignored. The outcome counts only if the
// breaker is still in the state period that admitted the call. Release
// allocates nothing.
func (b *Breaker) Release(t Token, err error) {
	b.core.Release(t.ctx, t.word, err)
}

// Record reports the outcome of a call admitted by [Breaker.Acquire] as
// decided by the caller; err, if not nil, becomes the reason of a
// transition it causes. Like Release it takes each Token once.
func (b *Breaker) Record(t Token, o Outcome, err error) {
	b.finish(t.word, o, err)
}

// Classify returns how err, the error of a call made with ctx, counts for
// this breaker (see [Breaker.Release]).
func (b *Breaker) Classify(ctx context.Context, err error) Outcome {
	if err == nil {
		return Success
	}
	if b.class != nil {
		return b.class(ctx, err)
	}
	if ctx != nil && ctx.Err() != nil && errors.Is(err, context.Canceled) {
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
	if w&core.LoadFlag != 0 {
		b.exitLoad(o)
	}
	return b.outcome(w, o, err)
}

// outcome counts outcome o of the call admitted as w. It reports false
// when the call had been counted already (a probe whose slot was
// reclaimed, a call found in flight past InFlight) and o was dropped.
func (b *Breaker) outcome(w uint64, o Outcome, err error) bool {
	if State(w&stateMask) == HalfOpen {
		return b.probeDone(w&^probeMask, w&probeMask>>probeShift, o, err)
	}
	var (
		bits uint8
		now  int64
		age  time.Duration // > 0: the call ran longer than InFlight
	)
	if b.win != nil && b.win.tracking && w&windowFlag != 0 {
		var ok bool
		if o, bits, now, age, ok = b.endTracked(w, o); !ok {
			return false // counted when found overdue, or forgotten
		}
	}
	b.countOutcome(o)
	switch o {
	case Success:
		if uint32(b.fails.Load()) != 0 {
			b.clearFails(w)
		}
		if b.win != nil {
			b.record(w, bits, now)
		}
	case Failure:
		b.closedFailure(w, err, age, bits|failedBit, now)
	}
	return true
}

// closedFailure counts a failure of the CLOSED call admitted as w towards
// the threshold and the window, at instant now (0 when not read): its
// error is err, or it ran age (> 0) past InFlight; bits are its outcome
// bits.
func (b *Breaker) closedFailure(w uint64, err error, age time.Duration, bits uint8, now int64) {
	if age == 0 {
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
			if int(uint32(f))+1 == b.cfg.FailureThreshold {
				reason := reasonOf(err)
				if age > 0 {
					reason = overdueReason(age, b.cfg.InFlight)
				}
				b.trip(w, reason, b.cfg.ResetTimeout)
				return
			}
			break
		}
	}
	if b.win != nil {
		b.record(w, bits, now)
	}
}

// countOutcome adds one outcome to the totals. It reads the clock before
// the atomic writes: the clock read waits for earlier instructions to
// finish, a locked write among them (about 4 ns of a failing call).
func (b *Breaker) countOutcome(o Outcome) {
	switch o {
	case Success:
		if b.count {
			now := b.stamps.now()
			b.successes.Add(1)
			b.lastSuccess.Store(now)
		}
	case Failure:
		now := b.stamps.now()
		b.failures.Add(1)
		b.lastFailure.Store(now)
	case Ignored:
		b.ignored.Add(1)
	}
}

// trip moves the breaker to OPEN for window if it is still in the CLOSED
// period of admission w.
func (b *Breaker) trip(w uint64, reason string, window time.Duration) {
	b.mu.Lock()
	if s := b.state.Load(); period(s) != period(w) || State(s&stateMask) != Closed {
		b.mu.Unlock()
		return
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
	b.countOutcome(o)
	if b.state.Load() != s || !b.removeProbeLocked(id) {
		b.mu.Unlock()
		return true // a later period, or the slot was reclaimed
	}
	switch o {
	case Success:
		b.probeWins++
		if b.probeWins >= b.cfg.SuccessThreshold {
			b.transitionLocked(Closed, fmt.Sprintf("half-open probe succeeded (%d/%d)",
				b.probeWins, b.cfg.SuccessThreshold), 0)
		}
	case Failure:
		reason, d, ok := cooldown(err)
		if !ok {
			reason, d = reasonOf(err), b.cfg.ResetTimeout
		}
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
			b.countOutcome(Failure)
			if len(b.reclaimed) == cap(b.reclaimed) {
				b.reclaimed = b.reclaimed[1:]
			}
			b.reclaimed = append(b.reclaimed, b.state.Load()|p.id<<probeShift)
			b.transitionLocked(Open, fmt.Sprintf("probe not released within %s, slot reclaimed as a failure",
				p.window), b.cfg.ResetTimeout)
			return
		}
		if p.deadline.Before(first) {
			first = p.deadline
		}
	}
	if b.timer == nil {
		s := b.state.Load()
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
	if State(s&stateMask) == Closed {
		if b.cfg.InFlight > 0 {
			b.checkOverdue(s)
		}
		return
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

// transitionLocked is the one place that changes the state. It does nothing
// for a same-state move. window is the length of an OPEN period. It starts a
// new state period (outcomes of calls admitted before are then ignored),
// records the Event and queues it for the log and the hooks, which
// Registry.flush runs once b.mu is released.
func (b *Breaker) transitionLocked(to State, reason string, window time.Duration) {
	cur := b.state.Load()
	from := State(cur & stateMask)
	if from == to {
		return
	}
	now := b.reg.clock.Now()
	lasted := b.nextProbe.Sub(b.openedAt) // the OPEN period ending, if from is OPEN
	b.startPeriodLocked(cur, to, now, window)
	b.stateChanges++
	b.transitions[from][to]++
	if reason == "" {
		reason = defaultReason(from, to, lasted)
	}
	ev := Event{Time: now, Source: b.cfg.Name, From: from, To: to, Reason: truncate(foldSpace(reason), reasonMax)}
	b.reg.record(ev)
	b.sharedLocked(ev, window)
}

// startPeriodLocked moves to state to in a new period, clearing per-period
// counts and arming the period's timer.
func (b *Breaker) startPeriodLocked(cur uint64, to State, now time.Time, window time.Duration) {
	next := cur&^0xffffffff + periodOne | b.flags | uint64(to)
	if to == Closed {
		next |= b.closedFlags()
	}
	if period(next) == 0 { // wrapped: no admission word may be 0
		next += periodOne
	}
	if b.win != nil {
		b.win.mu.Lock()
		b.win.resetLocked(period(next))
		b.win.mu.Unlock()
	}
	b.fails.Store(next &^ 0xffffffff)
	b.probes.Store(next &^ 0xffffffff)
	b.probeSeq = 0
	b.probeWins = 0
	b.inflight = b.inflight[:0]
	if b.timer != nil {
		b.timer.Stop()
		b.timer = nil
	}
	b.nextProbe = time.Time{}
	switch to {
	case Open:
		b.openedAt = now
		b.nextProbe = now.Add(window)
		b.setReject(newOpenError(b.cfg.Name, Open, b.nextProbe, 0))
		b.timer = b.reg.clock.AfterFunc(window, func() { b.openElapsed(next) })
	case HalfOpen:
		b.setReject(newOpenError(b.cfg.Name, HalfOpen, time.Time{}, b.cfg.HalfOpenMax))
	}
	b.state.Store(next)
}

// Reset puts the breaker in CLOSED and clears every counter, whatever its
// state. It logs, but records no [Event] and calls no hook: a reset is an
// operator's act, not a degradation. Calls admitted before it no longer count.
func (b *Breaker) Reset() {
	b.mu.Lock()
	cur := b.state.Load()
	b.startPeriodLocked(cur, Closed, b.reg.clock.Now(), 0)
	b.stateChanges = 0
	b.transitions = [3][3]uint64{}
	b.openedAt = time.Time{}
	for _, c := range []*atomic.Uint64{&b.failures, &b.ignored, &b.limited, &b.canceled, &b.calls, &b.successes, &b.rejections} {
		c.Store(0)
	}
	b.resetLoad()
	b.lastFailure.Store(0)
	b.lastSuccess.Store(0)
	b.mu.Unlock()
	b.reg.log().Info(fmt.Sprintf("breaker[%s] reset → %s", b.cfg.Name, Closed),
		"breaker", b.cfg.Name, "from", State(cur&stateMask).String(), "to", Closed.String())
}

// Do runs fn through the breaker: it returns the rejection without calling
// fn when the breaker does not admit the call, and otherwise fn's error,
// which it reports like [Breaker.Release]. A panic in fn counts as a
// failure, frees the call's slot and is re-raised. Generated wrappers run
// on the same protocol.
func (b *Breaker) Do(ctx context.Context, fn func(context.Context) error) (err error) {
	if ctx == nil {
		ctx = context.Background()
	}
	t, err := b.Acquire(ctx)
	if err != nil {
		return err
	}
	defer b.exit(t, &err)
	err = core.PanicGuard // still set after exit only if fn did not return
	return fn(ctx)
}

// exit reports the outcome of the call admitted as t, whose error is *errp.
// It must be called directly by defer, so that its recover sees a panic.
func (b *Breaker) exit(t Token, errp *error) {
	if *errp == core.PanicGuard {
		b.core.Unreturned(t.word, recover())
		return
	}
	b.core.Release(t.ctx, t.word, *errp)
}

// ops is a Breaker seen as the slow paths of [core.Ops]: methods that
// generated code reaches through package breakerimpl without their being
// in this package's API.
type ops Breaker

func (o *ops) b() *Breaker { return (*Breaker)(o) }

func (o *ops) Admit(hold time.Duration) (uint64, error) { return o.b().admit(hold) }
func (o *ops) Ignore(w uint64)                          { o.b().finish(w, Ignored, nil) }
func (o *ops) Withdraw(w uint64)                        { o.b().outcome(w, Ignored, nil) }
func (o *ops) ClearFails(w uint64)                      { o.b().clearFails(w) }

func (o *ops) LoadSucceeded(w uint64) {
	b := o.b()
	b.exitLoad(Success)
	if uint32(b.fails.Load()) != 0 {
		b.clearFails(w)
	}
}

func (o *ops) Load(ctx context.Context, w uint64, maxWait time.Duration) error {
	return o.b().enterLoad(ctx, w, maxWait)
}

func (o *ops) Settle(ctx context.Context, w uint64, err error) {
	b := o.b()
	out := b.Classify(ctx, err)
	if b.finish(w, out, err) && out == Ignored {
		b.canceled.Add(1) // not for a call counted already: Canceled is within Ignored
	}
}

func (o *ops) Limited(w uint64) {
	if o.b().outcome(w, Ignored, nil) {
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

func (o *ops) SettleRate(rate float64, burst int) (float64, int) {
	return o.reg.settleRate(o.cfg.Name, rate, burst)
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
		return "", 0, false
	}
	d = min(d, MaxCooldown)
	return "retry after " + d.String() + ": " + reasonOf(err), d, true
}

// retryAfter returns what the first error in err's tree, depth first, with
// a RetryAfter() time.Duration method asks for; found is false when there
// is none. Every failing call asks, so it walks with one type switch per
// error (one cached type test) and no callback.
func retryAfter(err error) (d time.Duration, found bool) {
	for {
		switch e := err.(type) {
		case nil:
			return 0, false
		case interface{ RetryAfter() time.Duration }:
			return e.RetryAfter(), true
		case interface{ Unwrap() error }:
			err = e.Unwrap()
		case interface{ Unwrap() []error }:
			for _, err := range e.Unwrap() {
				if d, found = retryAfter(err); found {
					return d, true
				}
			}
			return 0, false
		default:
			return 0, false
		}
	}
}
