package breakerimpl

import (
	"context"
	"errors"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/breakergen/breakergen/runtime"
	"github.com/breakergen/breakergen/runtime/internal/core"
)

// errLost is the cause with which [Race] cancels the ctx of a source still
// in flight when another source's answer won: the error such a source
// returns is not its failure ([Call.Exit] counts it as neither).
var errLost = errors.New("breaker: another source answered first")

// lostRace reports whether ctx is the ctx of a source that lost a race
// and, for the primary, whose try ends before its own deadline: what such
// a try returns is not its failure. A primary's try that runs to its
// deadline (the route's timeout, or the caller's), the race lost or not,
// failed as it would have without the race: a primary that ignores its
// ctx's cancellation (go-redis does) and times out, or never answers, is
// not let off by losing. The caller's deadline is the primary's ctx's
// (raceCtx), and a try's own its state's due (noteDue, from WithTimeout);
// another source's error is let off whenever it lost (its state says so
// when its ctx is a raceCtx too: RaceHooks.Held). The ctx holds no word
// of its own for the due: it is the one allocation a hedged call makes,
// and 32 bytes where it is 24 cost a primary that answers first 13%
// (BenchmarkHedgeSuccess/hedged, 8 interleaved rounds, -cpu 1: 188 ns
// with the word, 166 without, 159 before the due was kept at all).
func lostRace(ctx context.Context) bool {
	if c, ok := ctx.(*raceCtx); ok {
		s := c.st.Load()
		if s == nil {
			return false // never cancelled: it did not lose
		}
		s.mu.Lock()
		lost, fallback, due := s.cause == errLost, s.fallback, s.due
		s.mu.Unlock()
		if !lost || fallback {
			return lost
		}
		now := time.Now()
		if t, ok := c.parent.Deadline(); ok && !now.Before(t) {
			return false // ran to the caller's deadline
		}
		return due == 0 || now.UnixNano() < due
	}
	return ctx != nil && ctx.Err() != nil && context.Cause(ctx) == errLost
}

// noteDue records, on a race's primary ctx, the deadline of a try made on
// it (see lostRace).
func noteDue(parent, ctx context.Context) {
	if c, ok := parent.(*raceCtx); ok {
		if t, ok := ctx.Deadline(); ok {
			s := c.state()
			s.mu.Lock()
			s.due = t.UnixNano()
			s.mu.Unlock()
		}
	}
}

// Race runs one call of a chain route with `hedge` ([RouteConfig].Hedge):
// the sources of [Chain] (primary, with its tries, then each fallback in
// order), each in a goroutine of its own, and a source that has not
// answered within the hedge delay is raced by the next source whose breaker
// admits a call. The k-th extra source is asked k·Hedge after the first try
// began, while no valid answer has come and fewer than Hedges extra sources
// are in flight. The first valid answer (or excluded error) wins; the
// sources still in flight then have their ctx cancelled, which their
// breakers count as neither success nor failure, and their goroutines end
// with their upstream calls. When every source in flight failed, the next
// one is asked at once, as a chain without hedge does. Every try spends
// budget, hedged or not.
//
// primary and fallbacks are the chain's sources, routes the fallbacks'
// routes (one each, as [Chain.Fallback] takes them). ask makes one try of
// the method on impl, admitted as call, with ctx (the source's own,
// derived from the chain's), a closure calling the method's try helper;
// generated code calls [RaceArgs], whose ask captures nothing. Race
// returns the winning answer and [Chain.Won] reports true; when no source
// answered it returns the zero T and a nil error, Won is false, and the
// caller goes on to the stale cache or [Chain.Err]. A panic of a source
// is re-raised here while the race is on; one that comes after the answer
// won is counted as a failure by its breaker and otherwise dropped.
//
// run must have been started on the primary's route ([Chain.Start]).
func Race[X, T any](run *Chain, primary X, fallbacks []runtime.Fallback[X], routes []*Route,
	ask func(ctx context.Context, call Call, impl X) (T, error)) (T, error) {
	return RaceArgs(run, primary, fallbacks, routes, ask, askClosure[X, T])
}

// RaceValid is [Race] on a route with a `valid` func: ask also reports
// whether the result passed it. An invalid answer does not win.
func RaceValid[X, T any](run *Chain, primary X, fallbacks []runtime.Fallback[X], routes []*Route,
	ask func(ctx context.Context, call Call, impl X) (T, bool, error)) (T, error) {
	return RaceArgsValid(run, primary, fallbacks, routes, ask, askClosureValid[X, T])
}

// askClosure and askClosureValid are the ask of [RaceArgs] and
// [RaceArgsValid] that [Race] and [RaceValid] pass: their args are their
// ask closures.
func askClosure[X, T any](ctx context.Context, call Call, impl X, ask func(context.Context, Call, X) (T, error)) (T, error) {
	return ask(ctx, call, impl)
}

func askClosureValid[X, T any](ctx context.Context, call Call, impl X, ask func(context.Context, Call, X) (T, bool, error)) (T, bool, error) {
	return ask(ctx, call, impl)
}

// RaceArgs is [Race] with the arguments of the call, args, passed by
// value: ask makes one try with them, and the race keeps their copy. A
// closure capturing the arguments, as [Race]'s ask does, escapes to the
// heap with the race (the sources' goroutines and the hedge timer call it),
// one allocation a call; args lives in the race, which its route reuses,
// and an ask that captures nothing is not allocated. Generated code
// passes a struct of the chain and the method's arguments.
func RaceArgs[X, T, A any](run *Chain, primary X, fallbacks []runtime.Fallback[X], routes []*Route, args A,
	ask func(ctx context.Context, call Call, impl X, args A) (T, error)) (T, error) {
	r := newRace[X, T, A](run, primary, fallbacks, routes, args)
	r.ask = ask
	return r.run(run)
}

