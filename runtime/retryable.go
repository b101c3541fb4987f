package runtime

import (
	"context"
	"errors"
	"time"
)

// walk calls visit on every error of err's tree, depth first, until visit
// returns true; it reports whether one did. A typed nil (a nil pointer in
// a non-nil error, whose methods would read its fields) is neither
// visited nor unwrapped, as retryAfter has it, and the walk stops after
// maxErrorNodes errors (one that unwraps to itself would never end).
func walk(err error, visit func(error) bool) bool {
	budget := maxErrorNodes
	return walkIn(err, visit, &budget)
}

func walkIn(err error, visit func(error) bool, budget *int) bool {
	for ; err != nil && *budget > 0; *budget-- {
		if typedNil(err) {
			return false
		}
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
				*budget--
				if walkIn(e, visit, budget) {
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
//
// An error method that panics (an Is or Unwrap of a nil pointer that
// errors.Is calls) makes err not retryable: the try's failure stands, and
// the caller's goroutine does not crash on an upstream's bad error.
func Retryable(ctx context.Context, err error) (retry bool) {
	if err == nil {
		return false
	}
	defer func() {
		if recover() != nil {
			retry = false
		}
	}()
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
