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
// ask makes one try of the method on impl, admitted as call, with ctx (the
// source's own, derived from the chain's): generated code passes a closure
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
	return race(run, primary, fallbacks, routes, func(ctx context.Context, call Call, impl X) (T, bool, error) {
		v, err := ask(ctx, call, impl)
		return v, true, err
	})
}

// RaceValid is [Race] on a route with a `valid` func: ask also reports
// whether the result passed it. An invalid answer does not win.
func RaceValid[X, T any](run *Chain, primary X, fallbacks []runtime.Fallback[X], routes []*Route,
	ask func(ctx context.Context, call Call, impl X) (T, bool, error)) (T, error) {
	return race(run, primary, fallbacks, routes, ask)
}

// Won reports whether [Race] returned a source's answer.
func (c *Chain) Won() bool { return c.won }

// answer is how one source of a race ended.
type answer[T any] struct {
	src      int // index of the source in the race's start order
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

func race[X, T any](run *Chain, primary X, fallbacks []runtime.Fallback[X], routes []*Route,
	ask func(context.Context, Call, X) (T, bool, error)) (zero T, _ error) {
	rt := run.rt
	if run.ctx == nil {
		run.ctx = context.Background() // a nil ctx is the background
	}
	ctx := run.ctx
	n := 1 + min(len(fallbacks), len(routes))
	results := make(chan answer[T], n) // room for every source: no sender blocks
	share := &raceShare{}
	share.left.Store(int64(rt.budget))
	racers := make([]racer, 0, n)
	inflight, next, hedgedAny := 0, 0, false

	// launch asks the next source that admits a call, as a hedge or in
	// order; it reports false when none is left.
	launch := func(hedge bool) bool {
		for next < n {
			i := next
			next++
			src := len(racers)
			a := answer[T]{src: src}
			if i == 0 {
				sctx, cancel := context.WithCancelCause(ctx)
				racers = append(racers, racer{route: rt, hedged: hedge, cancel: cancel})
				go settle(results, a, func() (T, bool, error) { return tryPrimary(sctx, rt, share, primary, ask) })
			} else {
				fb, impl := routes[i-1], fallbacks[i-1].Impl
				took := share.take()
				call, ok := run.admit(fb, !took)
				if !ok {
					if took {
						share.give()
					}
					continue
				}
				sctx, cancel := context.WithCancelCause(ctx)
				racers = append(racers, racer{route: fb, hedged: hedge, cancel: cancel})
				go settle(results, a, func() (T, bool, error) { return ask(sctx, call, impl) })
			}
			inflight++
			hedgedAny = hedgedAny || hedge
			return true
		}
		return false
	}

	var tick chan struct{}
	var timer runtime.Timer
	if rt.hedge > 0 {
		tick = make(chan struct{}, 1)
		timer = rt.clock.AfterFunc(rt.hedge, func() { tick <- struct{}{} })
	}
	var won *answer[T]
	for won == nil {
		if inflight == 0 && !launch(false) {
			break // every source was asked
		}
		select {
		case a := <-results:
			inflight--
			r := &racers[a.src]
			r.done = true
			if a.panicked {
				stopRace(racers, timer)
				panic(a.panicVal)
			}
			run.tries = int(share.tries.Load())
			if run.outcome(r.route.breaker.Name(), a.err, a.valid, a.err != nil && r.route.excluded(a.err)) {
				won = &a
			}
		case <-tick:
			if inflight <= rt.hedges {
				launch(true)
			}
			if next < n {
				timer = rt.clock.AfterFunc(rt.hedge, func() { tick <- struct{}{} })
			}
		}
	}
	stopRace(racers, timer)
	if won == nil {
		return zero, nil
	}
	for _, r := range racers {
		if !r.done {
			run.skip(r.route.breaker.Name(), "slow", nil)
		}
	}
	run.won = true
	run.tries = int(share.tries.Load())
	w := racers[won.src]
	name := w.route.breaker.Name()
	switch {
	case w.hedged:
		rt.answers.Add(name, core.AnswerHedged)
	case won.src == 0: // the primary
		if rt.live != nil {
			rt.live.Add(1)
		}
	default:
		rt.answers.Add(name, core.AnswerFallback)
	}
	if p := run.prov(); p != nil {
		p.Hedged, p.Tries = hedgedAny, run.tries
	}
	return won.v, won.err
}

// stopRace stops the hedge timer and cancels the sources still in flight:
// they lost.
func stopRace(racers []racer, timer runtime.Timer) {
	if timer != nil {
		timer.Stop()
	}
	for _, r := range racers {
		if !r.done {
			r.cancel(errLost)
		}
	}
}

// errGoexit is the error of a source whose goroutine exited without
// returning (runtime.Goexit, as t.FailNow does in a test's mock).
var errGoexit = errors.New("breaker: the source's goroutine exited without returning")

// settle runs one source and sends how it ended, a panic or a Goexit
// included, to results, which has room for it: the race never waits for a
// source that is gone.
func settle[T any](results chan<- answer[T], a answer[T], ask func() (T, bool, error)) {
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
		results <- a
	}()
	a.v, a.valid, a.err = ask()
	returned = true
	results <- a
}

// tryPrimary makes the primary's tries, as a chain without hedge does
// ([Retry]), taking each from the race's share of the route's budget.
func tryPrimary[X, T any](ctx context.Context, rt *Route, share *raceShare, impl X,
	ask func(context.Context, Call, X) (T, bool, error)) (v T, valid bool, err error) {
	retry := Retry{rt: rt, left: -1} // the route's budget is the share's
	for {
		if !share.take() {
			if retry.tries == 0 {
				err = runtime.ErrBudget
			}
			return v, valid, err
		}
		var call Call
		if call, err = retry.Enter(ctx, err); err != nil {
			share.give()
			return v, valid, err
		}
		v, valid, err = ask(ctx, call, impl)
		if share.spent() || !retry.Again(ctx, err) {
			return v, valid, err
		}
	}
}
