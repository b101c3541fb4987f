package breakerimpl_test

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/breakergen/breakergen/runtime"
	"github.com/breakergen/breakergen/runtime/breakerimpl"
)

// watchedCtx is a caller's live ctx (a worker's, signal.NotifyContext's)
// that counts what is registered with it: the funcs its AfterFunc holds,
// which the context package registers for each ctx derived from it, as a
// context.cancelCtx keeps its children.
type watchedCtx struct {
	mu    sync.Mutex // guards err, funcs, next
	done  chan struct{}
	err   error
	funcs map[int]func()
	next  int
}

func newWatchedCtx() *watchedCtx {
	return &watchedCtx{done: make(chan struct{}), funcs: map[int]func(){}}
}

func (c *watchedCtx) Deadline() (time.Time, bool) { return time.Time{}, false }
func (c *watchedCtx) Value(any) any               { return nil }
func (c *watchedCtx) Done() <-chan struct{}       { return c.done }

func (c *watchedCtx) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

func (c *watchedCtx) AfterFunc(f func()) func() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		go f()
		return func() bool { return false }
	}
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

func (c *watchedCtx) cancel() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return
	}
	c.err = context.Canceled
	close(c.done)
	for id, f := range c.funcs {
		delete(c.funcs, id)
		go f()
	}
}

// registered is how many ctxs derived from c (or funcs) it holds.
func (c *watchedCtx) registered() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.funcs)
}

// rowsDB is a *sql.DB over a driver whose every query answers the rows
// 1, 2, 3 of one column.
func rowsDB() *sql.DB { return sql.OpenDB(rowsConnector{}) }

type rowsConnector struct{}

func (rowsConnector) Connect(context.Context) (driver.Conn, error) { return rowsConn{}, nil }
func (rowsConnector) Driver() driver.Driver                        { return rowsDriver{} }

type rowsDriver struct{}

func (rowsDriver) Open(string) (driver.Conn, error) { return rowsConn{}, nil }

type rowsConn struct{}

func (rowsConn) Prepare(string) (driver.Stmt, error) { return rowsStmt{}, nil }
func (rowsConn) Close() error                        { return nil }
func (rowsConn) Begin() (driver.Tx, error)           { return nil, errors.New("no transactions") }

type rowsStmt struct{}

func (rowsStmt) Close() error                               { return nil }
func (rowsStmt) NumInput() int                              { return -1 }
func (rowsStmt) Exec([]driver.Value) (driver.Result, error) { return nil, errors.New("no exec") }
func (rowsStmt) Query([]driver.Value) (driver.Rows, error)  { return &rows3{}, nil }

type rows3 struct{ i int }

func (*rows3) Columns() []string { return []string{"v"} }
func (*rows3) Close() error      { return nil }

func (r *rows3) Next(dest []driver.Value) error {
	if r.i == 3 {
		return io.EOF
	}
	r.i++
	dest[0] = int64(r.i)
	return nil
}

// derivedStream is a stream read through a ctx derived from its source's
// (as net/http's body and gRPC's stream are): Close ends that ctx.
type derivedStream struct {
	io.Reader
	ctx    context.Context
	cancel context.CancelFunc
}

func (s *derivedStream) Read(p []byte) (int, error) {
	if err := s.ctx.Err(); err != nil {
		return 0, err
	}
	return s.Reader.Read(p)
}

func (s *derivedStream) Close() error { s.cancel(); return nil }

// lazyStream is a stream whose reader asks for its source's ctx's Done
// only when it reads, after the call returned.
type lazyStream struct {
	io.Reader
	ctx context.Context
}

func (s *lazyStream) Read(p []byte) (int, error) {
	select {
	case <-s.ctx.Done():
		return 0, s.ctx.Err()
	default:
	}
	return s.Reader.Read(p)
}

func (s *lazyStream) Close() error { return nil }

