package breakerimpl

import (
	"context"
	"errors"
	"reflect"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/breakergen/breakergen/runtime"
	"github.com/breakergen/breakergen/runtime/internal/core"
)

// RouteConfig is one annotation line, resolved by the generator: the breaker
// (and limiter) a group of methods goes through, and the line's own keys.
type RouteConfig struct {
	// Breaker names the breaker and gives its settings; the first settings
	// registered for a name win.
	Breaker runtime.Config
	// Rate and Burst configure the limiter of the same name; Rate 0 means
	// the route has no limiter.
	Rate  float64
	Burst int
	// MaxWait bounds how long a call waits for a token and a concurrency
	// slot, the two waits together (besides its ctx's deadline); 0 means
	// only the ctx bounds them.
	MaxWait time.Duration
	// Timeout is the per-call deadline that generated code adds to the
	// method's ctx; 0 means none. A probe may hold its HALF_OPEN slot this
	// long when it is longer than the breaker's reset window.
	Timeout time.Duration
	// Exclude lists errors (matched with errors.Is) that count as success.
	Exclude []error
	// Attempts is the most tries per call, the first included; 0 or 1 means
	// one. Used through [Route.Retry].
	Attempts int
	// Backoff is the wait between tries (DefaultBackoff when 0); with
	// BackoffMax > 0 the wait before try n+1 is a full jitter in
	// [0, min(BackoffMax, Backoff·2^(n-1))].
	Backoff, BackoffMax time.Duration
	// Budget is the most upstream tries one call may spend; 0 means no
	// limit besides Attempts and the budgets in the ctx ([WithBudget]).
	Budget int
	// Hedge, on a chain's route, is how long the source being asked may
	// take before the chain also asks the next one ([Race]); 0 means no
	// hedging. Hedges is the most extra sources in flight at once; 0 means
	// one.
	Hedge  time.Duration
	Hedges int
}

// Route is what a generated wrapper calls for each guarded method: the
// breaker, then the limiter, then the throttle and a concurrency slot (when
// the breaker has them), then the call. Get one from [NewRoute]. A
// Route is safe for concurrent use.
type Route struct {
	reject   *atomic.Pointer[error] // the breaker's rejection
	rejected *core.Tally            // the breaker's count of them (core.Breaker.Rejections)
	timed    uint64                 // FastMask, or 0 on a route whose Enter must not take Ops.AdmitTimed

	core    core.Breaker // a copy: one load less on the way to its words
	breaker *runtime.Breaker
	limiter *runtime.Limiter // nil without a rate limit
	maxWait time.Duration
	timeout time.Duration
	exclude []error
	clock   runtime.Clock

	attempts            int
	backoff, backoffMax time.Duration
	budget              budget // a fresh call's: -1 for no limit

	hedge     time.Duration
	hedges    int
	races     sync.Pool                 // of *race: a hedged call's state, reused
	spare     atomic.Pointer[raceSpare] // one race kept before races: no per-P pinning
	realClock bool                      // the registry's clock is the real one
	answers   *core.Answers             // the registry's chain answer counts
	live      *atomic.Uint64            // this name's live answers; nil unless counted
	answerAs  string                    // the source its chain answers count as: its breaker's name, or a key's family's
	inject    core.Injector             // nil unless the breaker injects faults or latency

	rec       *routeRec    // nil unless the registry records calls (record.go)
	recOf     *routeRec    // on a recording clone of a route: its route's
	recStart  int64        // on a recording clone: when its call started
	recInject *recInjector // on a recording clone of a route that injects: its inject

	// The words a call's fast path reads (EnterFast, Done); a call on a
	// family's key reads them from the key's cell instead (Keyed).
	fails *uint64 // the breaker's fails word, right after its state word (see words)
	slow  uint64  // state bits that send Enter off the fast path
}

