package e2e

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/breakergen/breakergen/runtime"
	"github.com/breakergen/breakergen/runtime/breakerimpl"
	"github.com/breakergen/breakergen/runtime/httpguard"
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
	body   *trackedBody    // Fetch's last answer's
	ctx    context.Context // Fetch's last ctx
}

func (p *slowPages) Fetch(ctx context.Context, url string) (*http.Response, error) {
	p.ctx = ctx
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
		assert.Equal(t, "fallback:m1 hedged (held slow)", p.String())
		assert.Equal(t, int32(1), primary.body.closed.Load(), "the loser's body, answered after the winner, is closed")
		assert.Zero(t, mirror.body.closed.Load(), "the winner's is the caller's")
		assert.Error(t, primary.ctx.Err(), "the loser's ctx ended with the race")
		assert.NoError(t, mirror.ctx.Err(), "the winner's lives while its body is read")
		page, err := io.ReadAll(resp.Body) // the mirror's body, read through the ctx it was fetched with
		require.NoError(t, err)
		assert.Equal(t, "page", string(page))
		assert.Error(t, mirror.ctx.Err(), "and ends once the body is read: nothing of the call stays")
		require.NoError(t, resp.Body.Close())
		assert.Equal(t, int32(1), mirror.body.closed.Load())

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

// seqRows is a RetriedRows whose calls query, in turn, the queries it
// holds (the last one over and over), whatever they are asked.
type seqRows struct {
	db      *sql.DB
	queries []string
}

func (s *seqRows) Query(ctx context.Context, _ string) (*sql.Rows, error) {
	q := s.queries[0]
	if len(s.queries) > 1 {
		s.queries = s.queries[1:]
	}
	return s.db.QueryContext(ctx, q)
}

// TestRetryClosesTheRowsItReplaces: a retry that replaces rows its
// failure func judged a failure closes them, in the wrapper and in the
// chain's primary: left open, each would hold a connection of the pool.
func TestRetryClosesTheRowsItReplaces(t *testing.T) {
	for _, chain := range []bool{false, true} {
		db, rows := openRows(t)
		upstream := &seqRows{db: db, queries: []string{"empty", "q"}}
		var q RetriedRows = NewRetriedRowsBreaker(upstream, newRegistry())
		if chain {
			q = NewRetriedRowsChain(upstream, newRegistry())
		}
		rs, err := q.Query(context.Background(), "q")
		require.NoError(t, err)
		assert.Equal(t, int32(1), rows.closed.Load(), "the failed rows, replaced by the retry")
		assert.Equal(t, 1, db.Stats().InUse, "only the answer holds a connection")
		require.NoError(t, rs.Close())
	}
}

// bodyServer is an httptest server that records the bodies it is sent
// and answers with its name, or, with hang, waits until the request is
// cancelled and reports that on cancelled.
func bodyServer(t *testing.T, name string, hang bool) (srv *httptest.Server, bodies chan string, cancelled chan struct{}) {
	bodies, cancelled = make(chan string, 4), make(chan struct{}, 4)
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		bodies <- string(b)
		if hang {
			<-r.Context().Done()
			cancelled <- struct{}{}
			return
		}
		_, _ = io.WriteString(w, name)
	}))
	t.Cleanup(srv.Close)
	return srv, bodies, cancelled
}

// TestHedgedRoundTripOverRealServers: a hedged RoundTrip sends the
// mirror a request of its own once the primary has not answered within
// the delay, its body read again through GetBody; the mirror's answer
// wins, and the primary's request is cancelled (its server sees it go).
func TestHedgedRoundTripOverRealServers(t *testing.T) {
	slow, slowBodies, slowCancelled := bodyServer(t, "primary", true)
	fast, fastBodies, _ := bodyServer(t, "mirror", false)
	transport := &http.Transport{}
	t.Cleanup(transport.CloseIdleConnections)
	c := NewMirrorsChain(rewrite{slow, transport}, newRegistry(),
		runtime.Fallback[Mirrors]{Name: "m1", Impl: rewrite{fast, transport}})
	client := &http.Client{Transport: c}

	for _, method := range []string{http.MethodGet, http.MethodPost} {
		var body io.Reader
		want := ""
		if method == http.MethodPost {
			body, want = strings.NewReader("order=1"), "order=1"
		}
		ctx, p := runtime.WithProvenance(context.Background())
		req, err := http.NewRequestWithContext(ctx, method, "http://quotes/", body)
		require.NoError(t, err)
		resp, err := client.Do(req)
		require.NoError(t, err)
		got, _ := io.ReadAll(resp.Body)
		require.NoError(t, resp.Body.Close())
		assert.Equal(t, "mirror", string(got))
		assert.Equal(t, "fallback:m1 hedged (mirrors slow)", p.String())
		assert.Equal(t, want, <-slowBodies, "each source read the whole body")
		assert.Equal(t, want, <-fastBodies)
		<-slowCancelled // the loser's request was cancelled
	}
}

