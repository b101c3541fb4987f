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
