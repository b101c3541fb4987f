package runtime

import (
	"context"
	"errors"
	"time"
)

// walk calls visit on every error of err's tree, depth first, until visit
// returns true; it reports whether one did.
func walk(err error, visit func(error) bool) bool {
	for err != nil {
		if visit(err) {
			return true
		}
		switch u := err.(type) {
		case sourceError: // a ChainError's source's error (chain.go)
			err = u.err
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

// Retryable reports whether a try that failed with err may be tried again,
// for a caller whose context is ctx. It is false for nil, for the caller's
// own context errors (once ctx is done), for [ErrRateLimited], [ErrOpen],
// [ErrBudget], [ErrThrottled] and [ErrBulkheadFull], and for any error in whose chain a value has a Retryable()
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
	if errors.Is(err, ErrRateLimited) || errors.Is(err, ErrOpen) || errors.Is(err, ErrBudget) ||
		errors.Is(err, ErrThrottled) || errors.Is(err, ErrBulkheadFull) {
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
