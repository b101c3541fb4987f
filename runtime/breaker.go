package runtime

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/breakergen/breakergen/runtime/internal/core"
)

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
// pass to [Breaker.Release] (or [Breaker.Record]) exactly once. A Token is
// a value and the breaker keeps no record of it, so a second Release of
// one Token is not refused: it counts the outcome again (as a second
// sync.WaitGroup.Done would be a bug of the caller's), except on a
// HALF_OPEN probe, whose slot is freed only once. The zero Token is not
// valid.
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
	// own is the state and fails words of a breaker that is not a family
	// key's, which state and fails point to: read on every call; written
	// only by transitions, but for fails. fails is read by every success
	// (to see that it has no failures to clear) and written by failures:
	// on the state word's line, so that a success reads one line of the
	// breaker, not two. A family's key's breaker keeps its words in the
	// key's cell instead, on the line a call on the key reads of its key
	// (core.KeyEntry, SPEC §15).
	own   core.Words
	state *atomic.Uint64 // period<<32 | flags | State
	fails *atomic.Uint64 // uint32(period)<<32 | consecutive failures in CLOSED

	reject atomic.Pointer[error]  // the rejection (*OpenError) of the current period
	reg    *Registry              // owner: clock, logger, events
	conf   atomic.Pointer[Config] // with defaults applied; replaced whole by Registry.Update (see update.go)
	class  classifier             // nil for the default rule
	count  bool                   // exact call counting (WithCallCounts)
	flags  uint64                 // under mu: countFlag (count, or reshaped: update.go), core.LoadFlag
	stamps stamps                 // the clock of lastFailure and lastSuccess
	win    atomic.Pointer[window] // nil without a window, SlowCall or InFlight; Update swaps it
	// fast is the lock-free success count of win (core.Window) when the
	// protocol may count a success there itself: a time window on the real
	// clock, its calls not timed and not counted (WithCallCounts); else
	// nil. Routes read it through core.Breaker.Win, so a window that
	// Update puts in place is theirs at once.
	fast atomic.Pointer[core.Window]
	// fastRoutes: fast was set once, so routes may admit a WindowFlag word
	// on their fast path, as only an untimed window allows (see
	// Breaker.reshapeLocked). Guarded by mu.
	fastRoutes bool
	// winSince and slotsSince are the first state periods whose calls
	// the window and the bulkhead hold (see update.go).
	winSince, slotsSince atomic.Uint32
	// slotTracked: calls are timed (SlowCall, InFlight) from when they
	// hold their concurrency slot, not from their admission.
	slotTracked atomic.Bool
	injector    *injector // nil unless the settings inject faults or latency (inject.go)
	load                  // Config.Concurrency and Throttle; see bulkhead.go
	_           [64]byte  // keep the counters below off this cache line

	// Written by failures and probes; periods tagged like the state word
	// (fails is on the state word's line, above).
	probes atomic.Uint64 // uint32(period)<<32 | probes in flight in HALF_OPEN

	failures    atomic.Uint64
	ignored     atomic.Uint64
	limited     atomic.Uint64
	canceled    atomic.Uint64
	injected    atomic.Uint64 // injected faults (inject.go)
	lastFailure atomic.Int64  // a stamp (see stamps), 0 for never
	hold        atomic.Int64  // the longest timeout of a route through it (see ProbeWindow)
	_           [64]byte

	// Written on every call only when counting is on (WithCallCounts).
	// rejections is written on every refusal, counting or not, on
	// lines of its own once the breaker has left CLOSED (core.Tally), so
	// that refusals on several CPUs share no line.
	calls       atomic.Uint64
	successes   atomic.Uint64
	rejections  core.Tally
	lastSuccess atomic.Int64 // a stamp, like lastFailure
	_           [64]byte

	core core.Breaker // what the call protocol drives; see package core

	mu           sync.Mutex // guards the fields below and every transition
	stateChanges uint64
	transitions  [5][5]uint64 // [from][to]
	openedAt     time.Time
	nextProbe    time.Time
	probeWins    int      // consecutive probe successes in this HALF_OPEN period
	inflight     []probe  // HALF_OPEN probes whose outcome is pending
	reclaimed    []uint64 // admissions of the latest reclaimed probes
	probeSeq     uint64
	timer        Timer     // OPEN: the move to HALF_OPEN; HALF_OPEN: probe reclaim
	peerMove     bool      // the transition under way is not news for the fleet: a peer's, or a lease's lapse (see fleet.go)
	failedProbes int       // failed probes in a row since the last close (see backoff.go)
	reclaimAt    time.Time // HALF_OPEN: when timer reclaims, the earliest probe deadline
	leaseEnd     time.Time // HALF_OPEN on a Sharer's lease: when the lease ends (see LeaseSharer); else zero

	fam *Family // guarded by mu: the family of a per-key breaker, else nil (see family.go)
	// envMode is set while the breaker's mode is the one the environment
	// gave it as it was made (BREAKER_<NAME>_MODE, of its name or its
	// family's), cleared by any later mode: a family may drop such a key,
	// which comes back in the same mode (see droppable).
	envMode atomic.Bool
	// home is, under mu, the family that took this breaker in as a key's
	// (Family.insert); unlike fam it stays once the key is dropped, so
	// that an operator's mode set through a dropped *Breaker reaches the
	// key's live breaker (Breaker.operate).
	home *Family
	// joining is, under mu, the family a new key's breaker is being made
	// for until the family takes it in (Family.insert): a peer's note read
	// as it is made ([Sharer.Created]) opens it within the family's
	// MaxOpen too.
	joining *Family
	// keyed is set, never cleared, once the breaker is a family's key or
	// is being made as one (joining): PlainBreakers lists a breaker of a
	// family's name made by hand until then.
	keyed atomic.Bool
	// famTrip is set, under mu, when the family has counted this
	// breaker's trip already (Family.mayTrip), for the transition that
	// follows at once not to count it again.
	famTrip bool
}

