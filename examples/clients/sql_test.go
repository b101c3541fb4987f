package clients_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	_ "modernc.org/sqlite" // a real driver that needs no server

	"github.com/breakergen/breakergen/examples/clients"
	"github.com/breakergen/breakergen/runtime"
	"github.com/breakergen/breakergen/runtime/breakerimpl"
)

// openSQLite opens a database file of t's, with no busy wait: a locked
// database answers SQLITE_BUSY at once.
func openSQLite(t *testing.T, file string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+file+"?_pragma=busy_timeout(0)")
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// TestSQLMissingTableTrips: a query of a table that is not there fails in
// QueryRowContext (Row.Err), threshold=2 such rows trip the breaker, and
// the next queries are refused through the *sql.Row, Scan included,
// without reaching the database.
func TestSQLMissingTableTrips(t *testing.T) {
	db := openSQLite(t, filepath.Join(t.TempDir(), "a.db"))
	ctx := context.Background()
	_, err := db.ExecContext(ctx, "CREATE TABLE quotes (code TEXT PRIMARY KEY, price REAL)")
	require.NoError(t, err)
	_, err = db.ExecContext(ctx, "INSERT INTO quotes VALUES ('600519', 1688.5)")
	require.NoError(t, err)

	clock := newClock()
	reg := newRegistry(clock)
	guarded := clients.NewDBBreaker(db, reg)
	b, _ := reg.Lookup("sqlite")

	var price float64
	require.NoError(t, guarded.QueryRowContext(ctx, "SELECT price FROM quotes WHERE code = ?", "600519").Scan(&price))
	assert.Equal(t, 1688.5, price)
	assert.ErrorIs(t, guarded.QueryRowContext(ctx, "SELECT price FROM quotes WHERE code = ?", "none").Scan(&price), sql.ErrNoRows)
	assert.Equal(t, runtime.Closed, b.State(), "no row is an answer: Row.Err() is nil")

	for range 2 {
		row := guarded.QueryRowContext(ctx, "SELECT price FROM prices WHERE code = ?", "600519")
		require.Error(t, row.Err())
		assert.Contains(t, row.Err().Error(), "no such table")
	}
	require.Equal(t, runtime.Open, b.State(), "threshold=2 failed queries trip it")
	inUse := db.Stats().InUse + db.Stats().Idle
	row := guarded.QueryRowContext(ctx, "SELECT price FROM quotes WHERE code = ?", "600519")
	assert.ErrorIs(t, row.Err(), runtime.ErrOpen, "refused through the row")
	assert.ErrorIs(t, row.Scan(&price), runtime.ErrOpen, "and its Scan")
	_, err = guarded.ExecContext(ctx, "DELETE FROM quotes")
	assert.ErrorIs(t, err, runtime.ErrOpen, "the other methods share the breaker")
	assert.Equal(t, inUse, db.Stats().InUse+db.Stats().Idle, "a refusal takes no connection")
	assert.Equal(t, 1, countRows(t, db), "the refused DELETE never ran")
}

// TestSQLLockedDatabaseTrips: another connection holds the database in
// an exclusive transaction; the guarded queries find it locked and trip
// the breaker.
func TestSQLLockedDatabaseTrips(t *testing.T) {
	file := filepath.Join(t.TempDir(), "b.db")
	ctx := context.Background()
	owner := openSQLite(t, file)
	_, err := owner.ExecContext(ctx, "CREATE TABLE quotes (code TEXT PRIMARY KEY, price REAL)")
	require.NoError(t, err)
	conn, err := owner.Conn(ctx)
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close() })
	_, err = conn.ExecContext(ctx, "BEGIN EXCLUSIVE")
	require.NoError(t, err)

	reg := newRegistry(newClock())
	guarded := clients.NewDBBreaker(openSQLite(t, file), reg)
	b, _ := reg.Lookup("sqlite")
	for range 2 {
		err := guarded.QueryRowContext(ctx, "SELECT price FROM quotes").Err()
		require.Error(t, err)
		assert.Contains(t, err.Error(), "locked")
	}
	assert.Equal(t, runtime.Open, b.State())
	assert.ErrorIs(t, guarded.QueryRowContext(ctx, "SELECT price FROM quotes").Err(), runtime.ErrOpen)
	_, err = conn.ExecContext(ctx, "ROLLBACK")
	require.NoError(t, err)
}

func countRows(t *testing.T, db *sql.DB) int {
	var n int
	require.NoError(t, db.QueryRow("SELECT count(*) FROM quotes").Scan(&n))
	return n
}

// TestSQLNilDBRefused: a nil *sql.DB (a var never assigned) is refused as
// the nil interface is, with breakerimpl.ErrNilImpl through the Row and
// the error, rather than panicking inside database/sql at the first call,
// where the panic would count as a failure of the shared breaker.
func TestSQLNilDBRefused(t *testing.T) {
	reg := newRegistry(newClock())
	var db *sql.DB
	guarded := clients.NewDBBreaker(db, reg)
	ctx := context.Background()
	var price float64
	row := guarded.QueryRowContext(ctx, "SELECT price FROM quotes WHERE code = ?", "600519")
	assert.ErrorIs(t, row.Err(), breakerimpl.ErrNilImpl)
	assert.ErrorIs(t, row.Scan(&price), breakerimpl.ErrNilImpl)
	_, err := guarded.ExecContext(ctx, "DELETE FROM quotes")
	assert.ErrorIs(t, err, breakerimpl.ErrNilImpl)
	b, _ := reg.Lookup("sqlite")
	assert.Equal(t, runtime.Closed, b.State())
	assert.Zero(t, b.Stats().Failures, "a refused nil counts nothing")
}

// TestSQLDeferredRollbackIsNoFailure: database/sql's idiom defers the
// Rollback of every transaction, which answers sql.ErrTxDone once the
// transaction committed. That is an answer, not a failure: three healthy
// transactions counted three failures (an adopter review's run), enough
// to trip a failure-rate window on a healthy database. A statement that
// fails in the transaction still counts.
func TestSQLDeferredRollbackIsNoFailure(t *testing.T) {
	db := openSQLite(t, filepath.Join(t.TempDir(), "tx.db"))
	ctx := context.Background()
	_, err := db.ExecContext(ctx, "CREATE TABLE quotes (code TEXT PRIMARY KEY, price REAL)")
	require.NoError(t, err)
	reg := newRegistry(newClock())

	insert := func(code string) error {
		raw, err := db.BeginTx(ctx, nil)
		require.NoError(t, err)
		tx := clients.NewTxBreaker(raw, reg)
		defer func() { assert.ErrorIs(t, tx.Rollback(), sql.ErrTxDone, "a committed transaction's rollback") }()
		if _, err := tx.ExecContext(ctx, "INSERT INTO quotes VALUES (?, 1.5)", code); err != nil {
			return err
		}
		return tx.Commit()
	}
	for _, code := range []string{"600519", "000001", "300750"} {
		require.NoError(t, insert(code))
	}
	b, _ := reg.Lookup("sqlitetx")
	assert.Equal(t, uint64(0), b.Stats().Failures, "a deferred rollback after a commit")
	assert.Equal(t, runtime.Closed, b.State())

	raw, err := db.BeginTx(ctx, nil)
	require.NoError(t, err)
	tx := clients.NewTxBreaker(raw, reg)
	_, err = tx.ExecContext(ctx, "INSERT INTO prices VALUES (?, 1.5)", "600519")
	require.Error(t, err)
	assert.Equal(t, uint64(1), b.Stats().Failures, "a statement that fails counts")
	require.NoError(t, tx.Rollback())
}