// oneBodyMirror is a Mirrors that reads the request's body and answers
// its name after delay, on the bubble's clock.
type oneBodyMirror struct {
	name  string
	delay time.Duration
	read  []string
}

func (m *oneBodyMirror) RoundTrip(req *http.Request) (*http.Response, error) {
	b, _ := io.ReadAll(req.Body)
	_ = req.Body.Close()
	m.read = append(m.read, string(b))
	select {
	case <-time.After(m.delay):
	case <-req.Context().Done():
		return nil, req.Context().Err()
	}
	return &http.Response{StatusCode: http.StatusOK, Body: io.NopCloser(strings.NewReader(m.name))}, nil
}

// TestHedgedRoundTripOneBody: a body that cannot be read again (no
// GetBody) is sent once, by the primary: the mirror the hedge asks sends
// nothing, is passed over as unsent and counted as nothing, and the
// primary's answer comes when it comes. A request that no source sent has
// its body closed.
func TestHedgedRoundTripOneBody(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		primary := &oneBodyMirror{name: "primary", delay: time.Second}
		mirror := &oneBodyMirror{name: "mirror"}
		reg := newRegistry()
		c := NewMirrorsChain(primary, reg, runtime.Fallback[Mirrors]{Name: "m1", Impl: mirror})

		ctx, p := runtime.WithProvenance(context.Background())
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://quotes/", io.MultiReader(strings.NewReader("order=1")))
		require.NoError(t, err)
		require.Nil(t, req.GetBody)
		resp, err := c.RoundTrip(req)
		require.NoError(t, err)
		got, _ := io.ReadAll(resp.Body)
		assert.Equal(t, "primary", string(got))
		assert.Equal(t, []string{"order=1"}, primary.read)
		assert.Empty(t, mirror.read, "never asked")
		require.Len(t, p.Skipped, 1)
		assert.Equal(t, "unsent", p.Skipped[0].Why)
		assert.ErrorIs(t, p.Skipped[0].Err, httpguard.ErrUnrewindable)
		b, ok := reg.Lookup("fallback:m1")
		require.True(t, ok)
		assert.Zero(t, b.Stats().Failures)

		// Every source refused (the primary isolated, the mirror too):
		// nothing sent the body, which is closed.
		for _, name := range []string{"mirrors", "fallback:m1"} {
			b, _ := reg.Lookup(name)
			b.Isolate("test")
		}
		var closed atomic.Int32
		req, err = http.NewRequest(http.MethodPost, "http://quotes/", &trackedCloser{Reader: strings.NewReader("x"), closed: &closed})
		require.NoError(t, err)
		_, err = c.RoundTrip(req)
		var ce *runtime.ChainError
		require.ErrorAs(t, err, &ce)
		assert.Equal(t, int32(1), closed.Load())
	})
}

// trackedCloser is a request body that counts its closes.
type trackedCloser struct {
	io.Reader
	closed *atomic.Int32
}

func (b *trackedCloser) Close() error {
	b.closed.Add(1)
	return nil
}