// newBreakerIn returns a new breaker, made in room (a zero Breaker never
// used, see [core.KeyMaker]) when room is not nil, with its state and
// fails words in words (a family key's cell) when that is not nil.
func newBreakerIn(room *Breaker, words *core.Words, reg *Registry, cfg Config, class classifier) *Breaker {
	b := room
	if b == nil {
		b = new(Breaker)
	}
	if words == nil {
		words = &b.own
	}
	b.state, b.fails = &words.State, &words.Fails
	b.reg, b.class, b.count, b.stamps = reg, class, reg.countCalls, newStamps(reg.clock)
	b.conf.Store(&cfg)
	if b.count {
		b.flags = countFlag
	}
	if cfg.windowed() || cfg.InFlight > 0 {
		var clock Clock
		if b.stamps.mono {
			clock = reg.clock
		}
		win := newWindow(&b.conf, clock)
		win.resetLocked(1)
		b.win.Store(win)
	}
	b.newLoad()
	b.injector = newInjector(cfg)
	b.state.Store(periodOne | b.closedFlags()) // period 1: no admission word is 0
	b.fails.Store(periodOne)
	b.probes.Store(periodOne)
	b.inflight = make([]probe, 0, min(cfg.HalfOpenMax, 64)) // grows past 64 probes at once
	b.reclaimed = make([]uint64, 0, 16)
	b.core = core.Breaker{State: b.state, Fails: b.fails, Reject: &b.reject, Rejections: &b.rejections, Slots: b.bareSlots(), Win: &b.fast, Ops: (*ops)(b)}
	b.setFastLocked(b.win.Load())
	return b
}

// setFastLocked makes the lock-free success count of win, the breaker's
// window, the protocol's (see Breaker.fast) when it can take it. A timed
// call's success is counted there too, once the breaker knows it was not
// slow (see record): not by the protocol. b.mu is held, or b is new.
func (b *Breaker) setFastLocked(win *window) {
	if win == nil || win.fast == nil || b.count || win.tracking {
		b.fast.Store(nil)
		return
	}
	b.fastRoutes = true // before the pointer: a route that sees it may skip Admit
	b.fast.Store(win.fast)
}

// closedFlags returns the flags of a CLOSED state word that starts a
// period: an empty window is not clean, so every call is recorded.
func (b *Breaker) closedFlags() uint64 {
	if b.win.Load() != nil {
		return b.flags | windowFlag
	}
	return b.flags
}

