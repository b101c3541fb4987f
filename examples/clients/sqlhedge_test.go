package clients_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/breakergen/breakergen/runtime"
)

// HedgedReads races two databases' reads (SPEC §9's hedge).
//
//breaker:name=hedgedreads threshold=3 reset=5s hedge=20ms chain
type HedgedReads interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// countedCtx is a caller's long-lived ctx (a worker's) that counts what
// is registered with it: the context package registers a func with its
// AfterFunc for each ctx derived from it, as a context.WithCancel ctx
// keeps its children.
type countedCtx struct {
	context.Context // its values, deadline and Err: the background's

	mu    sync.Mutex // guards funcs, next
	funcs map[int]func()
	next  int
}

func (c *countedCtx) Done() <-chan struct{} { return make(chan struct{}) } // never closed

func (c *countedCtx) AfterFunc(f func()) func() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	id := c.next
	c.next++
	c.funcs[id] = f
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		_, ok := c.funcs[id]
		delete(c.funcs, id)
		return ok
	}
}

func (c *countedCtx) registered() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.funcs)
}

// TestHedgedSQLLetsGoOfTheCallersCtx: a hedged chain's *sql.Row and
// *sql.Rows read through their source's ctx until scanned or closed;
// once they are, nothing of the call stays registered with the caller's
// long-lived ctx (before, one ctx a call did, until that ctx ended).
func TestHedgedSQLLetsGoOfTheCallersCtx(t *testing.T) {
	db := openSQLite(t, filepath.Join(t.TempDir(), "h.db"))
	_, err := db.ExecContext(context.Background(), "CREATE TABLE quotes (code TEXT PRIMARY KEY, price REAL)")
	require.NoError(t, err)
	_, err = db.ExecContext(context.Background(), "INSERT INTO quotes VALUES ('600519', 1688.5), ('000001', 11.2)")
	require.NoError(t, err)
	reg := runtime.NewRegistry(runtime.WithoutEnv())
	reads := NewHedgedReadsChain(db, reg, runtime.Fallback[HedgedReads]{Name: "replica", Impl: db})
	parent := &countedCtx{Context: context.Background(), funcs: map[int]func(){}}

	for range 100 {
		var price float64
		require.NoError(t, reads.QueryRowContext(parent, "SELECT price FROM quotes WHERE code = ?", "600519").Scan(&price))
		assert.Equal(t, 1688.5, price)

		rows, err := reads.QueryContext(parent, "SELECT code FROM quotes ORDER BY code")
		require.NoError(t, err)
		require.True(t, rows.Next(), rows.Err())
		assert.NotZero(t, parent.registered(), "rows being read still hear of the caller's ctx")
		require.NoError(t, rows.Close())
		require.NoError(t, rows.Err(), "closed early: no ctx ended under them")
	}
	assert.Zero(t, parent.registered(), "ctxs registered with the caller's live ctx after 100 rows scanned and 100 closed")
}
