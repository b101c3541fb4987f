package breakerimpl_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/breakergen/breakergen/runtime/breakerimpl"
)

// command is a go-redis-like command: its Err() is its outcome.
type command interface{ Err() error }

type cmd struct{ err error }

func (c cmd) Err() error { return c.err }

// TestFirstFailed: the outcome of a pipeline is its first command's error
// that is not a miss, so that a miss ahead of a failure hides nothing;
// without one, the call's own error (a miss, or the fn's).
func TestFirstFailed(t *testing.T) {
	miss := errors.New("redis: nil")
	wrongType := errors.New("WRONGTYPE Operation against a key holding the wrong kind of value")
	fnErr := errors.New("fn gave up")
	for _, c := range []struct {
		name string
		cmds []command
		err  error
		want error
	}{
		{"all answered", []command{cmd{}, cmd{}}, nil, nil},
		{"a miss alone", []command{cmd{}, cmd{miss}}, miss, miss},
		{"a miss, then a failure", []command{cmd{miss}, cmd{wrongType}}, miss, wrongType},
		{"a wrapped miss, then a failure", []command{cmd{fmt.Errorf("hook: %w", miss)}, cmd{wrongType}}, miss, wrongType},
		{"a failure first", []command{cmd{wrongType}, cmd{miss}}, wrongType, wrongType},
		{"a nil command", []command{nil, cmd{miss}, cmd{wrongType}}, miss, wrongType},
		{"the fn's own error, no command", nil, fnErr, fnErr},
	} {
		assert.Equal(t, c.want, breakerimpl.FirstFailed(c.cmds, c.err, miss), c.name)
	}
}
