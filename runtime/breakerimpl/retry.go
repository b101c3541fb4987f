package breakerimpl

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"

	"github.com/breakergen/breakergen/runtime"
	"github.com/breakergen/breakergen/runtime/internal/core"
)

// DefaultBackoff is the wait between tries of a route with attempts > 1 and
// no backoff setting.
const DefaultBackoff = 100 * time.Millisecond

// budget is what a route's `budget` key still allows one call: a number of
// tries, or -1 for no limit.
type budget int

func newBudget(n int) budget {
	if n > 0 {
		return budget(n)
	}
	return -1
}

// spent reports whether no try is left.
func (b budget) spent() bool { return b == 0 }

// spend takes n tries, down to zero.
func (b *budget) spend(n int) {
	if *b > 0 {
		*b = max(*b-budget(n), 0)
	}
}

// Retry runs the tries of one call on a route with attempts, a backoff or a
// budget. Generated code keeps it on the stack:
//
//	retry := w.eastmoney.Retry()
//	for {
//		call, ok := retry.EnterFast()
//		if !ok {
//			if call, err = retry.Enter(ctx, err); err != nil {
//				return
//			}
//		}
//		r0, err = w.trySearch(ctx, call, q)
//		if !retry.Again(ctx, err) {
//			return
//		}
//	}
//
// A Retry is not safe for concurrent use; it serves one call.
type Retry struct {
	rt    *Route
	tries int    // tries made
	left  budget // the route's budget left
}

// Retry starts the tries of one call.
func (rt *Route) Retry() Retry {
	return Retry{rt: rt, left: rt.budget}
}

// Tries returns the number of upstream tries made so far.
func (r *Retry) Tries() int { return r.tries }

// EnterFast is the part of [Retry.Enter] that admits a plain CLOSED try
// (see [Route.EnterFast]) while the route's budget lasts; small enough to
// inline. When ok is false nothing was admitted and the caller must call
// Enter, which decides.
func (r *Retry) EnterFast() (c Call, ok bool) {
	if c, ok = r.rt.EnterFast(); ok && r.left != 0 {
		r.left.spend(1)
		r.tries++
		return c, true
	}
	return c, false
}

// EnterOnce admits the one try of a call on a route that makes one
// (attempts 1 and no budget of its own) after [Route.EnterFast] declined
// it, as [Retry.Enter] does for a first try, without a Retry to carry: a
// chain's primary on such a route needs neither the retry loop nor the
// count of tries left. Generated code counts one try for an admission of
// EnterFast and calls EnterOnce only when that declines:
//
//	tries := 1
//	call, ok := rt.EnterFast()
//	if !ok {
//		call, tries, err = rt.EnterOnce(ctx)
//	}
//
// tries is the tries made: 1 when the try was admitted, and when fault
// injection failed it (a try that failed like an upstream's, as Retry
// counts it); 0 when it was refused, err then the refusal.
func (rt *Route) EnterOnce(ctx context.Context) (Call, int, error) {
	call, err := rt.Enter(ctx) // spends from the ctx's budgets
	switch {
	case err == nil:
		return call, 1, nil
	case errors.Is(err, runtime.ErrInjected):
		return Call{}, 1, err
	}
	return Call{}, 0, err
}

// Enter admits the next try: the budgets (the route's and every one in ctx),
// then the breaker, then the limiter. A try the breaker or the limiter
// refuses costs no budget. When the try is refused, Enter returns last, the
// error of the previous try, if there was one (the caller gets the last
// upstream error, not the refusal that stopped the retries), and otherwise
// the refusal: an error matching [runtime.ErrOpen], [runtime.ErrRateLimited] or
// [runtime.ErrBudget].
func (r *Retry) Enter(ctx context.Context, last error) (Call, error) {
	return r.enter(ctx, last, false)
}

// enter is Enter; race says the try is a hedged race's primary's, which
// never claims the provenance record (see raceTry).
func (r *Retry) enter(ctx context.Context, last error, race bool) (Call, error) {
	refuse := func(err error) (Call, error) {
		if r.tries > 0 && last != nil {
			return Call{}, last
		}
		return Call{}, err
	}
	if r.left.spent() {
		return refuse(runtime.ErrBudget)
	}
	call, ok := r.rt.EnterFast()
	if !ok {
		var err error
		kind := laterTry
		switch {
		case race:
			kind = raceTry
		case r.tries == 0:
			kind = firstTry
		}
		if call, err = r.rt.enterTry(ctx, kind); err != nil { // spends from the ctx's budgets
			if errors.Is(err, runtime.ErrInjected) {
				return r.injected(ctx, err, race)
			}
			return refuse(err)
		}
	}
	r.left.spend(1)
	r.tries++
	return call, nil
}

// injected goes on after a try that failed by fault injection (see
// [runtime.Config].Fault): it was a try, failed like an upstream's, so it
// is retried as one, after the backoff, while Again allows.
func (r *Retry) injected(ctx context.Context, err error, race bool) (Call, error) {
	r.left.spend(1)
	r.tries++
	if !r.Again(ctx, err) {
		return Call{}, err
	}
	return r.enter(ctx, err, race)
}

// Again reports whether the call should make another try after one that
// returned err, and if so waits the route's backoff first. It is false on
// success, when the tries are used up, when err is not retryable
// ([runtime.Retryable]), when the budget is spent, and when ctx ends before the
// wait would (a wait that would end after ctx's deadline is not started).
func (r *Retry) Again(ctx context.Context, err error) bool {
	if err == nil || r.tries >= r.rt.attempts {
		return false
	}
	return r.again(ctx, err)
}

// again is Again after a failed try with attempts left.
func (r *Retry) again(ctx context.Context, err error) bool {
	rt := r.rt
	if r.left.spent() || rt.excluded(err) || !runtime.Retryable(ctx, err) {
		return false
	}
	d := rt.backoff
	if rt.backoffMax > 0 {
		// Full jitter in [0, min(max, backoff·2^(n-1))] before try n+1.
		ceil := rt.backoffMax
		if shift := r.tries - 1; shift < 62 && rt.backoff<<shift > 0 && rt.backoff<<shift < ceil {
			ceil = rt.backoff << shift
		}
		d = rand.N(ceil + 1)
	}
	if d <= 0 {
		return ctx == nil || ctx.Err() == nil
	}
	if ctx != nil {
		if dl, ok := ctx.Deadline(); ok && rt.clock.Now().Add(d).After(dl) {
			return false
		}
	} else {
		ctx = context.Background()
	}
	return core.Sleep(ctx, d, rt.clock.AfterFunc)
}
