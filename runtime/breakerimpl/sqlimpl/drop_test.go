package sqlimpl_test

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"io"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/breakergen/breakergen/runtime"
	"github.com/breakergen/breakergen/runtime/breakerimpl/sqlimpl"
)

// rowsDB is a driver whose every query answers one row of one column and
// counts the rows closed.
type rowsDB struct{ closed atomic.Int32 }

func (d *rowsDB) Connect(context.Context) (driver.Conn, error) { return conn{d}, nil }
func (d *rowsDB) Driver() driver.Driver                        { return nil }

type conn struct{ d *rowsDB }

func (conn) Prepare(string) (driver.Stmt, error) { return nil, driver.ErrSkip }
func (conn) Close() error                        { return nil }
func (conn) Begin() (driver.Tx, error)           { return nil, driver.ErrSkip }
func (c conn) QueryContext(context.Context, string, []driver.NamedValue) (driver.Rows, error) {
	return &rows{d: c.d}, nil
}

type rows struct {
	d    *rowsDB
	done bool
}

func (*rows) Columns() []string { return []string{"v"} }
func (r *rows) Close() error {
	r.d.closed.Add(1)
	return nil
}

func (r *rows) Next(dest []driver.Value) error {
	if r.done {
		return io.EOF
	}
	r.done, dest[0] = true, int64(1)
	return nil
}

func TestDropReleasesTheConnection(t *testing.T) {
	d := &rowsDB{}
	db := sql.OpenDB(d)
	defer db.Close()
	row := db.QueryRowContext(context.Background(), "q")
	require.NoError(t, row.Err())
	assert.Equal(t, 1, db.Stats().InUse, "a row holds its connection until Scan")

	sqlimpl.Drop(row)
	assert.Equal(t, 0, db.Stats().InUse)
	assert.Equal(t, int32(1), d.closed.Load())
	var v int
	assert.Error(t, row.Scan(&v), "a dropped row is spent")
}

func TestDropHoldsNothing(t *testing.T) {
	assert.NotPanics(t, func() {
		sqlimpl.Drop(nil)
		sqlimpl.Drop(sqlimpl.Row(runtime.ErrOpen))
		sqlimpl.Drop(new(sql.Row)) // no rows: Scan would panic
	})
	row := sqlimpl.Row(runtime.ErrOpen)
	sqlimpl.Drop(row)
	assert.Same(t, runtime.ErrOpen, row.Err(), "a refusal's row is unchanged")
}