func init() {
	core.BreakerOf = func(b any) *core.Breaker { return &b.(*Breaker).core }
	core.IsRealClock = func(c any) bool { _, ok := c.(realClock); return ok }
	core.Attach = func(reg, cfg any, rate float64, burst int) (any, any) {
		b, l := reg.(*Registry).attach(cfg.(Config), rate, burst)
		if l == nil {
			return b, nil // not a typed nil
		}
		return b, l
	}
	core.Detached = func(reg, cfg any) any { return newBreakerIn(nil, nil, reg.(*Registry), cfg.(Config), nil) }
	core.WarnOnce = func(reg any, kind, key, msg string) {
		if r := reg.(*Registry); r.warnOnce(kind, key) {
			r.log().Warn(msg)
		}
	}
	core.Family = func(reg, cfg, fc, km any) any {
		return reg.(*Registry).family(cfg.(Config), fc.(FamilyConfig), km.(*core.KeyMaker[Breaker]))
	}
}

// ProbeWindow returns how long a HALF_OPEN probe may keep its slot before
// it is reclaimed as a failure: the reset window, or the longest timeout
// of a generated route through the breaker when that is longer. A fleet
// (package redisstate) leases the probe for as long.
func (b *Breaker) ProbeWindow() time.Duration {
	return max(b.cfg().ResetTimeout, time.Duration(b.hold.Load()))
}

// Name returns the breaker's name.
func (b *Breaker) Name() string { return b.cfg().Name }

// Config returns the breaker's configuration, with defaults applied.
func (b *Breaker) Config() Config { return *b.cfg() }

// State returns the current state. It also makes any move that is due (an
// elapsed OPEN period, a probe slot past its deadline, a call in flight
// past [Config].InFlight), so it never reports a state that time has
// already ended.
func (b *Breaker) State() State {
	b.advance()
	return State(b.state.Load() & stateMask)
}

// transitionLocked is the one place that changes the state. It does nothing
// for a same-state move. window is the length of an OPEN period. It adds
// the Event to Registry.Events, starts a new state period (outcomes of
// calls admitted before are then ignored), and queues the Event for the
// log and the hooks, which Registry.flush runs once b.mu is released: a
// reader who sees the new state (State takes no lock) finds its Event in
// Events, and a hook, which may run on a goroutine already delivering,
// finds the new state.
func (b *Breaker) transitionLocked(to State, reason string, window time.Duration) {
	cur := b.state.Load()
	from := State(cur & stateMask)
	if from == to {
		return
	}
	lasted := b.nextProbe.Sub(b.openedAt) // the OPEN period ending, if from is OPEN
	if reason == "" {
		reason = defaultReason(from, to, lasted)
	}
	ev := Event{Source: b.cfg().Name, From: from, To: to, Reason: truncate(foldSpace(reason), reasonMax)}
	// In the log before the state shows, delivered to the hooks after:
	// they read the new state, and run in the log's order, whose times
	// reserve stamps.
	n, now := b.reg.reserve(ev, false)
	ev.Time = now
	b.backoffLocked(from, to)
	if to != Closed {
		b.rejections.Spread() // refusals from now on, perhaps on every CPU
	}
	b.startPeriodLocked(cur, to, now, window)
	b.reg.ready(n)
	if b.fam != nil {
		if b.famTrip {
			b.famTrip = false // counted as its trip was allowed
		} else {
			b.fam.moved(from, to)
		}
	}
	b.stateChanges++
	b.transitions[from][to]++
	b.sharedLocked(ev, window)
}

