package breakerimpl_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/breakergen/breakergen/runtime"
	"github.com/breakergen/breakergen/runtime/breakerimpl"
)

// unwrapError's Unwrap reads its field, as *url.Error's does: errors.Is
// panics on a nil one.
type unwrapError struct{ err error }

func (e *unwrapError) Error() string { return "upstream" }
func (e *unwrapError) Unwrap() error { return e.err }

// TestTypedNilErrorSettlesTheCall: an upstream that returns a nil
// *unwrapError in its error (a typed nil) is a failure, and the call is
// settled, its bulkhead slot freed, on a line with exclude and when the
// caller's ctx is done: errors.Is of the exclude list and of
// context.Canceled used to panic in the deferred Exit, leaving the slot
// taken for good, so that every later call found the bulkhead full.
func TestTypedNilErrorSettlesTheCall(t *testing.T) {
	reg, _ := newTestRegistry(t)
	rt := breakerimpl.NewRoute(reg, anyImpl, breakerimpl.RouteConfig{
		Breaker: runtime.Config{Name: "ex", FailureThreshold: 100, Concurrency: 1},
		Exclude: []error{errors.New("not found")},
	})
	var bad *unwrapError
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, ctx := range []context.Context{context.Background(), canceled} {
		call, err := rt.Enter(context.Background())
		require.NoError(t, err, "the one slot is free")
		assert.NotPanics(t, func() {
			err := error(bad)
			call.Exit(ctx, &err)
		})
		b, _ := reg.Lookup("ex")
		require.Equal(t, 0, b.Stats().InFlight, "the call's slot is freed") // else the next Enter waits for good
	}
	b, _ := reg.Lookup("ex")
	assert.Equal(t, uint64(2), b.Stats().Failures, "a typed nil is a failure")
}