// NewRoute returns a route for calls to impl through the breaker and limiter
// of reg named by cfg.Breaker.Name, creating them if needed. A nil reg is
// [runtime.Default]. When impl is nil, every call on the route is refused
// with [ErrNilImpl], so that a wrapper of nil does not panic; so it is
// when impl holds a nil pointer, map, func, chan or slice (see nilImplOf).
func NewRoute(reg *runtime.Registry, impl any, cfg RouteConfig) *Route {
	if reg == nil {
		reg = runtime.Default()
	}
	if nilImplOf(impl) {
		impl = nil
	}
	bv, lv := core.Attach(reg, cfg.Breaker, cfg.Rate, cfg.Burst)
	l, _ := lv.(*runtime.Limiter)
	return newRoute(reg, impl, cfg, bv.(*runtime.Breaker), l)
}

// newRoute is NewRoute for breaker b and limiter l (nil for none) of reg.
func newRoute(reg *runtime.Registry, impl any, cfg RouteConfig, b *runtime.Breaker, l *runtime.Limiter) *Route {
	rt := buildRoute(reg, impl, cfg, b, l)
	rt.recordCalls(reg, impl, cfg, b, l) // record.go
	return rt
}

// buildRoute is newRoute without the recording.
func buildRoute(reg *runtime.Registry, impl any, cfg RouteConfig, b *runtime.Breaker, l *runtime.Limiter) *Route {
	rt := new(Route)
	initRoute(rt, reg, impl, cfg, b, l, b.Name())
	return rt
}

// initRoute makes *rt the route of buildRoute; rt is new (a family
// allocates its keys' routes aligned to a cache line).
func initRoute(rt *Route, reg *runtime.Registry, impl any, cfg RouteConfig, b *runtime.Breaker, l *runtime.Limiter, answerAs string) {
	c := core.BreakerOf(b)
	*rt = Route{
		fails:    &wordsOf(c).fails,
		reject:   c.Reject,
		rejected: c.Rejections,
		slow:     core.FastMask,
		timed:    core.FastMask,
		core:     *c,
		breaker:  b,
		maxWait:  max(cfg.MaxWait, 0),
		timeout:  max(cfg.Timeout, 0),
		exclude:  cfg.Exclude,
		clock:    reg.Clock(),

		attempts:   max(cfg.Attempts, 1),
		backoff:    cfg.Backoff,
		backoffMax: max(cfg.BackoffMax, 0),
		budget:     newBudget(cfg.Budget),

		hedge:  max(cfg.Hedge, 0),
		hedges: max(cfg.Hedges, 1),

		answerAs: answerAs,
	}
	var countLive bool
	if rt.answers, countLive = core.AnswersOf(reg); countLive {
		rt.live = rt.answers.Counter(answerAs, core.AnswerLive)
	}
	if rt.backoff <= 0 {
		rt.backoff = DefaultBackoff
	}
	rt.realClock = core.IsRealClock(rt.clock)
	if impl == nil {
		// Every call is refused as if the breaker were OPEN, with
		// ErrNilImpl: no test on the paths of the other routes.
		rt.fails, rt.reject, rt.rejected = &nilImpl.state.fails, &nilImpl.reject, &nilImpl.rejected
	}
	if rt.timeout > 0 {
		c.Hold(rt.timeout) // a probe on this route may run this long
	}
	if c.Win.Load() != nil {
		// A time window counts a success without a lock, and its calls
		// are not timed: a WindowFlag word is admitted as it is (the
		// breaker keeps that so, see runtime's Breaker.reshapeLocked).
		rt.slow &^= core.WindowFlag
	}
	if l != nil {
		rt.limiter = l
		rt.slow = ^uint64(0) // every call waits for a token
		rt.timed = 0
	}
	if rt.inject = core.InjectorOf(c); rt.inject != nil {
		rt.slow = ^uint64(0) // decided here, once: no cost on routes that do not inject
		rt.timed = 0
	}
}

// Breaker returns the route's breaker.
func (rt *Route) Breaker() *runtime.Breaker { return rt.breaker }

