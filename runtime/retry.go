package runtime

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"
)

// MaxCooldown caps the OPEN window an error's RetryAfter can ask for.
const MaxCooldown = 24 * time.Hour

// DefaultBackoff is the wait between tries of a route with attempts > 1 and
// no backoff setting.
const DefaultBackoff = 100 * time.Millisecond

// retryAfter returns the cooldown the first error in err's chain (through
// Unwrap() error and Unwrap() []error) with a RetryAfter() time.Duration
// method asks for, capped at MaxCooldown; 0 when none does.
func retryAfter(err error) time.Duration {
	var d time.Duration
	walk(err, func(e error) bool {
		if ra, ok := e.(interface{ RetryAfter() time.Duration }); ok {
			d = min(ra.RetryAfter(), MaxCooldown)
			return true
		}
		return false
	})
	return max(d, 0)
}

// walk calls visit on every error of err's tree, depth first, until visit
// returns true; it reports whether one did.
func walk(err error, visit func(error) bool) bool {
	for err != nil {
		if visit(err) {
			return true
		}
		switch u := err.(type) {
		case interface{ Unwrap() error }:
			err = u.Unwrap()
		case interface{ Unwrap() []error }:
			for _, e := range u.Unwrap() {
				if walk(e, visit) {
					return true
				}
			}
			return false
		default:
			return false
		}
	}
	return false
}

func cooldownReason(d time.Duration, err error) string {
	return "retry after " + d.String() + ": " + reasonOf(err)
}

// Retryable reports whether a try that failed with err may be tried again,
// for a caller whose context is ctx. It is false for nil, for the caller's
// own context errors (once ctx is done), for [ErrRateLimited], [ErrOpen] and
// [ErrBudget], and for any error in whose chain a value has a Retryable()
// bool method returning false or has a RetryAfter() time.Duration method (a
// ban or a rate-limit answer: the breaker cools down instead). A
// DeadlineExceeded from a route's own per-try timeout is retryable while ctx
// is alive.
func Retryable(ctx context.Context, err error) bool {
	if err == nil {
		return false
	}
	if ctx != nil && ctx.Err() != nil {
		return false
	}
	if errors.Is(err, ErrRateLimited) || errors.Is(err, ErrOpen) || errors.Is(err, ErrBudget) {
		return false
	}
	return !walk(err, func(e error) bool {
		if _, ok := e.(interface{ RetryAfter() time.Duration }); ok {
			return true
		}
		r, ok := e.(interface{ Retryable() bool })
		return ok && !r.Retryable()
	})
}

// Retry runs the tries of one call on a route with attempts, a backoff or a
// budget. Generated code keeps it on the stack:
//
//	retry := w.eastmoney.Retry()
//	for {
//		var call runtime.Call
//		if call, err = retry.Enter(ctx, err); err != nil {
//			return
//		}
//		r0, err = w.trySearch(call, ctx, q)
//		if !retry.Again(ctx, err) {
//			return
//		}
//	}
//
// A Retry is not safe for concurrent use; it serves one call.
type Retry struct {
	rt    *Route
	tries int // tries made
	left  int // the route's budget left; -1 for none
}

// Retry starts the tries of one call.
func (rt *Route) Retry() Retry {
	left := -1
	if rt.budget > 0 {
		left = rt.budget
	}
	return Retry{rt: rt, left: left}
}

// Tries returns the number of upstream tries made so far.
func (r *Retry) Tries() int { return r.tries }

// Enter admits the next try: the budgets (the route's and every one in ctx),
// then the breaker, then the limiter. A try the breaker or the limiter
// refuses costs no budget. When the try is refused, Enter returns last, the
// error of the previous try, if there was one (the caller gets the last
// upstream error, not the refusal that stopped the retries), and otherwise
// the refusal: an error matching [ErrOpen], [ErrRateLimited] or [ErrBudget].
func (r *Retry) Enter(ctx context.Context, last error) (Call, error) {
	refuse := func(err error) (Call, error) {
		if r.tries > 0 && last != nil {
			return Call{}, last
		}
		return Call{}, err
	}
	if r.left == 0 {
		return refuse(ErrBudget)
	}
	call, ok := r.rt.EnterFast()
	if !ok {
		var err error
		if call, err = r.rt.Enter(ctx); err != nil { // spends from the ctx's budgets
			return refuse(err)
		}
	}
	if r.left > 0 {
		r.left--
	}
	r.tries++
	return call, nil
}

// Again reports whether the call should make another try after one that
// returned err, and if so waits the route's backoff first. It is false on
// success, when the tries are used up, when err is not retryable
// ([Retryable]), when the budget is spent, and when ctx ends before the
// wait would (a wait that would end after ctx's deadline is not started).
func (r *Retry) Again(ctx context.Context, err error) bool {
	rt := r.rt
	if err == nil || r.tries >= rt.attempts || r.left == 0 || rt.excluded(err) || !Retryable(ctx, err) {
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
	clock := rt.breaker.reg.clock
	if ctx != nil {
		if dl, ok := ctx.Deadline(); ok && clock.Now().Add(d).After(dl) {
			return false
		}
	} else {
		ctx = context.Background()
	}
	done := make(chan struct{})
	t := clock.AfterFunc(d, func() { close(done) })
	select {
	case <-done:
		return true
	case <-ctx.Done():
		t.Stop()
		return false
	}
}
