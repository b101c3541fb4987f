package breakerimpl

import (
	"context"
	"errors"
	"sync/atomic"

	"github.com/breakergen/breakergen/runtime"
	"github.com/breakergen/breakergen/runtime/internal/core"
)

// errLost is the cause with which [Race] cancels the ctx of a source still
// in flight when another source's answer won: the error such a source
// returns is not its failure ([Call.Exit] counts it as neither).
var errLost = errors.New("breaker: another source answered first")

// lostRace reports whether ctx is the ctx of a source that lost a race.
func lostRace(ctx context.Context) bool {
	return ctx != nil && ctx.Err() != nil && context.Cause(ctx) == errLost
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
// derived from the chain's): generated code passes a closure
// calling the method's try helper. Race returns the winning answer and
// [Chain.Won] reports true; when no source answered it returns the zero T
// and a nil error, Won is false, and the caller goes on to the stale cache
// or [Chain.Err]. A panic of a source is re-raised here while the race
// is on; one that comes after the answer won is counted as a failure by
// its breaker and otherwise dropped.
//
// run must have been started on the primary's route ([Chain.Start]).
func Race[X, T any](run *Chain, primary X, fallbacks []runtime.Fallback[X], routes []*Route,
	ask func(ctx context.Context, call Call, impl X) (T, error)) (T, error) {
	r := newRace[X, T](run, primary, fallbacks, routes)
	r.ask = ask
	return r.run(run)
}

// RaceValid is [Race] on a route with a `valid` func: ask also reports
// whether the result passed it. An invalid answer does not win.
func RaceValid[X, T any](run *Chain, primary X, fallbacks []runtime.Fallback[X], routes []*Route,
	ask func(ctx context.Context, call Call, impl X) (T, bool, error)) (T, error) {
	r := newRace[X, T](run, primary, fallbacks, routes)
	r.askValid = ask
	return r.run(run)
}

// Won reports whether [Race] returned a source's answer.
func (c *Chain) Won() bool { return c.won }

// answer is how one source of a race ended, or, with src < 0, a tick of
// the hedge timer.
type answer[T any] struct {
	src      int // index of the source in racers
	v        T
	valid    bool
	err      error
	panicked bool
	panicVal any
}

// racer is one source that was asked.
type racer struct {
	route  *Route
	hedged bool // asked while another source was in flight
	done   bool
	cancel context.CancelCauseFunc
}

// raceShare is what a race's primary goroutine shares with the caller: the
// route's budget (-1 for no limit) and the tries made by every source.
type raceShare struct {
	left, tries atomic.Int64
}

// take takes one try from the route's budget, if one is left.
func (s *raceShare) take() bool {
	for {
		n := s.left.Load()
		if n == 0 {
			return false
		}
		if n < 0 || s.left.CompareAndSwap(n, n-1) {
			s.tries.Add(1)
			return true
		}
	}
}

// give gives back a try the breaker or the limiter refused.
func (s *raceShare) give() {
	s.tries.Add(-1)
	if s.left.Load() >= 0 {
		s.left.Add(1)
	}
}

func (s *raceShare) spent() bool { return s.left.Load() == 0 }

// race is one call of [Race]: what the caller's goroutine keeps, and the
// little the sources' goroutines share with it (results, share). One
// allocation holds it; the Chain, which stays on the caller's stack, is
// passed to the methods that record in it.
type race[X, T any] struct {
	rt        *Route // the primary's
	ctx       context.Context
	primary   X
	fallbacks []runtime.Fallback[X]
	routes    []*Route
	// ask or askValid makes one try of the method on a source.
	ask      func(context.Context, Call, X) (T, error)
	askValid func(context.Context, Call, X) (T, bool, error)

	results  chan answer[T] // room for every source and a tick: no sender blocks
	share    raceShare
	racers   []racer
	inline   [3]racer // racers' first backing array
	timer    runtime.Timer
	inflight int
	next     int  // the next source to ask: 0 the primary, i the fallback i-1
	hedged   bool // a source was asked while another was in flight
}

func newRace[X, T any](run *Chain, primary X, fallbacks []runtime.Fallback[X], routes []*Route) *race[X, T] {
	if run.ctx == nil {
		run.ctx = context.Background() // a nil ctx is the background
	}
	n := min(len(fallbacks), len(routes))
	r := &race[X, T]{rt: run.rt, ctx: run.ctx, primary: primary,
		fallbacks: fallbacks[:n], routes: routes[:n]}
	r.racers = r.inline[:0]
	r.results = make(chan answer[T], n+2)
	r.share.left.Store(int64(r.rt.budget))
	return r
}

// run runs the race of the chain call run and returns the winning answer
// (see [Race]).
func (r *race[X, T]) run(run *Chain) (zero T, _ error) {
	rt := r.rt
	if rt.hedge > 0 {
		r.timer = rt.clock.AfterFunc(rt.hedge, r.tick)
	}
	var won answer[T]
	for !run.won {
		if r.inflight == 0 && !r.launch(run, false) {
			break // every source was asked
		}
		a := <-r.results
		if a.src < 0 { // the hedge delay passed again
			if r.inflight <= rt.hedges {
				r.launch(run, true)
			}
			if r.next <= len(r.routes) {
				r.timer = rt.clock.AfterFunc(rt.hedge, r.tick)
			}
			continue
		}
		r.inflight--
		s := &r.racers[a.src]
		s.done = true
		if a.panicked {
			r.stop()
			panic(a.panicVal)
		}
		run.tries = int(r.share.tries.Load())
		if run.outcome(s.route.breaker.Name(), a.err, a.valid, a.err != nil && s.route.excluded(a.err)) {
			won, run.won = a, true
		}
	}
	r.stop()
	if !run.won {
		return zero, nil
	}
	for _, s := range r.racers {
		if !s.done {
			run.skip(s.route.breaker.Name(), "slow", nil)
		}
	}
	run.tries = int(r.share.tries.Load())
	w := r.racers[won.src]
	name := w.route.breaker.Name()
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
	if p := run.prov(); p != nil {
		p.Hedged, p.Tries = r.hedged, run.tries
	}
	return won.v, won.err
}

// tick is the hedge timer's: the delay has passed again.
func (r *race[X, T]) tick() { r.results <- answer[T]{src: -1} }

// launch asks the next source that admits a call, as a hedge or in
// order, in a goroutine of its own; it reports false when none is left.
func (r *race[X, T]) launch(run *Chain, hedge bool) bool {
	for r.next <= len(r.routes) {
		i := r.next
		r.next++
		rt, impl := r.rt, r.primary
		var call Call
		if i == 0 && rt.state.Load()&core.FastMask == core.Open {
			// Rejected as its tries would be, without a goroutine.
			err := *rt.reject.Load()
			run.skip(rt.breaker.Name(), why(r.ctx, err), err)
			continue
		}
		if i > 0 {
			rt, impl = r.routes[i-1], r.fallbacks[i-1].Impl
			took := r.share.take()
			var ok bool
			if call, ok = run.admit(rt, !took); !ok {
				if took {
					r.share.give()
				}
				continue
			}
		}
		ctx, cancel := context.WithCancelCause(r.ctx)
		src := len(r.racers)
		r.racers = append(r.racers, racer{route: rt, hedged: hedge, cancel: cancel})
		r.inflight++
		r.hedged = r.hedged || hedge
		go r.settle(ctx, src, i == 0, call, impl)
		return true
	}
	return false
}

// stop stops the hedge timer and cancels the sources still in flight:
// they lost.
func (r *race[X, T]) stop() {
	if r.timer != nil {
		r.timer.Stop()
	}
	for _, s := range r.racers {
		if !s.done {
			s.cancel(errLost)
		}
	}
}

// try makes one try on impl admitted as call.
func (r *race[X, T]) try(ctx context.Context, call Call, impl X) (T, bool, error) {
	if r.ask != nil {
		v, err := r.ask(ctx, call, impl)
		return v, true, err
	}
	return r.askValid(ctx, call, impl)
}

// errGoexit is the error of a source whose goroutine exited without
// returning (runtime.Goexit, as t.FailNow does in a test's mock).
var errGoexit = errors.New("breaker: the source's goroutine exited without returning")

// settle runs racer src (the primary with its tries when primary is set,
// else the try admitted as call; src is the racer's index, not the
// source's, since an OPEN primary is passed over without a racer) and sends how it ended, a panic or a Goexit
// included, to results, which has room for it: the race never waits for a
// source that is gone.
func (r *race[X, T]) settle(ctx context.Context, src int, primary bool, call Call, impl X) {
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
		a.v, a.valid, a.err = r.tryPrimary(ctx)
	} else {
		a.v, a.valid, a.err = r.try(ctx, call, impl)
	}
	returned = true
	r.results <- a
}

// tryPrimary makes the primary's tries, as a chain without hedge does
// ([Retry]), taking each from the race's share of the route's budget.
func (r *race[X, T]) tryPrimary(ctx context.Context) (v T, valid bool, err error) {
	retry := Retry{rt: r.rt, left: -1} // the route's budget is the share's
	for {
		if !r.share.take() {
			if retry.tries == 0 {
				err = runtime.ErrBudget
			}
			return v, valid, err
		}
		var call Call
		if call, err = retry.Enter(ctx, err); err != nil {
			r.share.give()
			return v, valid, err
		}
		v, valid, err = r.try(ctx, call, r.primary)
		if r.share.spent() || !retry.Again(ctx, err) {
			return v, valid, err
		}
	}
}