// heldAnswer is one kind of answer that holds its source's ctx until the
// caller releases it: what a source makes of its ctx, and how the caller
// reads it before release (which fails once the caller's ctx ended), then
// releases it.
type heldAnswer struct {
	name    string
	ask     func(ctx context.Context, db *sql.DB) any
	read    func(v any) error // reads part of it; errors once the caller's ctx ended
	release func(v any) error
	// unwatched: nothing of it watches the ctx when the call returns, so
	// the race lets go of the caller's ctx at once.
	unwatched bool
}

var heldAnswers = []heldAnswer{{
	name: "sql.Row scanned",
	ask:  func(ctx context.Context, db *sql.DB) any { return db.QueryRowContext(ctx, "q") },
	read: func(any) error { return nil }, // Scan both reads and releases it
	release: func(v any) error {
		var n int
		if err := v.(*sql.Row).Scan(&n); err != nil {
			return err
		}
		if n != 1 {
			return errors.New("scanned the wrong row")
		}
		return nil
	},
}, {
	name: "sql.Rows closed early",
	ask: func(ctx context.Context, db *sql.DB) any {
		rows, err := db.QueryContext(ctx, "q")
		if err != nil {
			panic(err)
		}
		return rows
	},
	read: func(v any) error {
		rows := v.(*sql.Rows)
		if !rows.Next() {
			return rows.Err()
		}
		return nil
	},
	release: func(v any) error {
		rows := v.(*sql.Rows)
		if err := rows.Close(); err != nil {
			return err
		}
		return rows.Err() // a ctx ended under the rows would be here
	},
}, {
	name: "stream on a derived ctx closed",
	ask: func(ctx context.Context, _ *sql.DB) any {
		dctx, cancel := context.WithCancel(ctx)
		return &derivedStream{Reader: strings.NewReader("data"), ctx: dctx, cancel: cancel}
	},
	read: func(v any) error {
		_, err := v.(io.Reader).Read(make([]byte, 1))
		return err
	},
	release: func(v any) error { return v.(io.Closer).Close() },
}, {
	name: "stream of a source that only watched its ctx",
	ask: func(ctx context.Context, _ *sql.DB) any {
		_ = ctx.Done() // during the call only, as a client that can be cancelled
		return io.NopCloser(strings.NewReader("data"))
	},
	release: func(v any) error { return v.(io.Closer).Close() },
}, {
	name: "stream whose reader asks for Done after the call",
	ask: func(ctx context.Context, _ *sql.DB) any {
		return &lazyStream{Reader: strings.NewReader("data"), ctx: ctx}
	},
	read: func(v any) error {
		_, err := v.(io.Reader).Read(make([]byte, 1))
		return err
	},
	release:   func(v any) error { return v.(io.Closer).Close() },
	unwatched: true,
}}

