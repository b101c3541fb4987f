package e2e

import (
	"context"
	"database/sql"
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
	"github.com/breakergen/breakergen/runtime/breakerimpl/sqlimpl"
	"github.com/breakergen/breakergen/runtime/httpguard"
)

// fakeReplica is a Replica (and a Cache) answering what the test sets.
type fakeReplica struct {
	cmd    *Cmd
	rowErr error
	resp   *Response
	rt     http.RoundTripper
	db     *sql.DB // Query's
	calls  int
}

func (f *fakeReplica) Get(ctx context.Context, key string) *Cmd {
	f.calls++
	return f.cmd
}

func (f *fakeReplica) QueryRow(ctx context.Context, query string) *sql.Row {
	f.calls++
	return sqlimpl.Row(f.rowErr)
}

func (f *fakeReplica) RoundTrip(req *http.Request) (*http.Response, error) {
	f.calls++
	return f.rt.RoundTrip(req)
}

func (f *fakeReplica) Ask(ctx context.Context, path string) (*Response, error) {
	f.calls++
	return f.resp, nil
}

func (f *fakeReplica) Query(ctx context.Context, query string) (*sql.Rows, error) {
	f.calls++
	return f.db.QueryContext(ctx, query)
}

// fakeCache is a Cache over a fakeReplica.
type fakeCache struct{ *fakeReplica }

func (f fakeCache) Ask(req *Request) (*Response, error) {
	return f.fakeReplica.Ask(req.Context(), req.Path)
}

func TestRetriedCarrierInjectedFaultIsTheAnswer(t *testing.T) {
	// Every try injected: no try answered, so the fault is the answer, in
	// the carrier (a nil *Cmd would panic in the caller) or as the error.
	f := &fakeClient{}
	reg := runtime.NewRegistry(runtime.WithConfig(runtime.Config{Name: "tried", Fault: 1}))
	w := NewClientBreaker(f, reg)
	cmd := w.Fetch(context.Background(), "k")
	require.NotNil(t, cmd, "a refusal in a new Cmd")
	assert.ErrorIs(t, cmd.Err(), runtime.ErrInjected)
	resp, err := w.Ask(NewRequest(context.Background(), "/"))
	assert.Nil(t, resp)
	assert.ErrorIs(t, err, runtime.ErrInjected)
	assert.Zero(t, f.calls, "an injected try calls nothing")
}

func TestStaleCarrierServedWhenTheCallFails(t *testing.T) {
	f := &fakeReplica{cmd: NewCmd("v1", nil)}
	reg := newRegistry()
	w := NewCacheBreaker(fakeCache{f}, reg)
	ctx := context.Background()
	fresh := w.Get(ctx, "k")
	require.Equal(t, "v1", fresh.Val())

	f.cmd = NewCmd("", errDown)
	pctx, p := runtime.WithProvenance(ctx)
	got := w.Get(pctx, "k")
	assert.Same(t, fresh, got, "the kept command, as returned")
	assert.True(t, p.Stale)
	assert.Equal(t, "stale", p.Source)
	assert.Equal(t, "cache", p.Skipped[0].Source)

	// Another key has nothing kept: its failure reaches the caller.
	assert.ErrorIs(t, w.Get(ctx, "other").Err(), errDown)
	require.Equal(t, runtime.Open, state(t, reg, "cache"))
	// Refused: the stale command still, and the upstream is not called.
	calls := f.calls
	assert.Same(t, fresh, w.Get(ctx, "k"))
	assert.Equal(t, calls, f.calls)
	cmd := w.Get(ctx, "other")
	assert.ErrorIs(t, cmd.Err(), runtime.ErrOpen, "nothing kept: the refusal, in a new Cmd")
}

func TestValidCarrierIsNoData(t *testing.T) {
	f := &fakeReplica{cmd: NewCmd("", nil)} // an empty value: no data
	reg := newRegistry()
	w := NewCacheBreaker(fakeCache{f}, reg)
	ctx := context.Background()
	for range 5 {
		cmd := w.Get(ctx, "k")
		assert.Same(t, f.cmd, cmd, "no data and nothing kept: returned as it is")
	}
	assert.Equal(t, runtime.Closed, state(t, reg, "cache"), "no data is no failure")
	// Nor is it kept: a failure later has nothing stale to serve.
	f.cmd = NewCmd("", errDown)
	assert.ErrorIs(t, w.Get(ctx, "k").Err(), errDown)
}