// TestNilCarrierIsAFailureNotAPanic: a method that returns a nil result
// which should carry its outcome (a mock with no Return) is a failure,
// returned in a new result whose Err() says what happened: the caller
// finds no nil to call Err() on.
func TestNilCarrierIsAFailureNotAPanic(t *testing.T) {
	reg := newRegistry()
	c := NewCacheBreaker(fakeCache{&fakeReplica{}}, reg) // its cmd is nil
	cmd := c.Get(context.Background(), "k")
	require.NotNil(t, cmd)
	assert.ErrorIs(t, cmd.Err(), breakerimpl.ErrNilResult)
	assert.Contains(t, cmd.Err().Error(), "Cache.Get returned a nil *Cmd")
	b, ok := reg.Lookup("cache")
	require.True(t, ok)
	assert.Equal(t, uint64(1), b.Stats().Failures)

	ch := NewReplicaChain(&fakeReplica{}, reg, runtime.Fallback[Replica]{Name: "m1", Impl: &fakeReplica{cmd: NewCmd("v", nil)}})
	assert.Equal(t, "v", ch.Get(context.Background(), "k").Val(), "the chain moves on from the nil result")
}

// reqDoer is a Doers whose Do sends req as it is, on req's own ctx, as an
// adapter calling client.Do(req) does: it answers its name after delay,
// or ends when req's ctx does.
type reqDoer struct {
	name      string
	delay     time.Duration
	cancelled bool
}

func (d *reqDoer) Do(_ context.Context, req *http.Request) (*http.Response, error) {
	select {
	case <-time.After(d.delay):
	case <-req.Context().Done():
		d.cancelled = true
		return nil, req.Context().Err()
	}
	return &http.Response{StatusCode: http.StatusOK, Body: io.NopCloser(strings.NewReader(d.name))}, nil
}

// TestHedgedDoCancelsTheLosersRequest: a hedged Do(ctx, req) whose
// primary reads only req's ctx returns when the mirror answers at the
// hedge delay, and the primary's request is cancelled, as a RoundTrip's
// is; with req on the caller's ctx, the call waited for the primary.
func TestHedgedDoCancelsTheLosersRequest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		primary := &reqDoer{name: "primary", delay: time.Hour}
		c := NewDoersChain(primary, newRegistry(), runtime.Fallback[Doers]{Name: "mirror", Impl: &reqDoer{name: "mirror"}})
		ctx := context.Background()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://quotes/", nil)
		require.NoError(t, err)
		start := time.Now()
		resp, err := c.Do(ctx, req)
		require.NoError(t, err)
		got, _ := io.ReadAll(resp.Body)
		require.NoError(t, resp.Body.Close())
		assert.Equal(t, "mirror", string(got))
		assert.Equal(t, 50*time.Millisecond, time.Since(start), "answered at the hedge delay")
		synctest.Wait()
		assert.True(t, primary.cancelled, "the losing request was cancelled")
	})
}

// nilDoer is a Doers that refuses a nil request, as a careful client does.
type nilDoer struct{}

func (nilDoer) Do(_ context.Context, req *http.Request) (*http.Response, error) {
	if req == nil {
		return nil, errors.New("nil request")
	}
	return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody}, nil
}

// TestHedgedDoNilRequest: a hedged Do(ctx, nil) reaches the client, whose
// error the caller gets: the race does not look into a nil request.
func TestHedgedDoNilRequest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := NewDoersChain(nilDoer{}, newRegistry(), runtime.Fallback[Doers]{Name: "mirror", Impl: nilDoer{}})
		_, err := c.Do(context.Background(), nil)
		assert.ErrorContains(t, err, "nil request")
	})
}

// TestHedgedDoKeepsTheRequestsOwnDeadline: a request made on a ctx of its
// own (here with a deadline shorter than the call's ctx) keeps it: each
// source sends it on its ctx, which ends the call at the request's
// deadline, not at the call's.
func TestHedgedDoKeepsTheRequestsOwnDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := NewDoersChain(&reqDoer{name: "primary", delay: time.Hour}, newRegistry(),
			runtime.Fallback[Doers]{Name: "mirror", Impl: &reqDoer{name: "mirror", delay: time.Hour}})
		reqCtx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
		defer cancel()
		req, err := http.NewRequestWithContext(reqCtx, http.MethodGet, "http://quotes/", nil)
		require.NoError(t, err)
		start := time.Now()
		_, err = c.Do(context.Background(), req)
		assert.ErrorIs(t, err, context.DeadlineExceeded)
		assert.Equal(t, 30*time.Millisecond, time.Since(start), "ended at the request's deadline")
	})
}