// Limiter returns the route's limiter, or nil.
func (rt *Route) Limiter() *runtime.Limiter { return rt.limiter }

// Timeout returns the route's per-call timeout; 0 means none.
func (rt *Route) Timeout() time.Duration { return rt.timeout }

// WithTimeout is context.WithTimeout for a guarded call's timeout, with a
// nil ctx taken as context.Background(), as every guarded call takes it:
// context.WithTimeout would panic on it after the breaker admitted the
// call, and the breaker would count a caller's nil as the upstream's
// failure.
func WithTimeout(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if ctx == nil {
		ctx = context.Background()
	}
	tctx, cancel := context.WithTimeout(ctx, d)
	noteDue(ctx, tctx) // hedge.go
	return tctx, cancel
}

// PanicGuard is the value generated code gives a guarded method's error
// result before it calls the wrapped method. If the method returns, the
// result is overwritten; if it panics, [Call.Exit] still finds PanicGuard
// there and knows, without calling recover on every call, that the call
// must count as a failure and the panic be re-raised. No method ever
// returns it.
var PanicGuard = core.PanicGuard

// ErrNilImpl is returned by generated wrappers whose wrapped
// implementation is nil, instead of panicking on the nil interface.
var ErrNilImpl = errors.New("breaker: wrapped implementation is nil")

// nilImplOf reports whether impl is nil: the nil interface, or an
// interface holding a nil pointer, map, func, chan or slice (a var db
// *sql.DB passed as the implementation). [NewRoute] and [NewFamily]
// refuse every call of such an implementation with [ErrNilImpl], testing
// it once, when the route is made (with reflection, never on a call's
// path): a method of a typed nil most often panics inside the client
// (database/sql's at the first call), and a panic counts as a failure of
// a breaker that other wrappers may share by name, where the nil
// interface's refusal touches no breaker. A type whose methods work on a
// nil receiver is legal Go, but nothing tells it from one whose methods
// panic before they are called: give the wrapper a non-nil value of it.
func nilImplOf(impl any) bool {
	return impl == nil || isNil(reflect.ValueOf(impl))
}

// nilImpl is the state of the routes of a nil implementation: a word that
// is always OPEN, a rejection that is always ErrNilImpl, and a count of
// those refusals that no breaker's Stats reads.
var nilImpl struct {
	state    words // never admits a call
	reject   atomic.Pointer[error]
	rejected core.Tally
}

func init() {
	nilImpl.state.state.Store(core.PeriodOne | core.Open)
	nilImpl.rejected.Spread()
	nilImpl.reject.Store(&ErrNilImpl)
}

// Call is one admitted call on a [Route], a two-word value. Generated code
// defers [Call.Exit] right after [Route.Enter] admitted the call.
type Call struct {
	route *Route
	word  uint64 // the breaker's admission
}

// EnterFast is the part of [Route.Enter] that admits a plain CLOSED call:
// one load and one test, small enough for the compiler to inline into the
// caller, which is what generated wrappers need on their hottest path. When
// ok is false nothing was admitted and the caller must call Enter, which
// decides (an OPEN breaker, a probe, a limiter, a nil implementation, a
// budget or provenance record in play).
func (rt *Route) EnterFast() (c Call, ok bool) {
	c.word = rt.stateWord().Load()
	c.route = rt
	return c, (c.word|core.InUse.Load())&rt.slow == 0
}

// Refusal returns, for an admission that [Route.EnterFast] declined, the
// breaker's rejection when the admission found it OPEN (matching
// [runtime.ErrOpen]; [ErrNilImpl] on the route of a nil implementation),
// and nil otherwise, when [Route.Enter] decides. It inlines, so that a
// rejected call of a generated wrapper returns without a call out of it:
// the rejection path reads the state word once and the rejection once,
// as Enter would, counts the refusal (runtime.Stats.Rejections: one
// atomic add on a line that refusals on other CPUs seldom share, see
// core.Tally), and nothing else (no lock, clock or budget). Once the
// program has made a budget or provenance record (core.InUse), it leaves
// the rejection to Enter, which writes it in the ctx's provenance record.
func (c Call) Refusal() error {
	if c.word&core.FastMask == core.Open && core.InUse.Load() == 0 {
		c.route.rejected.Add()
		return *c.route.reject.Load()
	}
	return nil
}