func TestJudgedValidStaleWithAnErrorResult(t *testing.T) {
	f := &fakeReplica{resp: &Response{Code: 200}}
	reg := newRegistry()
	w := NewCacheBreaker(fakeCache{f}, reg)
	req := NewRequest(context.Background(), "/a")
	ok, err := w.Ask(req)
	require.NoError(t, err)
	require.Equal(t, 200, ok.Code)

	// A 500 is a failure: the kept answer is served instead, and the
	// failed answer is not kept.
	f.resp = &Response{Code: 500}
	got, err := w.Ask(req)
	require.NoError(t, err)
	assert.Same(t, ok, got)
	// A zero code is no data: served the kept answer too, and no failure.
	f.resp = &Response{}
	got, err = w.Ask(req)
	require.NoError(t, err)
	assert.Same(t, ok, got)
	assert.Equal(t, runtime.Closed, state(t, reg, "cache"), "one failure and no data: under threshold 2")
}

func TestCarrierChainFallsBack(t *testing.T) {
	primary := &fakeReplica{cmd: NewCmd("", errDown)}
	mirror := &fakeReplica{cmd: NewCmd("m", nil)}
	reg := newRegistry()
	c := NewReplicaChain(primary, reg, runtime.Fallback[Replica]{Name: "m1", Impl: mirror})
	ctx, p := runtime.WithProvenance(context.Background())
	assert.Same(t, mirror.cmd, c.Get(ctx, "k"))
	assert.Equal(t, "fallback:m1", p.Source)
	require.Len(t, p.Skipped, 1)
	assert.Equal(t, "error", p.Skipped[0].Why)

	// Every source fails: the chain's error, in a new Cmd, matching each.
	mirror.cmd = NewCmd("", io.ErrUnexpectedEOF)
	cmd := c.Get(context.Background(), "k")
	var ce *runtime.ChainError
	require.ErrorAs(t, cmd.Err(), &ce)
	assert.ErrorIs(t, cmd.Err(), errDown)
	assert.ErrorIs(t, cmd.Err(), io.ErrUnexpectedEOF)
	assert.Len(t, ce.Sources, 2)

	// The primary opens (threshold 2): skipped without a call.
	require.Equal(t, runtime.Open, state(t, reg, "mirror"))
	mirror.cmd = NewCmd("m", nil)
	calls := primary.calls
	ctx, p = runtime.WithProvenance(context.Background())
	assert.Equal(t, "m", c.Get(ctx, "k").Val())
	assert.Equal(t, calls, primary.calls)
	assert.Equal(t, "open", p.Skipped[0].Why)
}

func TestRowChainReturnsTheChainErrorInARow(t *testing.T) {
	primary := &fakeReplica{rowErr: errDown}
	mirror := &fakeReplica{rowErr: sql.ErrConnDone}
	c := NewReplicaChain(primary, newRegistry(), runtime.Fallback[Replica]{Name: "m1", Impl: mirror})
	row := c.QueryRow(context.Background(), "SELECT 1")
	var ce *runtime.ChainError
	require.ErrorAs(t, row.Err(), &ce)
	assert.ErrorIs(t, row.Err(), errDown)
	assert.ErrorIs(t, row.Err(), sql.ErrConnDone)
	var s string
	assert.ErrorIs(t, row.Scan(&s), errDown, "Scan returns it too")
	assert.Equal(t, 1, primary.calls)
	assert.Equal(t, 1, mirror.calls)
}

// closeCounter counts the response bodies closed through it.
type closeCounter struct {
	next   http.RoundTripper
	closed *atomic.Int32
}

func (c closeCounter) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := c.next.RoundTrip(req)
	if err == nil {
		resp.Body = countedBody{resp.Body, c.closed}
	}
	return resp, err
}

type countedBody struct {
	io.ReadCloser
	closed *atomic.Int32
}

func (b countedBody) Close() error {
	b.closed.Add(1)
	return b.ReadCloser.Close()
}