// TestHedgeHeldLetsGoOfTheCallersCtx: a hedged race with the hook Held
// (an answer read through its source's ctx after the call: a *sql.Row
// until Scan, *sql.Rows until Close, a stream until closed) leaves the
// winner's ctx live while the answer is read, so that the caller's
// cancel still reaches it, and once the answer is released nothing of
// the call stays registered with the caller's live ctx, whichever source
// won: before, the winner's ctx stayed registered until the caller's ctx
// ended, one per call under a long-lived ctx. A source that only watched
// its ctx during the call holds nothing after it.
func TestHedgeHeldLetsGoOfTheCallersCtx(t *testing.T) {
	for _, winner := range []string{"primary", "backup in order", "backup hedged"} {
		for _, h := range heldAnswers {
			t.Run(winner+"/"+h.name, func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					db := rowsDB()
					defer db.Close()
					reg := runtime.NewRegistry(runtime.WithoutEnv(), runtime.WithLogger(discardLogger()))
					rt := breakerimpl.NewRoute(reg, 0, breakerimpl.RouteConfig{Breaker: runtime.Config{Name: "primary"}, Hedge: time.Second})
					fb := breakerimpl.NewRoute(reg, 1, breakerimpl.RouteConfig{Breaker: runtime.Config{Name: "backup"}})
					call := func(parent context.Context) any {
						var run breakerimpl.Chain
						if run.Start(parent, rt) {
							defer run.Done()
						}
						v, err := breakerimpl.RaceArgsWith(&run, 0, []runtime.Fallback[int]{{Name: "backup", Impl: 1}}, []*breakerimpl.Route{fb}, db,
							func(ctx context.Context, call breakerimpl.Call, impl int, db *sql.DB) (_ any, err error) {
								defer call.Exit(ctx, &err)
								err = breakerimpl.PanicGuard
								if impl == 0 {
									switch winner {
									case "backup in order":
										return nil, errUpstream
									case "backup hedged":
										<-ctx.Done()
										return nil, ctx.Err()
									}
								}
								return h.ask(ctx, db), nil
							}, breakerimpl.RaceHooks[any, *sql.DB]{Held: true})
						require.True(t, run.Won())
						require.NoError(t, err)
						return v
					}

					parent := newWatchedCtx()
					for range 3 {
						v := call(parent)
						if h.read != nil {
							require.NoError(t, h.read(v), "reading the answer before it is released")
						}
						require.NoError(t, h.release(v))
						synctest.Wait()
						assert.Zero(t, parent.registered(), "ctxs registered with the caller's live ctx after the answer was released")
					}

					if h.read == nil {
						return
					}
					// Unreleased, the answer still hears of the caller's
					// cancel.
					v := call(parent)
					if !h.unwatched {
						assert.NotZero(t, parent.registered(), "an answer not yet released is let go of")
					}
					require.NoError(t, h.read(v))
					parent.cancel()
					synctest.Wait()
					err := h.read(v)
					if _, row := v.(*sql.Row); row {
						err = h.release(v) // Scan reads it
					}
					assert.ErrorIs(t, err, context.Canceled, "reading after the caller's ctx ended")
					_ = h.release(v)
				})
			})
		}
	}
}

// TestHedgeHeldCtxEndsWhenItSaysSo: the winner's ctx of a Held race that
// let go of the caller's (nothing watched it when the call returned)
// keeps the context.Context contract once the caller's ctx ends: when
// its Err says it ended, its Done is closed, and so is a ctx derived from
// it then. Before, Err said Canceled and Done never closed.
func TestHedgeHeldCtxEndsWhenItSaysSo(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := runtime.NewRegistry(runtime.WithoutEnv(), runtime.WithLogger(discardLogger()))
		rt := breakerimpl.NewRoute(reg, 0, breakerimpl.RouteConfig{Breaker: runtime.Config{Name: "primary"}, Hedge: time.Second})
		fb := breakerimpl.NewRoute(reg, 1, breakerimpl.RouteConfig{Breaker: runtime.Config{Name: "backup"}})
		parent, cancel := context.WithCancel(context.Background())
		var run breakerimpl.Chain
		if run.Start(parent, rt) {
			defer run.Done()
		}
		src, err := breakerimpl.RaceArgsWith(&run, 0, []runtime.Fallback[int]{{Name: "backup", Impl: 1}}, []*breakerimpl.Route{fb}, 0,
			func(ctx context.Context, call breakerimpl.Call, _ int, _ int) (_ context.Context, err error) {
				defer call.Exit(ctx, &err)
				err = breakerimpl.PanicGuard
				return ctx, nil // an answer that keeps its source's ctx
			}, breakerimpl.RaceHooks[context.Context, int]{Held: true})
		require.True(t, run.Won())
		require.NoError(t, err)

		cancel()
		require.ErrorIs(t, src.Err(), context.Canceled)
		select {
		case <-src.Done():
		default:
			t.Fatal("Err says the ctx ended, and its Done is open")
		}
		derived, stop := context.WithCancel(src)
		defer stop()
		select {
		case <-derived.Done():
		default:
			t.Fatal("a ctx derived from an ended ctx is live")
		}
	})
}