// Enter admits one call made with ctx: the breaker first, then, if the route
// has one, the limiter (whose wait ctx bounds), then, if the breaker has
// them (Config.Throttle, Config.Concurrency), the throttle and a
// concurrency slot (whose wait maxwait and ctx bound). It returns
// [ErrNilImpl] on a route whose implementation is nil, the breaker's
// rejection (matching [runtime.ErrOpen]), the limiter's refusal (matching
// [runtime.ErrRateLimited]) or ctx's error from a token wait that ended, the
// throttle's refusal ([runtime.ErrThrottled]) or the bulkhead's
// ([runtime.ErrBulkheadFull], and ctx's error when ctx ended the wait); in
// those cases the method must not be called and nothing else is needed:
// each refusal has freed what the steps before it took (the breaker's
// admission, the limiter's token) and counts as neither success nor
// failure. The budget is spent only once every step admitted the call.
// Enter allocates nothing unless it waits for a token or a slot.
//
// Generated code calls [Route.EnterFast] first and, when that declines,
// [Call.Refusal], then Enter only when the breaker was not OPEN (or
// straight away on a route with a rate limit, where EnterFast always
// would decline), so Enter does not repeat its test.
//
// The call is the first try of a method call: when ctx carries a
// provenance record ([runtime.WithProvenance]) that no outer guarded call
// holds, the call claims it, and its exit writes the outcome there; a
// refusal is written at once.
func (rt *Route) Enter(ctx context.Context) (Call, error) { return rt.enterTry(ctx, firstTry) }

// tryKind says which try of a call an admission is, for the provenance
// record of its ctx.
type tryKind uint8

const (
	// firstTry is a call's first: its claim starts the record afresh, and
	// its refusal is written.
	firstTry tryKind = iota
	// laterTry is a retry: its claim adds to the record, and its refusal
	// leaves the record as the try before wrote it (the caller gets that
	// try's error).
	laterTry
	// raceTry is a try of a hedged race's primary: the chain holds the
	// record, and a loser may outlive the call, so it never claims it.
	raceTry
)

// enterTry is Enter for a try of the kind kind.
func (rt *Route) enterTry(ctx context.Context, kind tryKind) (Call, error) {
	w := rt.stateWord().Load()
	if w&core.FastMask == core.Open {
		rt.rejected.Add()
		err := *rt.reject.Load() // the rejection path: no lock, clock or budget
		if core.InUse.Load() != 0 && kind == firstTry {
			rt.provUncalled(ctx, core.From(ctx), err, true, false) // prov.go
		}
		return Call{}, err
	}
	if w&rt.timed == core.WindowFlag && core.InUse.Load() == 0 {
		// A CLOSED call that the breaker may time (SlowCall, InFlight),
		// on a route with no limiter, no fault injection and no call
		// record, and no budget in any ctx: the timed admission alone.
		if w, ok := rt.core.AdmitTimed(w); ok {
			return Call{rt, w}, nil
		}
	}
	if rt.rec != nil {
		return rt.rec.enter(ctx, kind) // record.go
	}
	if core.InUse.Load() == 0 {
		return rt.enter(ctx, nil) // no budget or provenance record anywhere
	}
	if kind == raceTry {
		return rt.enter(ctx, core.From(ctx))
	}
	return rt.enterProv(ctx, kind == firstTry) // prov.go
}