// RaceArgsValid is [RaceArgs] on a route with a `valid` func (see
// [RaceValid]).
func RaceArgsValid[X, T, A any](run *Chain, primary X, fallbacks []runtime.Fallback[X], routes []*Route, args A,
	ask func(ctx context.Context, call Call, impl X, args A) (T, bool, error)) (T, error) {
	r := newRace[X, T, A](run, primary, fallbacks, routes, args)
	r.askValid = ask
	return r.run(run)
}

// RaceHooks are what a race needs besides its ask (generated code) when
// its answers hold something open until their reader is done with them (an
// *http.Response its connection until its body is closed, a *sql.Row its
// connection until Scan, *sql.Rows until Close), or when its arguments
// cannot always be sent again (a *http.Request whose one body a try sent).
// The zero value needs nothing: [RaceArgs] is [RaceArgsWith] with it.
type RaceHooks[T, A any] struct {
	// Drop releases an answer the race does not return, which no caller
	// will ever see: a source's that failed, was invalid or lost (one that
	// came after the winner, or that its cancelled ctx cut short), and a
	// primary's try that its next try replaced. It is called before the
	// race returns, with the answer as the source returned it (nil or the
	// zero value included), once for each; calls for different answers
	// may come at once from different goroutines (the primary's, replacing
	// its tries, and the race's), so Drop must be safe for concurrent use.
	// It must not block: the race waits for it before it reads the next
	// answer, a winner's included.
	Drop func(T)
	// Keep ties the end of the winning source's ctx to its answer, which
	// the caller reads after the race returned (an *http.Response's body,
	// read through that ctx): done ends the ctx, and Keep returns the
	// answer to return (httpguard.CancelOnClose). Without Keep the
	// winner's ctx ends with its parent: a ctx whose Done was asked for
	// (as net/http asks a request's) stays registered with the parent
	// until then.
	Keep func(v T, done context.CancelFunc) T
	// Answered reports that the answer holds nothing read through its
	// source's ctx (plain data, a command that ran, a request answered
	// without a response), in place of Keep: the winner's ctx ends as the
	// race returns, rather than staying registered with the caller's ctx
	// until that ends, which under a long-lived ctx (a worker's,
	// signal.NotifyContext's) grew with every call.
	Answered bool
	// Held reports that the answer holds its source's ctx until the
	// caller releases it, through a ctx derived from it (database/sql
	// derives one for a *sql.Row until Scan, for *sql.Rows until Close,
	// for a *sql.Tx until Commit or Rollback; net/http for a body until
	// it is closed or read to its end; gRPC for a stream until it ends),
	// in place of Keep for an answer the race cannot wrap: the winner's
	// ctx is not ended, and lets go of the caller's ctx once no ctx
	// derived from it is left (as the race returns, when none is),
	// rather than staying registered with it until it ends. An answer
	// whose reader watches the ctx's Done itself, without deriving a
	// ctx, hears of the caller's cancel when it next asks (Done or Err
	// then finds the caller's ctx ended), not while it waits on a Done
	// it took before.
	Held bool
	// Unsent reports why args cannot be sent by another try (a request
	// whose one body a try sent, httpguard.Unsent), nil when they can:
	// a try it refuses is not admitted, and its source is passed over as
	// "unsent" (a retried primary keeps its last answer). A try that
	// finds out only once admitted settles its call with [Call.Unsent].
	Unsent func(args A) error
}

// RaceArgsWith is [RaceArgs] with hooks (see [RaceHooks]), passed by
// value: funcs that capture nothing cost no allocation.
func RaceArgsWith[X, T, A any](run *Chain, primary X, fallbacks []runtime.Fallback[X], routes []*Route, args A,
	ask func(ctx context.Context, call Call, impl X, args A) (T, error), hooks RaceHooks[T, A]) (T, error) {
	r := newRace[X, T, A](run, primary, fallbacks, routes, args)
	r.ask, r.hooks = ask, hooks
	return r.run(run)
}

// RaceArgsValidWith is [RaceArgsWith] on a route with a `valid` func: an
// invalid answer is dropped too.
func RaceArgsValidWith[X, T, A any](run *Chain, primary X, fallbacks []runtime.Fallback[X], routes []*Route, args A,
	ask func(ctx context.Context, call Call, impl X, args A) (T, bool, error), hooks RaceHooks[T, A]) (T, error) {
	r := newRace[X, T, A](run, primary, fallbacks, routes, args)
	r.askValid, r.hooks = ask, hooks
	return r.run(run)
}

// errAnswered is the cause with which a race ends the ctx of the source
// whose answer won, when the caller is done with that answer
// ([RaceHooks].Keep).
var errAnswered = errors.New("breaker: the answer was read")

// Won reports whether [Race] returned a source's answer.
func (c *Chain) Won() bool { return c.won }

// answer is how one source of a race ended, or, with src < 0, a tick of
// the hedge timer.
type answer[T any] struct {
	src      int // index of the source in racers
	v        T
	valid    bool
	answered bool // err is the source's answer, not a refusal (see core.Why)
	err      error
	panicked bool
	panicVal any
}

