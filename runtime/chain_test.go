package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/breakergen/breakergen/runtime"
)

func TestChainErrorMatching(t *testing.T) {
	down := errors.New("down")
	mixed := &runtime.ChainError{Sources: []runtime.Skip{
		{Source: "em", Why: "open", Err: &runtime.OpenError{Name: "em"}},
		{Source: "fallback:sina", Why: "error", Err: fmt.Errorf("sina: %w", down)},
	}}
	assert.ErrorIs(t, mixed, down)
	assert.NotErrorIs(t, mixed, runtime.ErrOpen, "one source answered an error")
	assert.NotErrorIs(t, mixed, runtime.ErrInvalid)
	none := &runtime.ChainError{}
	assert.NotErrorIs(t, none, runtime.ErrOpen)
	assert.Contains(t, none.Error(), "no source was tried")
}

// coolError asks for a cooldown, as a 429 does.
type coolError struct{}

func (coolError) Error() string             { return "429" }
func (coolError) RetryAfter() time.Duration { return time.Minute }

// TestChainErrorNestedRejection: a source that answered with an error
// wrapping a rejection (a guarded call of its own met it) failed; the
// chain matches its error, and not ErrOpen through it (SPEC §6: only
// when every source was rejected), while the runtime's own walks (here
// Retryable's) still see into it.
func TestChainErrorNestedRejection(t *testing.T) {
	down := errors.New("502")
	inner := &runtime.OpenError{Name: "inner"}
	err := &runtime.ChainError{Sources: []runtime.Skip{
		{Source: "em", Why: "error", Err: down},
		{Source: "fallback:b", Why: "error", Err: fmt.Errorf("b: %w", inner)},
	}}
	assert.ErrorIs(t, err, down)
	assert.NotErrorIs(t, err, runtime.ErrOpen, "the rejection was the fallback's own call's")
	var oe *runtime.OpenError
	assert.False(t, errors.As(err, &oe), "nor As a rejection")

	cool := &runtime.ChainError{Sources: []runtime.Skip{{Source: "em", Why: "error", Err: fmt.Errorf("em: %w", coolError{})}}}
	var ce coolError
	assert.True(t, errors.As(cool, &ce), "As sees the source's own error")
	assert.False(t, runtime.Retryable(context.Background(), cool), "a source that asked for a cooldown: Retryable sees it")

	open := &runtime.ChainError{Sources: []runtime.Skip{{Source: "em", Why: "open", Err: inner}}}
	assert.ErrorIs(t, open, runtime.ErrOpen, "every source rejected")
}