// enter is enterTry for a breaker that was not OPEN a moment ago (one that
// opened since is rejected by Admit), on a route that records no call; st
// is the call state of ctx (nil when none can exist). It is kept apart so
// that the rejection path runs in a small frame, and it knows nothing of
// provenance (enterProv, prov.go), so that its own frame stays as small.
func (rt *Route) enter(ctx context.Context, st *core.CallState) (Call, error) {
	b := &rt.core
	bud := st.BudgetOf()
	if !bud.Available() {
		return Call{}, runtime.ErrBudget
	}
	w := rt.stateWord().Load()
	if w&core.FastMask != core.LoadFlag { // else a CLOSED call, admitted as the word
		var err error
		if w, err = b.Admit(rt.timeout); err != nil {
			return Call{}, err
		}
	}
	maxWait := rt.maxWait // the whole wait's bound: token and slot together
	if rt.limiter != nil {
		if ctx == nil {
			ctx = context.Background()
		}
		var start time.Time
		timed := maxWait > 0 && w&core.LoadFlag != 0 // a slot wait may follow
		if timed {
			start = rt.clock.Now()
		}
		if err := rt.limiter.Wait(ctx, maxWait); err != nil {
			if errors.Is(err, runtime.ErrRateLimited) {
				b.Limited(w)
			} else {
				b.Withdraw(w)
			}
			return Call{}, err
		}
		if timed {
			maxWait = max(maxWait-rt.clock.Now().Sub(start), 1) // 1ns: no wait left
		}
	}
	if w&core.LoadFlag != 0 {
		if s := b.Slots; s == nil || !s.TryTake() { // else a free slot, no throttle
			var err error
			if w, err = b.Load(ctx, w, maxWait); err != nil {
				if rt.limiter != nil {
					rt.limiter.Refund() // the call is not made
				}
				return Call{}, err
			}
		}
		if rt.recOf != nil {
			rt.recStart = rt.recOf.rec.Now() // record.go: timed from its slot, as the breaker times it
		}
	}
	if !bud.Spend() { // a sibling call spent the last try meanwhile
		b.Ignore(w)
		if rt.limiter != nil {
			rt.limiter.Refund() // the call is not made
		}
		return Call{}, runtime.ErrBudget
	}
	if rt.inject != nil {
		var err error
		// The wait ends at the route's timeout, as the try would: a
		// method that runs without it (a *sql.Row's, read later) is cut
		// there all the same, which no real call of it would be.
		if w, err = rt.inject.Inject(ctx, w, rt.timeout); err != nil {
			return Call{}, err // settled, a failure like an upstream's: see Retry.Enter
		}
	}
	return Call{rt, w}, nil
}

// Exit reports the outcome of the call: ctx is the context the method was
// called with (before any timeout was added) and *errp is its error. It must
// be called directly by defer: it recovers a panic, records it as a failure
// and re-raises it. An error in the route's Exclude list counts as a
// success; otherwise the breaker classifies the error (see
// [runtime.Breaker.Release]). Exit allocates nothing unless the call panicked.
func (c Call) Exit(ctx context.Context, errp *error) {
	err := *errp
	if err == nil && c.word&(core.FastMask|core.ProvFlag) == 0 { // a plain CLOSED success
		c.route.core.Succeeded(c.word)
		return
	}
	if err == nil && c.word&(core.FastMask|core.ProvFlag) == core.WindowFlag {
		c.route.core.WindowSucceeded(c.word) // the same in a window
		return
	}
	if err == nil && c.word&(core.FastMask|core.ProvFlag) == core.LoadFlag { // the same with load control
		if s := c.route.core.Slots; s != nil {
			s.Release()
			c.route.core.Succeeded(c.word)
			return
		}
		c.route.core.LoadSucceeded(c.word)
		return
	}
	if c.word&core.ProvFlag != 0 {
		var v any
		if err == PanicGuard {
			v = recover()
		}
		c.exitProv(ctx, err, true, v) // prov.go
		return
	}
	if err == PanicGuard {
		c.settleUnreturned(recover()) // record.go: records the call when recorded
		return
	}
	if c.failed(ctx, err) {
		return
	}
	c.exitSlow(ctx, err)
}