// racer is one source that was asked.
type racer struct {
	route  *Route
	hedged bool // asked while another source was in flight
	done   bool
	slow   bool                    // still in flight when an answer won
	cancel context.CancelCauseFunc // nil for the primary run by the caller (pctx)
	ctx    *raceCtx                // its ctx, in a race with Held; nil otherwise, and for pctx
}

// raceShare is what a race's primary shares with the sources' goroutines:
// the route's budget (-1 for no limit) and the tries made by every source.
// A race sets it with a plain assignment, before anyone else can see it.
type raceShare struct {
	budget int64
	tries  atomic.Int64
}

// take takes one try from the route's budget, if one is left.
func (s *raceShare) take() bool {
	if s.budget < 0 {
		s.tries.Add(1)
		return true
	}
	for {
		n := s.tries.Load()
		if n >= s.budget {
			return false
		}
		if s.tries.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// give gives back a try the breaker or the limiter refused.
func (s *raceShare) give() { s.tries.Add(-1) }

func (s *raceShare) spent() bool { return s.budget >= 0 && s.tries.Load() >= s.budget }

// race is one call of [Race]. The Chain, which stays on the caller's
// stack, is passed to the methods that record in it; only one goroutine
// at a time runs the race (its owner, own).
//
// The primary runs on the caller's goroutine, with pctx as its ctx: a
// primary that answers before the hedge delay costs no goroutine, no
// channel operation and, the race coming from its route's pool, one
// allocation, its ctx. When the delay passes first, the timer's goroutine takes the
// race over: it asks the next sources, each in a goroutine of its own, and
// waits for their answers and the primary's, which the caller sends when
// its call returns; the caller then waits for the race to end (ended). A
// race ends only when every source it asked has returned: the losers are
// cancelled as soon as an answer wins, and no goroutine outlives the call.
type race[X, T, A any] struct {
	spare     raceSpare // its entry in [Route].spare, of itself
	rt        *Route    // the primary's
	ctx       context.Context
	primary   X
	fallbacks []runtime.Fallback[X]
	routes    []*Route
	// ask or askValid makes one try of the method on a source, with args.
	ask      func(context.Context, Call, X, A) (T, error)
	askValid func(context.Context, Call, X, A) (T, bool, error)
	args     A

	results  chan answer[T] // room for every source and a tick: no sender blocks
	share    raceShare
	racers   []racer
	inline   [3]racer // racers' first backing array
	timer    runtime.Timer
	real     *time.Timer // the real clock's hedge timer, reused from the pool
	inflight int
	next     int  // the next source to ask: 0 the primary, i the fallback i-1
	hedged   bool // a source was asked while another was in flight

	cc   Chain         // the timer's goroutine's copy of the call's Chain
	pctx *raceCtx      // the primary's ctx, new for each call (see raceCtx)
	own  atomic.Uint32 // caller, owned() or ownTimer
	// caller is own's value while the caller's goroutine runs the primary,
	// in this call: the value a recycled race's own was left at (its
	// last call's loop), so that recycling it takes no atomic store.
	caller uint32
	ended  sync.WaitGroup // the timer's goroutine, while it runs the race
	end    raceEnd[T]     // how the race ended, when the timer's goroutine ran it

	// hooks are the race's RaceHooks: last, so that a race without them
	// reads its other fields where it did before they came (a hedged
	// call whose primary won went 3 to 5% slower with them after args).
	hooks RaceHooks[T, A]
}

// ownTimer is the owner of a race (own) that the timer's goroutine runs.
// Otherwise own counts the race's calls: r.caller while the caller's
// goroutine runs the primary, r.caller+1 (below ownTimer: owned) once it
// runs the race, which is the next call's r.caller.
const ownTimer uint32 = 1 << 31

// owned is own's value while the caller's goroutine runs the race.
func (r *race[X, T, A]) owned() uint32 { return (r.caller + 1) &^ ownTimer }

// raceEnd is how a race ended: the winning answer, or a source's panic.
type raceEnd[T any] struct {
	won      bool
	a        answer[T]
	panicked bool
	panicVal any
}

func newRace[X, T, A any](run *Chain, primary X, fallbacks []runtime.Fallback[X], routes []*Route, args A) *race[X, T, A] {
	if run.ctx == nil {
		run.ctx = context.Background() // a nil ctx is the background
	}
	n := min(len(fallbacks), len(routes))
	rt := run.rt
	var r *race[X, T, A]
	if s := rt.spare.Swap(nil); s != nil {
		if r, _ = s.race.(*race[X, T, A]); r == nil {
			// Another method's race, on the same route: left for it.
			rt.spare.CompareAndSwap(nil, s)
		}
	}
	if r == nil {
		r, _ = rt.races.Get().(*race[X, T, A])
	}
	if r == nil || cap(r.results) != n+2 {
		r = &race[X, T, A]{results: make(chan answer[T], n+2)}
		r.spare.race = r
	}
	r.rt, r.ctx, r.primary, r.fallbacks, r.routes, r.args = rt, run.ctx, primary, fallbacks[:n], routes[:n], args
	r.racers = r.inline[:0]
	r.share = raceShare{budget: int64(rt.budget)}
	r.pctx = &raceCtx{parent: run.ctx}
	r.caller = r.own.Load()
	return r
}

// recycle puts r back in its route's pool when nothing else can reach it:
// no source was asked in a goroutine and the hedge timer was stopped
// before it fired. Otherwise it lets go of the call (forget). The
// primary's ctx is never reused: the primary may keep it (see raceCtx).
func (r *race[X, T, A]) recycle() {
	rt := r.rt
	r.pctx = nil
	if len(r.racers) > 1 || r.own.Load() != r.owned() {
		r.forget()
		return
	}
	var x X
	var args A
	r.cc = Chain{}
	r.rt, r.primary, r.ctx, r.fallbacks, r.routes, r.ask, r.askValid, r.args, r.hooks = nil, x, nil, nil, nil, nil, nil, args, RaceHooks[T, A]{}
	r.inline[0] = racer{} // the one racer of a race that can be recycled
	r.racers, r.timer, r.inflight, r.next, r.hedged = nil, nil, 0, 0, false
	if !rt.spare.CompareAndSwap(nil, &r.spare) {
		rt.races.Put(r)
	}
}

// forget lets go of what a race that ended, and will not be reused, holds
// of its call: the arguments, the sources, the answer. A goroutine the
// race started (a source, the timer's) may still reach it.
func (r *race[X, T, A]) forget() {
	var x X
	var args A
	r.cc, r.end = Chain{}, raceEnd[T]{}
	r.rt, r.primary, r.ctx, r.fallbacks, r.routes, r.ask, r.askValid, r.args, r.hooks = nil, x, nil, nil, nil, nil, nil, args, RaceHooks[T, A]{}
	r.inline, r.racers, r.timer = [3]racer{}, nil, nil
}

// raceSpare is a race kept in its route's spare slot, [Route].spare: one
// swap takes it and one compare-and-swap gives it back, where the
// route's sync.Pool pins the P twice and finds its per-P list. The pool
// holds the races that find the slot taken.
type raceSpare struct {
	race any // the *race[X, T, A] whose field this is
}

// arm starts the hedge timer; the real clock's is reused. timer is set
// before fire can run: the timer's goroutine can take the race over as
// soon as the timer starts, and then reads and writes timer (Stop, when
// the race ends; nil or a new timer, when it hedges). Set after, it would
// put back a timer that had fired, whose tick the race's end would wait
// for in vain.
func (r *race[X, T, A]) arm() {
	rt := r.rt
	if !rt.realClock {
		r.armClock()
		return
	}
	if r.real == nil {
		// Made stopped, so that timer is set before it can fire.
		r.real = time.AfterFunc(math.MaxInt64, r.fire)
		r.real.Stop()
	}
	// timer is set first: the timer's goroutine can take the race over as
	// soon as the timer starts, and reads it (Stop, when the race ends).
	r.timer = r.real
	r.real.Reset(rt.hedge)
}

// armClock is arm on an injected clock ([runtime.WithClock]). Its
// AfterFunc can call the func before it returns the Timer: the
// [runtime.Clock] contract only says the func runs in its own goroutine,
// which may start at once. So the func and armClock meet at a gate, set by
// whichever comes first, and the second runs fire: the func, when the
// Timer was stored first (the usual order), or else armClock, right after
// storing it, in a goroutine of its own (as the func would have); the
// Timer's Stop then reports false and the tick is on its way, as the race
// expects. The func never waits for armClock: a func waiting on a gate
// would hang with a clock that calls it synchronously inside AfterFunc, or
// that waits for it before returning; neither is in the contract, and both
// work here. The gate and the func cost allocations on every arm: an
// injected clock is for tests, and the real clock's path allocates nothing.
func (r *race[X, T, A]) armClock() {
	var gate atomic.Bool
	t := r.rt.clock.AfterFunc(r.rt.hedge, func() {
		if gate.CompareAndSwap(false, true) {
			return // before the Timer was stored: armClock fires
		}
		r.fire()
	})
	r.timer = t
	if !gate.CompareAndSwap(false, true) {
		go r.fire() // the func came first and left the tick to armClock
	}
}

// fire is the hedge timer's: the delay has passed again. While the caller
// runs the primary, the timer's goroutine takes the race over; otherwise
// it tells the race's owner.
func (r *race[X, T, A]) fire() {
	r.ended.Add(1) // before the swap: a caller that sees it lost waits
	if !r.own.CompareAndSwap(r.caller, ownTimer) {
		r.ended.Done()
		r.results <- answer[T]{src: -1}
		return
	}
	r.end = r.loop(&r.cc, &answer[T]{src: -1}) // this tick first
	r.ended.Done()
}

// run runs the race of the chain call run and returns the winning answer
// (see [Race]).
func (r *race[X, T, A]) run(run *Chain) (T, error) {
	rt := r.rt
	if rt.hedge <= 0 || rt.stateWord().Load()&core.FastMask == core.Open {
		// No delay to race against, or an OPEN primary passed over: this
		// goroutine runs the race from the start.
		r.own.Store(r.owned())
		if rt.hedge > 0 {
			r.arm()
		}
		end := r.loop(run, nil)
		if end.panicked {
			return r.finish(run, end) // re-raised
		}
		v, err := r.finish(run, end)
		r.forget()
		return v, err
	}
	r.inline[0] = racer{route: rt}
	r.racers = r.inline[:1]
	r.inflight, r.next = 1, 1
	r.cc = *run // the Chain stays on the caller's stack; the timer's goroutine gets a copy
	r.arm()
	a := r.runPrimary()
	if !r.own.CompareAndSwap(r.caller, r.owned()) {
		// The timer's goroutine took the race over: hand it the primary's
		// answer and wait for the race to end.
		r.results <- a
		r.ended.Wait()
		*run = r.cc
		v, err := r.finish(run, r.end) // re-raises a panic
		r.forget()
		return v, err
	}
	// The primary ended before the delay (or its tick is on its way):
	// this goroutine runs the race on from its answer.
	if !a.panicked {
		r.inflight--
		r.racers[0].done = true
		run.tries = int(r.share.tries.Load())
		if run.outcome(rt.breaker.Name(), a.err, a.valid, a.err != nil && rt.excluded(a.err), a.answered) {
			return r.primaryWon(run, &a)
		}
		r.release(a.v)
		r.passOver(&r.racers[0])
		end := r.loop(run, nil) // on to the next source, the timer still armed
		if end.panicked {
			return r.finish(run, end) // re-raised
		}
		v, err := r.finish(run, end)
		r.recycle()
		return v, err
	}
	end := r.loop(run, &a)
	if end.panicked {
		return r.finish(run, end) // re-raised
	}
	v, err := r.finish(run, end)
	r.recycle()
	return v, err
}

// primaryWon ends the race whose primary, run on the caller's goroutine,
// answered before the delay with a, the answer (what [race.loop] and
// [race.finish] do when nobody else was asked, written out): the timer is
// stopped, or its tick taken, and the race goes back to its route's pool.
func (r *race[X, T, A]) primaryWon(run *Chain, a *answer[T]) (T, error) {
	if !r.timer.Stop() {
		<-r.results // the tick of a timer that fired after the answer came
	}
	r.timer = nil
	run.won = true
	rt := r.rt
	if rt.live != nil {
		rt.live.Add(1)
	}
	if p := run.prov(); p != nil {
		p.Hedged, p.Tries = false, run.tries
	}
	v, err := a.v, a.err
	if r.hooks.Keep != nil || r.hooks.Answered || r.hooks.Held {
		v = r.keep(&r.racers[0], v)
	}
	r.recycle()
	return v, err
}

// runPrimary runs the primary's tries on the caller's goroutine with pctx
// and returns how they ended. A panic is caught, to be re-raised once the
// race has ended; a Goexit (which cannot be stopped) ends the goroutine, as
// in a chain without hedge, after stopping the timer or handing the race
// its answer.
func (r *race[X, T, A]) runPrimary() (a answer[T]) {
	returned := false
	defer func() {
		if returned {
			return
		}
		if v := recover(); v != nil {
			a.panicked, a.panicVal = true, v
			return
		}
		a.err = errGoexit
		if r.own.CompareAndSwap(r.caller, r.owned()) {
			r.timer.Stop()
			return
		}
		r.results <- a // the timer's goroutine runs the race on
	}()
	a.v, a.valid, a.answered, a.err = r.tryPrimary(r.pctx)
	returned = true
	return a
}

// loop runs the race until an answer wins or no source is left, first
// counting first (the primary's answer, when it came before the delay),
// then stops the timer, cancels the sources still in flight and waits for
// them to return. A source's panic while the race is on ends it too; the
// caller re-raises it.
func (r *race[X, T, A]) loop(run *Chain, first *answer[T]) (end raceEnd[T]) {
	rt := r.rt
	for !end.won {
		var a answer[T]
		if first != nil {
			a, first = *first, nil
		} else {
			if r.inflight == 0 && !r.launch(run, false) {
				break // every source was asked
			}
			a = <-r.results
		}
		if a.src < 0 { // the hedge delay passed again
			if r.inflight <= rt.hedges {
				r.launch(run, true)
			}
			if r.next <= len(r.routes) {
				r.arm()
			} else {
				r.timer = nil
			}
			continue
		}
		r.inflight--
		s := &r.racers[a.src]
		s.done = true
		if a.panicked {
			end.panicked, end.panicVal = true, a.panicVal
			break
		}
		run.tries = int(r.share.tries.Load())
		if run.outcome(s.route.breaker.Name(), a.err, a.valid, a.err != nil && s.route.excluded(a.err), a.answered) {
			end.won, end.a = true, a
		} else {
			if !isUnsent(a.err) {
				r.release(a.v) // failed or invalid: passed over
			}
			r.passOver(s)
		}
	}
	for i := range r.racers {
		r.racers[i].slow = !r.racers[i].done
	}
	pending := r.timer != nil && !r.timer.Stop() // its tick is on its way
	r.stop()
	for r.inflight > 0 || pending {
		a := <-r.results
		if a.src < 0 {
			pending = false
			continue
		}
		r.inflight-- // a loser: its breaker counted it; a late panic is dropped
		if !a.panicked {
			r.release(a.v)
		}
	}
	return end
}

// release drops v, an answer the race does not return (see [RaceHooks]).
func (r *race[X, T, A]) release(v T) {
	if r.hooks.Drop != nil {
		r.hooks.Drop(v)
	}
}

// errPassedOver is the cause with which a race ends the ctx of a source
// that answered and did not win: failed, invalid or unsent.
var errPassedOver = errors.New("breaker: the source's answer was passed over")

// passOver ends the ctx of s, a source that returned and did not win: its
// answer was dropped, and a ctx whose Done was asked for (as net/http asks
// a request's) would stay registered with the call's ctx until that ends.
func (r *race[X, T, A]) passOver(s *racer) { r.endCtx(s, errPassedOver) }

// endCtx ends the ctx of s with cause: a fallback's own, or the primary's
// (pctx) when something watches it; a primary ctx nobody watched holds
// nothing to end.
func (r *race[X, T, A]) endCtx(s *racer, cause error) {
	switch {
	case s.cancel != nil:
		s.cancel(cause)
	case r.pctx.st.Load() != nil: // else nothing watches the parent
		r.pctx.cancel(cause)
	}
}

// unsent reports why the race's arguments cannot be sent by another try
// (see [RaceHooks]), nil when they can.
func (r *race[X, T, A]) unsent() error {
	if r.hooks.Unsent == nil {
		return nil
	}
	return r.hooks.Unsent(r.args)
}

// keep returns v, the answer of racer w that won, with the end of w's ctx
// tied to it (see [RaceHooks]).
func (r *race[X, T, A]) keep(w *racer, v T) T {
	if r.hooks.Answered {
		r.endCtx(w, errAnswered)
		return v
	}
	if r.hooks.Held {
		if c := w.ctx; c != nil {
			c.hold()
		} else if w.cancel == nil {
			r.pctx.hold()
		}
		return v
	}
	if r.hooks.Keep == nil {
		return v
	}
	if cancel := w.cancel; cancel != nil {
		return r.hooks.Keep(v, func() { cancel(errAnswered) })
	}
	pctx := r.pctx // the primary's, on the caller's goroutine
	return r.hooks.Keep(v, func() { pctx.cancel(errAnswered) })
}

// finish ends the race of the chain call run that ended as end: it
// re-raises a source's panic, records the losers and the answer's kind,
// and returns the winning answer.
func (r *race[X, T, A]) finish(run *Chain, end raceEnd[T]) (zero T, _ error) {
	if end.panicked {
		panic(end.panicVal)
	}
	run.won = end.won
	run.tries = int(r.share.tries.Load())
	p := run.prov()
	if p != nil {
		p.Hedged = r.hedged // whether a source answers or not
	}
	if !end.won {
		return zero, nil
	}
	rt := r.rt
	for _, s := range r.racers {
		if s.slow {
			run.skip(s.route.breaker.Name(), "slow", nil)
		}
	}
	w := r.racers[end.a.src]
	name := w.route.answerAs
	switch {
	case w.hedged:
		rt.answers.Add(name, core.AnswerHedged)
	case w.route == rt: // the primary (an OPEN one has no racer)
		if rt.live != nil {
			rt.live.Add(1)
		}
	default:
		rt.answers.Add(name, core.AnswerFallback)
	}
	if p != nil {
		p.Tries = run.tries
	}
	return r.keep(&w, end.a.v), end.a.err
}

// launch asks the next source that admits a call, as a hedge or in
// order, in a goroutine of its own; it reports false when none is left.
func (r *race[X, T, A]) launch(run *Chain, hedge bool) bool {
	for r.next <= len(r.routes) {
		i := r.next
		r.next++
		rt, impl := r.rt, r.primary
		var call Call
		if i == 0 && rt.stateWord().Load()&core.FastMask == core.Open {
			// Rejected as its tries would be, without a goroutine.
			rt.rejected.Add()
			err := *rt.reject.Load()
			run.skip(rt.breaker.Name(), core.Why(r.ctx, err, false), err)
			continue
		}
		if i > 0 {
			rt, impl = r.routes[i-1], r.fallbacks[i-1].Impl
			if err := r.unsent(); err != nil {
				run.skip(rt.breaker.Name(), "unsent", err) // not admitted: nothing to send
				continue
			}
			took := r.share.take()
			var ok bool
			if call, ok = run.admit(rt, !took); !ok {
				if took {
					r.share.give()
				}
				continue
			}
		}
		var ctx context.Context
		var cancel context.CancelCauseFunc
		var held *raceCtx
		if r.hooks.Held {
			// A ctx that can let go of the call's without ending (see
			// raceCtx.hold): a context.WithCancelCause one stays
			// registered with it until one of them ends.
			held = &raceCtx{parent: r.ctx}
			held.state().fallback = true // before its goroutine starts
			ctx, cancel = held, held.cancel
		} else {
			ctx, cancel = context.WithCancelCause(r.ctx)
		}
		src := len(r.racers)
		r.racers = append(r.racers, racer{route: rt, hedged: hedge, cancel: cancel, ctx: held})
		r.inflight++
		r.hedged = r.hedged || hedge
		go r.settle(ctx, src, i == 0, call, impl)
		return true
	}
	return false
}

// stop cancels the sources still in flight: they lost.
func (r *race[X, T, A]) stop() {
	for _, s := range r.racers {
		if s.done {
			continue
		}
		if s.cancel == nil {
			r.pctx.cancel(errLost)
		} else {
			s.cancel(errLost)
		}
	}
}

// try makes one try on impl admitted as call.
func (r *race[X, T, A]) try(ctx context.Context, call Call, impl X) (T, bool, error) {
	if r.ask != nil {
		v, err := r.ask(ctx, call, impl, r.args)
		return v, true, err
	}
	return r.askValid(ctx, call, impl, r.args)
}

// errGoexit is the error of a source whose goroutine exited without
// returning (runtime.Goexit, as t.FailNow does in a test's mock).
var errGoexit = errors.New("breaker: the source's goroutine exited without returning")

// settle runs racer src (the primary with its tries when primary is set,
// else the try admitted as call; src is the racer's index, not the
// source's, since an OPEN primary is passed over without a racer) and
// sends how it ended, a panic or a Goexit included, to results, which has
// room for it: the race never waits for a source that is gone.
func (r *race[X, T, A]) settle(ctx context.Context, src int, primary bool, call Call, impl X) {
	a := answer[T]{src: src}
	returned := false
	defer func() {
		if returned {
			return
		}
		if v := recover(); v != nil {
			a.panicked, a.panicVal = true, v
		} else {
			a.err = errGoexit
		}
		r.results <- a
	}()
	if primary {
		a.v, a.valid, a.answered, a.err = r.tryPrimary(ctx)
	} else {
		a.v, a.valid, a.err = r.try(ctx, call, impl)
		if a.answered = !isUnsent(a.err); !a.answered {
			r.share.give() // not a try
		}
	}
	returned = true
	r.results <- a
}

// tryPrimary makes the primary's tries, as a chain without hedge does
// ([Retry]), taking each from the race's share of the route's budget;
// answered reports that err is the last try's answer, not a refusal (see
// core.Why).
func (r *race[X, T, A]) tryPrimary(ctx context.Context) (v T, valid, answered bool, err error) {
	if r.hooks.Drop != nil || r.hooks.Unsent != nil {
		return r.tryPrimaryHooked(ctx)
	}
	retry := Retry{rt: r.rt, left: -1} // the route's budget is the share's
	for {
		if !r.share.take() {
			if retry.tries == 0 {
				err = runtime.ErrBudget
			}
			return v, valid, isAnswer(retry.tries, err), err
		}
		var call Call
		if call, err = retry.enter(ctx, err, true); err != nil {
			r.share.give()
			return v, valid, isAnswer(retry.tries, err), err
		}
		v, valid, err = r.try(ctx, call, r.primary)
		if r.share.spent() || !retry.Again(ctx, err) {
			return v, valid, true, err
		}
	}
}

// tryPrimaryHooked is tryPrimary with the race's hooks ([RaceHooks]): the
// answer a try replaces is dropped, and a try with nothing left to send
// is none, so that the last answer stands. Apart, so that a race without
// hooks runs the loop as it was.
func (r *race[X, T, A]) tryPrimaryHooked(ctx context.Context) (v T, valid, answered bool, err error) {
	retry := Retry{rt: r.rt, left: -1}
	for {
		if !r.share.take() {
			if retry.tries == 0 {
				err = runtime.ErrBudget
			}
			return v, valid, isAnswer(retry.tries, err), err
		}
		last := err // the last try's
		if uerr := r.unsent(); uerr != nil {
			// Nothing left to send (its request's one body went to
			// another try): no try. A retry's last answer stands.
			r.share.give()
			if retry.tries > 0 {
				return v, valid, true, last
			}
			return v, valid, false, unsentError{uerr}
		}
		var call Call
		if call, err = retry.enter(ctx, err, true); err != nil {
			r.share.give()
			return v, valid, isAnswer(retry.tries, err), err
		}
		pv, pvalid := v, valid
		if retry.tries > 1 && r.hooks.Drop != nil {
			v, valid, err = r.tryReplacing(ctx, call, pv)
		} else {
			v, valid, err = r.try(ctx, call, r.primary)
		}
		if isUnsent(err) {
			// Nothing was sent (its request's one body went to another
			// source): not a try. A retry's last answer stands.
			r.share.give()
			if retry.tries--; retry.tries > 0 {
				return pv, pvalid, true, last
			}
			return v, valid, false, err
		}
		if retry.tries > 1 {
			r.release(pv) // the answer this try replaced
		}
		if r.share.spent() || !retry.Again(ctx, err) {
			return v, valid, true, err
		}
	}
}

// tryReplacing is r.try of the primary for a try that replaces the
// answer pv, which tryPrimaryHooked releases once the try returns (or
// returns, when the try sent nothing): should the try panic, pv is
// released on the way, as no caller will see it.
func (r *race[X, T, A]) tryReplacing(ctx context.Context, call Call, pv T) (v T, valid bool, err error) {
	returned := false
	defer func() {
		if !returned {
			r.release(pv)
		}
	}()
	v, valid, err = r.try(ctx, call, r.primary)
	returned = true
	return v, valid, err
}

// raceCtx is the ctx of a race's primary when it runs on the caller's
// goroutine: its parent's, and cancelled when it loses, in one allocation
// where context.WithCancelCause takes two. Its Done channel is made when
// it is first asked for, and the parent's end is watched
// (context.AfterFunc) only then; Err reads the parent's directly. Each
// call has its own: the context package lets a callee keep its ctx past
// its return (a goroutine it started, a response body read later), and a
// ctx reused by a later call would then answer with that call's values,
// deadline and cancellation.
type raceCtx struct {
	parent context.Context
	st     atomic.Pointer[raceState] // made when Done is first asked for, or at the cancel
}

// raceState is a raceCtx's own end. A primary that answers first, and never
// asks for Done, has none: its ctx is the two words of raceCtx, so that
// the allocation every hedged call makes is small.
type raceState struct {
	mu    sync.Mutex
	done  chan struct{}
	err   error       // context.Canceled once cancelled
	cause error       // why: errLost, or the parent's cause
	stop  func() bool // stops the watch of the parent; nil when none
	after []*func()   // the funcs AfterFunc registered, run at the cancel
	// due: the deadline of the primary's latest try, Unix ns (noteDue); 0:
	// none. fallback: the ctx is not a primary's (see lostRace).
	due      int64
	fallback bool
	// held: the ctx is the winner's of a race with [RaceHooks].Held, whose
	// answer the caller holds: the watch of the parent stops once no
	// func registered with AfterFunc (a derived ctx) is left, and gone
	// is set then: the parent is not watched again (see hold).
	held, gone bool
}

// state returns c's state, making it on the first call.
func (c *raceCtx) state() *raceState {
	if s := c.st.Load(); s != nil {
		return s
	}
	c.st.CompareAndSwap(nil, new(raceState))
	return c.st.Load()
}

func (c *raceCtx) Deadline() (time.Time, bool) { return c.parent.Deadline() }
func (c *raceCtx) Value(key any) any           { return c.parent.Value(key) }

func (c *raceCtx) Done() <-chan struct{} {
	s := c.state()
	s.mu.Lock()
	if s.done == nil {
		s.done = make(chan struct{})
		if s.err != nil {
			close(s.done)
		}
	}
	if s.stop == nil && s.err == nil && !s.gone && c.parent.Done() != nil {
		s.stop = context.AfterFunc(c.parent, func() { c.cancel(context.Cause(c.parent)) })
	}
	done, lapsed := s.done, s.gone && s.err == nil
	s.mu.Unlock()
	if lapsed && c.parent.Err() != nil {
		c.cancel(context.Cause(c.parent)) // a ctx let go of ends when it finds the parent ended (see Err)
	}
	return done
}

// Err is the ctx's end, or its parent's. A ctx let go of (hold) that
// finds its parent ended ends then, so that Done is closed whenever Err
// says the ctx ended: it watches the parent no more, and would otherwise
// report an end that its Done, and the ctxs derived from it, never see.
func (c *raceCtx) Err() error {
	s := c.st.Load()
	if s == nil {
		return c.parent.Err()
	}
	s.mu.Lock()
	err, gone := s.err, s.gone
	s.mu.Unlock()
	switch {
	case err != nil:
		return err
	case !gone:
		return c.parent.Err()
	case c.parent.Err() != nil:
		c.cancel(context.Cause(c.parent))
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.err
	}
	return nil
}

// cancel ends the ctx with cause, if it has not ended yet, and stops its
// watch of the parent: the parent, which may live on, would keep the ctx.
func (c *raceCtx) cancel(cause error) {
	s := c.state()
	s.mu.Lock()
	if s.err != nil {
		s.mu.Unlock()
		return
	}
	if c.parent.Err() != nil { // the parent ended first: its cause wins
		s.err, s.cause = c.parent.Err(), context.Cause(c.parent)
	} else {
		s.err, s.cause = context.Canceled, cause
	}
	if s.done != nil {
		close(s.done)
	}
	stop, after := s.stop, s.after
	s.after = nil
	s.mu.Unlock()
	if stop != nil {
		stop() // false when the parent's end called cancel
	}
	for _, f := range after {
		go (*f)()
	}
}

// AfterFunc arranges for f to run in a goroutine of its own once c is
// done, as context.AfterFunc does, and returns the func that stops that
// (true when it did). The context package calls it (its afterFuncer) when
// a ctx is derived from c, as net/http derives one for each request it
// sends: without it, each such ctx would start a goroutine to watch c's
// Done (bench/contend's BenchmarkTransportSuccess/hedged-loopback: 35.3
// µs without, 34.3 with, beside 31.7 and 31.3 for the chain without hedge,
// 8 interleaved rounds).
func (c *raceCtx) AfterFunc(f func()) func() bool {
	c.Done() // the parent's end is watched from now on
	s := c.state()
	s.mu.Lock()
	if s.err != nil {
		s.mu.Unlock()
		go f()
		return func() bool { return false }
	}
	p := &f
	s.after = append(s.after, p)
	s.mu.Unlock()
	return func() bool {
		s.mu.Lock()
		i := slices.Index(s.after, p)
		if i < 0 {
			s.mu.Unlock()
			return false // it ran, or was stopped
		}
		s.after = slices.Delete(s.after, i, i+1)
		stop := s.letGoLocked()
		s.mu.Unlock()
		if stop != nil {
			stop()
		}
		return true
	}
}

// hold makes c the ctx of an answer that the caller now holds (see
// [RaceHooks].Held): c is not ended, and stops watching its parent as
// soon as no func registered with AfterFunc is left, now or when the
// last is stopped (a ctx derived from c registers one, and stops it when
// it ends: database/sql's for a *sql.Rows when they are closed). Until
// then the parent's end still ends c, and what was derived from it.
// Once let go, c does not watch its parent again: a Done asked for after
// the answer was released (database/sql's goroutine that closes the
// rows, when it starts late) would otherwise stay registered with the
// parent until it ends. Err and Done still report the parent's end when
// they find it (and c ends then, with what was derived from it since).
func (c *raceCtx) hold() {
	s := c.state() // a ctx nobody watched yet may be derived from later
	s.mu.Lock()
	s.held = true
	stop := s.letGoLocked()
	s.mu.Unlock()
	if stop != nil {
		stop()
	}
}

// letGoLocked returns the func that stops the watch of the parent, and
// forgets it, when the ctx is held and nothing is registered with it any
// more; nil otherwise. The caller calls it once s.mu is unlocked: the
// parent's lock is taken by it, and by the parent's end, which runs
// cancel.
func (s *raceState) letGoLocked() func() bool {
	if !s.held || len(s.after) > 0 || s.err != nil {
		return nil
	}
	stop := s.stop // nil when nothing watched the parent yet: it is not watched from now on either
	s.stop, s.gone = nil, true
	return stop
}

func (c *raceCtx) String() string { return "breakerimpl.raceCtx" }