// startPeriodLocked moves to state to in a new period, clearing per-period
// counts and arming the period's timer.
func (b *Breaker) startPeriodLocked(cur uint64, to State, now time.Time, window time.Duration) {
	next := cur&^0xffffffff + periodOne | b.flags | uint64(to)
	if to == Closed || to == Bypassed {
		next |= b.closedFlags()
	}
	if period(next) == 0 { // wrapped: no admission word may be 0
		next += periodOne
	}
	if win := b.win.Load(); win != nil {
		win.mu.Lock()
		win.resetLocked(period(next))
		win.mu.Unlock()
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
	b.leaseEnd = time.Time{}
	switch to {
	case Open:
		b.openedAt = now
		b.nextProbe = now.Add(window)
		b.setReject(newOpenError(b.cfg().Name, Open, b.nextProbe, 0))
		b.timer = b.reg.clock.AfterFunc(window, func() { b.openElapsed(next) })
	case HalfOpen:
		b.setReject(newOpenError(b.cfg().Name, HalfOpen, time.Time{}, b.cfg().HalfOpenMax))
	}
	b.state.Store(next)
}

// Reset puts the breaker in CLOSED and clears every counter, whatever its
// state; in an operator's mode (ISOLATED, BYPASSED) it clears the counters
// and the mode stays: only [Breaker.Resume] ends one. It logs, but records
// no [Event] and calls no hook: a reset is an operator's act, not a
// degradation. Calls admitted before it no longer count.
func (b *Breaker) Reset() {
	b.mu.Lock()
	cur := b.state.Load()
	to := Closed
	if st := State(cur & stateMask); st.isMode() {
		to = st // only Resume ends a mode
	}
	b.failedProbes = 0
	b.startPeriodLocked(cur, to, b.reg.clock.Now(), 0)
	if b.fam != nil {
		b.fam.moved(State(cur&stateMask), to) // an OPEN key gives its maxopen share back
	}
	b.stateChanges = 0
	b.transitions = [5][5]uint64{}
	b.openedAt = time.Time{}
	for _, c := range []*atomic.Uint64{&b.failures, &b.ignored, &b.limited, &b.canceled, &b.injected, &b.calls, &b.successes} {
		c.Store(0)
	}
	b.rejections.Reset()
	b.resetLoad()
	b.lastFailure.Store(0)
	b.lastSuccess.Store(0)
	b.mu.Unlock()
	b.reg.log().Info(fmt.Sprintf("breaker[%s] reset → %s", b.cfg().Name, to),
		"breaker", b.cfg().Name, "from", State(cur&stateMask).String(), "to", to.String())
}

// Do runs fn through the breaker: it returns the rejection without calling
// fn when the breaker does not admit the call, and otherwise fn's error,
// which it reports like [Breaker.Release]. A panic in fn counts as a
// failure, frees the call's slot and is re-raised. Generated wrappers run
// on the same protocol. A nil fn is an error, returned before the breaker
// is asked: no call is admitted or counted.
//
// A budget in ctx ([WithBudget]) applies as to a generated wrapper's call:
// fn is one try, spent once the breaker (and its bulkhead and throttle)
// admitted the call, so a refused call costs nothing; when the budget is
// spent Do returns [ErrBudget] and fn is not called.
//
// A provenance record in ctx ([WithProvenance]) is written as a generated
// wrapper writes it, unless an outer guarded call holds it: Source is the
// breaker's name when fn succeeded, and otherwise Skipped says why it did
// not answer; Tries is 1 when fn was called. Guarded calls that fn makes
// with ctx leave the record to Do.
func (b *Breaker) Do(ctx context.Context, fn func(context.Context) error) (err error) {
	if fn == nil {
		return fmt.Errorf("breaker[%s]: Do with a nil fn", b.cfg().Name)
	}
	if ctx == nil {
		ctx = context.Background()
	}
	st := core.From(ctx)
	if p, _ := st.Claim().(*Provenance); p != nil {
		return b.doWritten(ctx, st, p, fn) // provenance.go
	}
	return b.do(ctx, st.BudgetOf(), fn) // nil without a budget: its every step is then a no-op
}

// do is Do once its record, if any, is claimed: bud is the ctx's budget.
func (b *Breaker) do(ctx context.Context, bud *core.Budget, fn func(context.Context) error) (err error) {
	if b.reg.rec != nil {
		return b.doRecorded(ctx, bud, fn) // record.go
	}
	if !bud.Available() {
		return ErrBudget
	}
	t, err := b.Acquire(ctx)
	if err != nil {
		return err
	}
	if !bud.Spend() { // a sibling call spent the last try meanwhile
		b.Record(t, Ignored, nil)
		return ErrBudget
	}
	if b.injector != nil {
		if t.word, err = b.inject(ctx, t.word, 0); err != nil { // Do has no timeout of its own
			return err // settled by inject
		}
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

// cfg returns the breaker's settings, with defaults applied: one value,
// which [Registry.Update] replaces whole; treat it as read-only.
func (b *Breaker) cfg() *Config { return b.conf.Load() }