// Done reports the outcome of a call of a plain wrapper, which defers it
// in a closure right after the call was admitted:
//
//	defer func() { call.Done(ctx, err, err == breakerimpl.PanicGuard && call.Unreturned(ctx, recover())) }()
//	err = breakerimpl.PanicGuard // stays only if the call panics
//
// ctx is the context the method was called with and err its error result.
// An err that still holds [PanicGuard] means the method did not return:
// the closure has then handed recover's value to [Call.Unreturned], which
// settled the call, and unreturned is true; Done has nothing left to do.
// Otherwise Done is [Call.Exit]. It exists so that the deferred call
// costs one call where Exit costs two: a deferred method call runs through
// a wrapper that calls it, and Exit, which calls recover, cannot inline;
// Done's plain CLOSED success (a nil err, a plain admission, no failures
// to clear) inlines into the closure.
func (c Call) Done(ctx context.Context, err error, unreturned bool) {
	if err != nil || c.word&(core.FastMask|core.ProvFlag)|uint64(uint32(atomic.LoadUint64(c.route.fails))) != 0 {
		c.done(ctx, err)
	}
}

// done is Done for every other outcome. It stays out of line, so that Done
// fits the inliner's budget.
//
//go:noinline
func (c Call) done(ctx context.Context, err error) {
	if err == nil && c.word&(core.FastMask|core.ProvFlag) == core.WindowFlag {
		// core's WindowSucceeded, written out: the time window's success
		// path, which a call more would cost 11 instructions in 214.
		if win := c.route.core.Win.Load(); win != nil && win.Count(c.word) {
			c.route.core.Succeeded(c.word)
			return
		}
		c.route.core.WindowSuccess(c.word)
		return
	}
	if err == PanicGuard {
		return // Unreturned settled it
	}
	if c.word&core.ProvFlag != 0 {
		c.exitProv(ctx, err, true, nil) // prov.go
		return
	}
	if c.failed(ctx, err) {
		return
	}
	c.Exit(ctx, &err)
}

// failed settles a failure the short way when it can ([core.Ops.Failed]):
// err is not nil and not [PanicGuard], w is a plain CLOSED admission, the
// route excludes no error and records no call, and ctx has not ended (so
// the call neither lost a race nor was cancelled). It reports whether it
// settled the call.
func (c Call) failed(ctx context.Context, err error) bool {
	rt := c.route
	if err == nil || c.word&core.FastMask != 0 || len(rt.exclude) != 0 || rt.recOf != nil || ctx == nil || ctx.Err() != nil {
		return false
	}
	rt.core.Failed(ctx, c.word, err)
	return true
}

// Unreturned settles a call of a plain wrapper that did not return (see
// [Call.Done]): ctx is the context the method was called with, v is
// recover's value. A panic counts as a failure (reason "panic: " and v),
// frees the call's slot and is re-raised; a goroutine that exits
// (runtime.Goexit, v == nil) counts as neither, and Unreturned reports
// true. A call that claimed the provenance record of ctx gives it back
// first.
func (c Call) Unreturned(ctx context.Context, v any) bool {
	if c.word&core.ProvFlag != 0 {
		c = c.provEnd(ctx, PanicGuard, true) // prov.go
	}
	c.settleUnreturned(v) // record.go
	return true
}

// Panicked is [Call.Unreturned] without the ctx, for wrappers generated
// before plain wrappers wrote provenance records: a call of theirs that
// claimed one cannot give it back, so calls made with that ctx afterwards
// leave the record alone.
//
// Deprecated: regenerate the wrapper; it then calls Unreturned.
func (c Call) Panicked(v any) bool {
	c.word &^= core.ProvFlag
	c.settleUnreturned(v)
	return true
}

