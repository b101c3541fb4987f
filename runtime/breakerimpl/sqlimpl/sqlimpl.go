// Package sqlimpl makes the *sql.Row that a generated wrapper returns when
// it refuses a call of a method returning *sql.Row (QueryRowContext): a
// row whose Err() and Scan return the refusal.
//
// It is for generated code only, with no compatibility promise, like
// package [github.com/breakergen/breakergen/runtime/breakerimpl]; it is a
// package of its own so that only programs that guard a *sql.Row link
// database/sql.
//
// # How
//
// A *sql.Row has no exported way to carry an error. Package database/sql
// makes one itself when opening a connection fails: QueryRowContext on a
// *sql.DB whose connector's Connect returns err yields a Row whose Err()
// is err, unchanged (database/sql retries only errors matching
// driver.ErrBadConn). So the package keeps one *sql.DB, opened at init
// over a connector that never connects and returns the error the ctx
// carries; [Row] asks it for a row. Nothing is ever dialled, and no
// connection is ever opened or pooled.
//
// sql.OpenDB starts one goroutine for the DB; it is started at the
// package's init, outside any testing/synctest bubble.
package sqlimpl

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
)

// refusals is the *sql.DB whose every row carries an error.
var refusals = sql.OpenDB(connector{})

// errKey is the ctx key of the error a row is to carry.
type errKey struct{}

// Row returns a *sql.Row whose Err() and Scan return err. err must not be
// nil. An err matching driver.ErrBadConn, which database/sql would retry
// and replace, is wrapped so that it does not match it (the refusals of
// the runtime never do), while errors.Is and errors.As still find every
// other error in it.
func Row(err error) *sql.Row {
	if err == nil {
		err = errors.New("sqlimpl: Row of a nil error")
	}
	switch is, broken := badConnIn(err); {
	case broken:
		// A method of err's tree panics (a chain's error holds its
		// sources', a typed nil among them), and database/sql asks
		// errors.Is of a connector's error too: the row carries err
		// closed to it, with err's message.
		err = closedError{err}
	case is:
		err = badConn{err}
	}
	return refusals.QueryRowContext(context.WithValue(context.Background(), errKey{}, err), "")
}

// Drop releases what a *sql.Row that no caller will read holds: a row
// holds its connection until Scan, which Drop calls with nothing to
// scan into. A hedged race drops its losers' rows with it. A nil row, a
// refusal's ([Row]) and a failed one hold nothing; a row that was never
// made by database/sql (a test's new(sql.Row)) is left as it is, its
// panic recovered: Drop runs on a race's goroutine, where a panic would
// end the program.
func Drop(row *sql.Row) {
	if row == nil {
		return
	}
	defer func() { _ = recover() }()
	_ = row.Scan()
}

// badConn hides driver.ErrBadConn in an error's chain, and only that:
// errors.Is and errors.As see the rest of it (a *runtime.ChainError, a
// refusal's *runtime.OpenError, the sources' own errors). It has no
// Unwrap, which would let errors.Is, and so database/sql, reach
// ErrBadConn.
type badConn struct{ err error }

// badConnIn reports whether err matches driver.ErrBadConn, and broken
// when a method of its tree panics as errors.Is asks.
func badConnIn(err error) (is, broken bool) {
	defer func() {
		if recover() != nil {
			is, broken = false, true
		}
	}()
	return errors.Is(err, driver.ErrBadConn), false
}

// closedError is an error whose tree errors.Is cannot walk without a
// panic, closed to it: its message alone.
type closedError struct{ err error }

func (e closedError) Error() (s string) {
	defer func() {
		if recover() != nil {
			s = "(an error whose Error method panicked)"
		}
	}()
	return e.err.Error()
}

func (e badConn) Error() string { return e.err.Error() }

func (e badConn) Is(target error) bool {
	return target != driver.ErrBadConn && errors.Is(e.err, target)
}

func (e badConn) As(target any) bool { return errors.As(e.err, target) }

// connector never connects: Connect returns the error ctx carries.
type connector struct{}

func (connector) Connect(ctx context.Context) (driver.Conn, error) {
	if err, ok := ctx.Value(errKey{}).(error); ok {
		return nil, err
	}
	return nil, errors.New("sqlimpl: no error to carry")
}

func (connector) Driver() driver.Driver { return drv{} }

// drv is the connector's driver, which database/sql never uses to open.
type drv struct{}

func (drv) Open(string) (driver.Conn, error) {
	return nil, fmt.Errorf("sqlimpl: the refusals DB opens no connection")
}
