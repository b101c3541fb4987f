package e2e

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/breakergen/breakergen/runtime"
)

// rowsDB is a database/sql connector whose every query answers rows of
// one column (none, for the query "empty") and counts the rows closed.
type rowsDB struct{ closed atomic.Int32 }

func (d *rowsDB) Connect(context.Context) (driver.Conn, error) { return rowsConn{d}, nil }
func (d *rowsDB) Driver() driver.Driver                        { return nil }

type rowsConn struct{ d *rowsDB }

func (rowsConn) Prepare(string) (driver.Stmt, error) { return nil, driver.ErrSkip }
func (rowsConn) Close() error                        { return nil }
func (rowsConn) Begin() (driver.Tx, error)           { return nil, driver.ErrSkip }
func (c rowsConn) QueryContext(_ context.Context, query string, _ []driver.NamedValue) (driver.Rows, error) {
	return &fakeRows{d: c.d, empty: query == "empty"}, nil
}

type fakeRows struct {
	d           *rowsDB
	empty, done bool
}

func (r *fakeRows) Columns() []string {
	if r.empty {
		return nil
	}
	return []string{"v"}
}

func (r *fakeRows) Close() error {
	r.d.closed.Add(1)
	return nil
}

func (r *fakeRows) Next(dest []driver.Value) error {
	if r.done || r.empty {
		return io.EOF
	}
	r.done, dest[0] = true, int64(1)
	return nil
}

// openRows opens a *sql.DB over a rowsDB, closed when the test ends.
func openRows(t *testing.T) (*sql.DB, *rowsDB) {
	d := &rowsDB{}
	db := sql.OpenDB(d)
	t.Cleanup(func() { db.Close() })
	return db, d
}

// trackedBody is a response body that counts its closes.
type trackedBody struct {
	io.Reader
	closed atomic.Int32
}

func (b *trackedBody) Close() error {
	b.closed.Add(1)
	return nil
}

// slowPages is a Held that answers after delay, whatever its ctx says,
// as an upstream that has already sent its answer does: status for
// Fetch, a row or rows of db for the others.
type slowPages struct {
	delay  time.Duration
	status int
	db     *sql.DB
	body   *trackedBody // Fetch's last answer's
}

func (p *slowPages) Fetch(ctx context.Context, url string) (*http.Response, error) {
	time.Sleep(p.delay) // the upstream's latency, on the bubble's clock
	p.body = &trackedBody{Reader: strings.NewReader("page")}
	return &http.Response{StatusCode: p.status, Status: http.StatusText(p.status), Body: p.body}, nil
}

func (p *slowPages) QueryRow(ctx context.Context, query string) *sql.Row {
	time.Sleep(p.delay)
	return p.db.QueryRowContext(context.Background(), query) // already answered: the ctx's end does not close it
}

func (p *slowPages) Query(ctx context.Context, query string) (*sql.Rows, error) {
	time.Sleep(p.delay)
	return p.db.QueryContext(context.Background(), query)
}

// TestHedgedRaceReleasesTheLosersAnswers: a hedged chain whose answers
// hold a connection (an *http.Response, a *sql.Row, *sql.Rows) releases
// the answer of a source that lost the race, and the failed answer of a
// source it moved on from; the winner's reaches the caller open.
func TestHedgedRaceReleasesTheLosersAnswers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		db, rows := openRows(t)
		// The primary answers at 150ms; the mirror, asked at the hedge
		// delay (100ms), at once: the primary loses.
		primary := &slowPages{delay: 150 * time.Millisecond, status: http.StatusOK, db: db}
		mirror := &slowPages{status: http.StatusOK, db: db}
		c := NewHeldChain(primary, newRegistry(), runtime.Fallback[Held]{Name: "m1", Impl: mirror})

		ctx, p := runtime.WithProvenance(context.Background())
		resp, err := c.Fetch(ctx, "/q")
		require.NoError(t, err)
		assert.Same(t, mirror.body, resp.Body)
		assert.Equal(t, "fallback:m1 hedged (held slow)", p.String())
		assert.Equal(t, int32(1), primary.body.closed.Load(), "the loser's body, answered after the winner, is closed")
		assert.Zero(t, mirror.body.closed.Load(), "the winner's is the caller's")

		row := c.QueryRow(context.Background(), "q")
		require.NoError(t, row.Err())
		assert.Equal(t, int32(1), rows.closed.Load(), "the loser's row is scanned, and its rows closed")
		assert.Equal(t, 1, db.Stats().InUse, "only the winner's row holds a connection")
		var v int
		require.NoError(t, row.Scan(&v))
		assert.Equal(t, 1, v)
		assert.Equal(t, 0, db.Stats().InUse)

		rs, err := c.Query(context.Background(), "q")
		require.NoError(t, err)
		assert.Equal(t, int32(3), rows.closed.Load(), "the loser's rows closed")
		require.NoError(t, rs.Close())
		assert.Equal(t, 0, db.Stats().InUse)

		// The primary answers a 503 at once: a failure, passed over and
		// closed; the mirror is asked then.
		primary.delay, primary.status = 0, http.StatusServiceUnavailable
		resp, err = c.Fetch(context.Background(), "/q")
		require.NoError(t, err)
		assert.Equal(t, http.StatusOK, resp.StatusCode)
		assert.Equal(t, int32(1), primary.body.closed.Load(), "the 503's body, which no caller sees")
		assert.Zero(t, mirror.body.closed.Load())
	})
}

// TestChainClosesTheRowsItPassesOver: a chain that passes over a source's
// *sql.Rows (valid found no data) closes them: left open, each would hold
// a connection of the pool until the ctx of its query ended, for ever
// with the background's.
func TestChainClosesTheRowsItPassesOver(t *testing.T) {
	db, rows := openRows(t)
	primary, mirror := &fakeReplica{db: db}, &fakeReplica{db: db}
	c := NewReplicaChain(primary, newRegistry(), runtime.Fallback[Replica]{Name: "m1", Impl: mirror})

	ctx, p := runtime.WithProvenance(context.Background())
	rs, err := c.Query(ctx, "empty")
	var ce *runtime.ChainError
	require.ErrorAs(t, err, &ce, "no source had data")
	assert.Nil(t, rs)
	assert.Equal(t, "none (mirror invalid, fallback:m1 invalid)", p.String())
	assert.Equal(t, int32(2), rows.closed.Load())
	assert.Equal(t, 0, db.Stats().InUse, "no connection is held")

	rs, err = c.Query(context.Background(), "q")
	require.NoError(t, err)
	assert.Equal(t, 1, db.Stats().InUse, "the answer's rows are the caller's")
	require.NoError(t, rs.Close())
}