func TestRoundTripChainOverRealServers(t *testing.T) {
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "overloaded", http.StatusServiceUnavailable)
	}))
	defer down.Close()
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		_, _ = io.WriteString(w, "from the mirror"+string(body))
	}))
	defer up.Close()
	var closed atomic.Int32
	// Each source sends every request to its own server.
	to := func(srv *httptest.Server) http.RoundTripper {
		return closeCounter{next: rewrite{srv: srv, next: srv.Client().Transport}, closed: &closed}
	}
	primary := &fakeReplica{rt: to(down)}
	mirror := &fakeReplica{rt: to(up)}
	chain := NewReplicaChain(primary, newRegistry(), runtime.Fallback[Replica]{Name: "m1", Impl: mirror})
	client := &http.Client{Transport: chain}

	ctx, p := runtime.WithProvenance(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://quotes.example/q", nil)
	require.NoError(t, err)
	resp, err := client.Do(req)
	require.NoError(t, err)
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "from the mirror", string(body))
	assert.Equal(t, "fallback:m1", p.Source)
	assert.Equal(t, "error", p.Skipped[0].Why)
	assert.Equal(t, int32(2), closed.Load(), "the 503 no caller saw, and the answer the caller closed")

	// Both answer 503: the chain's error, and both bodies closed.
	mirror.rt = to(down)
	closed.Store(0)
	req, err = http.NewRequest(http.MethodGet, "http://quotes.example/q", nil)
	require.NoError(t, err)
	resp, err = client.Do(req)
	if resp != nil {
		resp.Body.Close()
	}
	var ce *runtime.ChainError
	require.ErrorAs(t, err, &ce)
	assert.True(t, strings.Contains(err.Error(), "503"), err.Error())
	assert.Equal(t, int32(2), closed.Load())
	assert.False(t, errors.Is(err, runtime.ErrOpen))

	// A POST: the primary's 503 read its body; the mirror gets it whole,
	// read again through GetBody (set by http.NewRequest for a
	// *strings.Reader). Fresh registries: an open primary would be
	// passed over without reading the body, which the mirror could then
	// be sent as it is.
	mirror.rt = to(up)
	fresh := func() *http.Client {
		return &http.Client{Transport: NewReplicaChain(primary, newRegistry(), runtime.Fallback[Replica]{Name: "m1", Impl: mirror})}
	}
	req, err = http.NewRequest(http.MethodPost, "http://quotes.example/order", strings.NewReader(": order 1"))
	require.NoError(t, err)
	resp, err = fresh().Do(req)
	require.NoError(t, err)
	body, err = io.ReadAll(resp.Body)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, "from the mirror: order 1", string(body))

	// A body that cannot be read again: the mirror is not asked.
	req, err = http.NewRequest(http.MethodPost, "http://quotes.example/order", strings.NewReader(": order 2"))
	require.NoError(t, err)
	req.GetBody = nil
	ctx, p = runtime.WithProvenance(context.Background())
	resp, err = fresh().Do(req.WithContext(ctx))
	if resp != nil {
		resp.Body.Close()
	}
	var unsent *runtime.ChainError
	require.ErrorAs(t, err, &unsent)
	require.Len(t, unsent.Sources, 2)
	assert.Equal(t, "unsent", unsent.Sources[1].Why)
	assert.ErrorIs(t, err, httpguard.ErrUnrewindable)
	assert.Equal(t, "unsent", p.Skipped[1].Why)
}

// rewrite sends a request to srv, whatever its URL's host.
type rewrite struct {
	srv  *httptest.Server
	next http.RoundTripper
}

func (r rewrite) RoundTrip(req *http.Request) (*http.Response, error) {
	c := req.Clone(req.Context())
	c.URL.Scheme, c.URL.Host = "http", strings.TrimPrefix(r.srv.URL, "http://")
	return r.next.RoundTrip(c)
}

// fakeReads is a Reads that answers what the test sets, or hangs until
// its ctx ends.
type fakeReads struct {
	cmd  *Cmd
	resp *Response
	hang bool
}

func (f *fakeReads) Get(ctx context.Context, key string) *Cmd {
	if f.hang {
		<-ctx.Done()
		return NewCmd("", ctx.Err())
	}
	return f.cmd
}

