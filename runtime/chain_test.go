package runtime_test

import (
	"errors"
	"fmt"
	"testing"

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
