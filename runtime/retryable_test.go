package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/breakergen/breakergen/runtime"
	"github.com/stretchr/testify/assert"
)

// httpError is an upstream's answer the way a client would type it.
type httpError struct {
	code       int
	retryAfter time.Duration
}

type coolingError struct{ httpError }

func TestRetryable(t *testing.T) {
	done, cancel := context.WithCancel(context.Background())
	cancel()
	live := context.Background()
	tests := []struct {
		ctx  context.Context
		err  error
		want bool
	}{
		{live, nil, false},
		{live, errors.New("reset by peer"), true},
		{live, &httpError{code: 502}, true},
		{live, fmt.Errorf("quote: %w", &httpError{code: 404}), false},
		{live, errors.Join(errors.New("x"), &httpError{code: 400}), false},
		{live, &coolingError{httpError{code: 503}}, false}, // has RetryAfter: cool down instead
		{live, runtime.ErrRateLimited, false},
		{live, runtime.ErrThrottled, false},
		{live, fmt.Errorf("quote: %w", runtime.ErrBulkheadFull), false},
		{live, context.DeadlineExceeded, true}, // the route's own per-try timeout
		{done, context.Canceled, false},
		{done, errors.New("anything once the caller gave up"), false},
	}
	for i, tt := range tests {
		assert.Equal(t, tt.want, runtime.Retryable(tt.ctx, tt.err), "case %d: %v", i, tt.err)
	}
}

func (e *httpError) Error() string { return fmt.Sprintf("HTTP %d", e.code) }

func (e *httpError) Retryable() bool { return e.code >= 500 }

func (e *coolingError) RetryAfter() time.Duration { return e.retryAfter }

// codeError is docs/retries.md's error with a Retryable method that
// reads its field: a nil *codeError in an error panics in it.
type codeError struct{ code int }

func (e *codeError) Error() string   { return fmt.Sprintf("HTTP %d", e.code) }
func (e *codeError) Retryable() bool { return e.code >= 500 }

// nilUnwrapper is an error whose Unwrap reads its field, as *url.Error's
// does: errors.Is panics on a nil one.
type nilUnwrapper struct{ err error }

func (e *nilUnwrapper) Error() string { return "wrapped" }
func (e *nilUnwrapper) Unwrap() error { return e.err }

// TestRetryableTypedNil: an upstream's typed nil error (a nil pointer in a
// non-nil error, a common Go mistake) neither panics in Retryable nor
// says anything of itself: its Retryable method, which would read a nil
// pointer, is not called, and the failure is retried as any other. A
// retrying route used to crash the caller's goroutine on it, where one
// try alone counted it cleanly. An error method that panics all the same
// (an Unwrap of a nil pointer, in errors.Is) leaves the failure standing.
func TestRetryableTypedNil(t *testing.T) {
	ctx := context.Background()
	var se *codeError
	assert.True(t, runtime.Retryable(ctx, se), "a typed nil *codeError")
	assert.True(t, runtime.Retryable(ctx, fmt.Errorf("quote: %w", se)), "a typed nil, wrapped")
	assert.True(t, runtime.Retryable(ctx, errors.Join(errors.New("a"), se)), "a typed nil, joined")
	assert.False(t, runtime.Retryable(ctx, &codeError{code: 404}), "a live one still says")
	assert.False(t, runtime.Retryable(ctx, fmt.Errorf("quote: %w", &codeError{code: 404})))

	var un *nilUnwrapper
	assert.False(t, runtime.Retryable(ctx, un), "an Unwrap that panics in errors.Is")
}