// failsWord returns the word of a breaker's fails counter, for
// [Call.Done]: atomic.LoadUint64 on it reads what Fails.Load reads, and
// costs the inliner less (Done is at its budget). atomic.Uint64 holds
// nothing but that word (TestFailsWord).
func failsWord(fails *atomic.Uint64) *uint64 {
	return (*uint64)(unsafe.Pointer(fails))
}

// words is a breaker's state word and its fails word, which runtime's
// Breaker keeps right after it, on one cache line (wordsOf checks): a
// route reaches both through one pointer, to the fails word (which Done
// reads, at the inliner's budget, as failsWord gives it), and finds the
// state word before it (Route.stateWord): that spares the route a word,
// and a key's route room on its line (keyRoute).
type words struct {
	state atomic.Uint64
	fails uint64
}

// wordsOf returns the words of the breaker c.
func wordsOf(c *core.Breaker) *words {
	w := (*words)(unsafe.Pointer(c.State))
	if failsWord(c.Fails) != &w.fails {
		panic("breakerimpl: a breaker's fails word must follow its state word")
	}
	return w
}

// stateWord returns the state word of the route's breaker: stateOf,
// written out, since a call of it costs Retry.EnterFast its inlining
// (TestEnterFastInlines).
func (rt *Route) stateWord() *atomic.Uint64 {
	return (*atomic.Uint64)(unsafe.Add(unsafe.Pointer(rt.fails), -int(unsafe.Offsetof(words{}.fails))))
}

// stateOf returns the state word before the fails word fails (see words).
func stateOf(fails *uint64) *atomic.Uint64 {
	return (*atomic.Uint64)(unsafe.Add(unsafe.Pointer(fails), -int(unsafe.Offsetof(words{}.fails))))
}

// ExitValid is Exit for a route with a `valid` func: generated code sets
// *valid to whether the result passed it (true for an error result) before
// returning. A successful call with invalid data counts as neither success
// nor failure: it frees the call's slot and changes nothing else.
func (c Call) ExitValid(ctx context.Context, errp *error, valid *bool) {
	if c.word&core.ProvFlag != 0 {
		var v any
		if *errp == PanicGuard {
			v = recover()
		}
		c.exitProv(ctx, *errp, *valid, v) // prov.go
		return
	}
	if err := *errp; err == PanicGuard {
		c.settleUnreturned(recover()) // record.go: records the call when recorded
		return
	} else if err == nil && !*valid {
		c.route.core.Ignore(c.word)
		c.recordInvalid(ctx) // record.go
		return
	}
	c.exitSlow(ctx, *errp)
}

// exitSlow settles every outcome but a plain CLOSED success: an excluded
// error counts as a success, and the error of a source that lost a hedged
// race (its ctx cancelled by [Race]) as neither.
func (c Call) exitSlow(ctx context.Context, err error) {
	if c.route.recOf != nil {
		c.exitRecorded(ctx, err) // record.go
		return
	}
	if err != nil {
		if c.route.excluded(err) {
			err = nil
		} else if lostRace(ctx) {
			c.route.core.Ignore(c.word)
			return
		}
	}
	c.route.core.Release(ctx, c.word, err)
}

// Excluded reports whether err is in the route's Exclude list (matched
// with errors.Is): an answer, not a failure. Generated wrappers with a
// stale cache use it to return such an answer rather than a stale value.
func (rt *Route) Excluded(err error) bool { return err != nil && rt.excluded(err) }

// excluded is Excluded for a non-nil err. An error whose tree panics as
// errors.Is walks it (a typed nil's Unwrap) is in no list: the call
// still settles, as a failure, as core.ErrorIs has it, with one recover
// for the whole list.
func (rt *Route) excluded(err error) (is bool) {
	if len(rt.exclude) == 0 {
		return false
	}
	defer func() {
		if recover() != nil {
			is = false
		}
	}()
	for _, e := range rt.exclude {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}
