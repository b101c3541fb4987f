package sqlimpl_test

import (
	"database/sql/driver"
	"errors"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/breakergen/breakergen/runtime"
	"github.com/breakergen/breakergen/runtime/breakerimpl/sqlimpl"
)

func TestRowCarriesTheErrorUnchanged(t *testing.T) {
	open := &runtime.OpenError{Name: "db"}
	for _, err := range []error{runtime.ErrOpen, runtime.ErrRateLimited, runtime.ErrBudget, open} {
		row := sqlimpl.Row(err)
		require.NotNil(t, row)
		assert.Same(t, err, row.Err(), "Err returns the very error")
		var s string
		assert.Equal(t, err, row.Scan(&s), "Scan returns it too")
		assert.Empty(t, s)
	}
}

func TestRowNeverRetriesABadConn(t *testing.T) {
	// database/sql would retry driver.ErrBadConn and replace it: the row
	// carries it hidden, with the same message.
	err := errors.Join(errors.New("refused"), driver.ErrBadConn)
	row := sqlimpl.Row(err)
	require.Error(t, row.Err())
	assert.NotErrorIs(t, row.Err(), driver.ErrBadConn)
	assert.Equal(t, err.Error(), row.Err().Error())
}

// TestRowKeepsAChainErrorWithABadConn: a chain whose sources each failed
// with driver.ErrBadConn returns its *runtime.ChainError in the row: the
// row hides ErrBadConn alone, and errors.As and errors.Is find the rest.
func TestRowKeepsAChainErrorWithABadConn(t *testing.T) {
	cause := errors.New("refused")
	err := &runtime.ChainError{Sources: []runtime.Skip{
		{Source: "db", Why: "error", Err: driver.ErrBadConn},
		{Source: "fallback:replica", Why: "error", Err: errors.Join(cause, driver.ErrBadConn)},
	}}
	row := sqlimpl.Row(err)
	var ce *runtime.ChainError
	require.ErrorAs(t, row.Err(), &ce)
	assert.Same(t, err, ce)
	assert.ErrorIs(t, row.Err(), cause)
	assert.NotErrorIs(t, row.Err(), driver.ErrBadConn)
}

func TestRowOfNil(t *testing.T) {
	assert.Error(t, sqlimpl.Row(nil).Err(), "a Row of nil still reports an error, never a row to scan")
}

func TestRowConcurrent(t *testing.T) {
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Go(func() {
			err := errors.New("refusal")
			if i%2 == 0 {
				err = runtime.ErrOpen
			}
			assert.Same(t, err, sqlimpl.Row(err).Err())
		})
	}
	wg.Wait()
}

// nilUnwrap's Unwrap reads its field: errors.Is panics on a nil one.
type nilUnwrap struct{ err error }

func (e *nilUnwrap) Error() string { return "source" }
func (e *nilUnwrap) Unwrap() error { return e.err }

// TestRowOfATypedNilSource: a chain's error whose source failed with a
// typed nil (a nil *nilUnwrap) makes a row whose error has the chain's
// message, where the look for driver.ErrBadConn (sqlimpl's, and
// database/sql's own) panicked in the caller's goroutine.
func TestRowOfATypedNilSource(t *testing.T) {
	var bad *nilUnwrap
	err := &runtime.ChainError{Sources: []runtime.Skip{{Source: "db", Why: "error", Err: bad}}}
	var row interface{ Err() error }
	require.NotPanics(t, func() { row = sqlimpl.Row(err) })
	require.Error(t, row.Err())
	assert.Equal(t, err.Error(), row.Err().Error())
}