func (f *fakeReads) Ask(ctx context.Context, path string) (*Response, error) {
	if f.hang {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	return f.resp, nil
}

func TestHedgedCarrierChain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		primary := &fakeReads{hang: true}
		replica := &fakeReads{cmd: NewCmd("r", nil)}
		reg := newRegistry()
		c := NewReadsChain(primary, reg, runtime.Fallback[Reads]{Name: "r1", Impl: replica})

		ctx, p := runtime.WithProvenance(context.Background())
		start := time.Now()
		got := c.Get(ctx, "k")
		assert.Same(t, replica.cmd, got)
		assert.Equal(t, 100*time.Millisecond, time.Since(start), "the replica was asked at the hedge delay")
		assert.Equal(t, "fallback:r1 hedged (reads slow)", p.String())
		synctest.Wait() // the loser's goroutine has ended
		assert.Equal(t, runtime.Closed, state(t, reg, "reads"), "the loser's cancellation is no failure")

		// Every source fails (and opens, threshold 1): the kept command;
		// none kept: the chain's error, in a new Cmd, every source
		// rejected now.
		primary.hang, primary.cmd = false, NewCmd("", errDown)
		replica.cmd = NewCmd("", errDown)
		ctx, p = runtime.WithProvenance(context.Background())
		assert.Equal(t, "r", c.Get(ctx, "k").Val())
		assert.True(t, p.Stale)
		cmd := c.Get(context.Background(), "other")
		var ce *runtime.ChainError
		require.ErrorAs(t, cmd.Err(), &ce)
		assert.ErrorIs(t, cmd.Err(), runtime.ErrOpen)
	})
}

func TestHedgedJudgedAnswerMovesOnAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// The primary answers a 500 at once: a failure, so the replica is
		// asked then, not at the hedge delay, and its answer wins.
		primary := &fakeReads{resp: &Response{Code: 500}}
		replica := &fakeReads{resp: &Response{Code: 200}}
		c := NewReadsChain(primary, newRegistry(), runtime.Fallback[Reads]{Name: "r1", Impl: replica})
		start := time.Now()
		resp, err := c.Ask(context.Background(), "/q")
		require.NoError(t, err)
		assert.Same(t, replica.resp, resp)
		assert.Zero(t, time.Since(start))

		// Both fail: the chain's error, and no response.
		replica.resp = &Response{Code: 502}
		resp, err = c.Ask(context.Background(), "/q")
		assert.Nil(t, resp)
		var ce *runtime.ChainError
		require.ErrorAs(t, err, &ce)
		assert.Len(t, ce.Sources, 2)
	})
}

// closedBody is a request body that counts its closes.
type closedBody struct {
	io.Reader
	closed *atomic.Int32
}

func (b closedBody) Close() error {
	b.closed.Add(1)
	return nil
}

// TestRefusedRoundTripClosesTheBody: a RoundTripper must close the
// request's body even when it fails. A call refused before any try sent
// the request closes it, in the wrapper and in a chain whose every source
// is refused; a request that was sent is closed by the transport, once.
func TestRefusedRoundTripClosesTheBody(t *testing.T) {
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "overloaded", http.StatusServiceUnavailable)
	}))
	defer down.Close()
	primary := &fakeReplica{rt: rewrite{srv: down, next: down.Client().Transport}}
	post := func(closed *atomic.Int32) *http.Request {
		req, err := http.NewRequest(http.MethodPost, "http://quotes.example/order", closedBody{strings.NewReader("order=1"), closed})
		require.NoError(t, err)
		return req
	}
	reg := newRegistry()
	w := NewReplicaBreaker(primary, reg)
	for range 2 { // threshold 2: the 503s trip it
		var closed atomic.Int32
		resp, err := w.RoundTrip(post(&closed))
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, int32(1), closed.Load(), "sent: the transport closed it")
	}
	require.Equal(t, runtime.Open, state(t, reg, "mirror"))
	var closed atomic.Int32
	_, err := w.RoundTrip(post(&closed))
	require.ErrorIs(t, err, runtime.ErrOpen)
	assert.Equal(t, int32(1), closed.Load(), "refused: the wrapper closed it")

	// A chain whose primary is open and whose fallback its breaker
	// refuses (isolated): no source sent it, so the chain closes it.
	mirror := &fakeReplica{rt: rewrite{srv: down, next: down.Client().Transport}}
	c := NewReplicaChain(primary, reg, runtime.Fallback[Replica]{Name: "m1", Impl: mirror})
	fb, ok := reg.Lookup("fallback:m1")
	require.True(t, ok)
	fb.Isolate("maintenance")
	closed.Store(0)
	_, err = c.RoundTrip(post(&closed))
	var ce *runtime.ChainError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, int32(1), closed.Load(), "no source sent it: the chain closed it")
	assert.Zero(t, mirror.calls)
}
