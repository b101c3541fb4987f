package e2e

import (
	"context"
	"database/sql"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/breakergen/breakergen/runtime"
	"github.com/breakergen/breakergen/runtime/breakerimpl"
	"github.com/breakergen/breakergen/runtime/breakerimpl/sqlimpl"
)

// fakeClient answers what the test sets and counts its calls.
type fakeClient struct {
	cmds   []*Cmd      // Fetch's answers, in turn
	resps  []*Response // Ask's answers, in turn
	cmd    *Cmd
	rowErr error
	resp   *Response
	calls  int
	seen   context.Context // the ctx of the last Do
	panics bool
}

func (f *fakeClient) Get(ctx context.Context, key string) *Cmd {
	f.calls++
	if f.panics {
		panic("boom")
	}
	return f.cmd
}

func (f *fakeClient) QueryRow(ctx context.Context, query string) *sql.Row {
	f.calls++
	return sqlimpl.Row(f.rowErr) // a row that failed, as a missing table's does
}

func (f *fakeClient) Fetch(ctx context.Context, key string) *Cmd {
	f.calls++
	c := f.cmds[0]
	f.cmds = f.cmds[1:]
	return c
}

func (f *fakeClient) Ask(req *Request) (*Response, error) {
	f.calls++
	r := f.resps[0]
	f.resps = f.resps[1:]
	return r, nil
}

func (f *fakeClient) Do(req *Request) (*Response, error) {
	f.calls++
	f.seen = req.Context()
	return f.resp, nil
}

func TestCarrierTripsAndRefusesInTheResult(t *testing.T) {
	f := &fakeClient{cmd: NewCmd("v", nil)}
	reg := newRegistry()
	w := NewClientBreaker(f, reg)
	ctx := context.Background()
	assert.Equal(t, "v", w.Get(ctx, "k").Val())

	f.cmd = NewCmd("", errDown)
	for range 2 {
		assert.ErrorIs(t, w.Get(ctx, "k").Err(), errDown)
	}
	require.Equal(t, runtime.Open, state(t, reg, "client"))
	calls := f.calls
	cmd := w.Get(ctx, "k")
	assert.ErrorIs(t, cmd.Err(), runtime.ErrOpen, "the refusal, in a new Cmd")
	assert.NotSame(t, f.cmd, cmd)
	assert.Equal(t, calls, f.calls, "not called")
	assert.ErrorIs(t, w.QueryRow(ctx, "SELECT 1").Err(), runtime.ErrOpen, "a *sql.Row carries it too")
	var s string
	assert.ErrorIs(t, w.QueryRow(ctx, "SELECT 1").Scan(&s), runtime.ErrOpen)
}

func TestCarrierRowTrips(t *testing.T) {
	f := &fakeClient{rowErr: errDown}
	reg := newRegistry()
	w := NewClientBreaker(f, reg)
	for range 2 {
		assert.ErrorIs(t, w.QueryRow(context.Background(), "q").Err(), errDown)
	}
	assert.Equal(t, runtime.Open, state(t, reg, "client"))
}

func TestCarrierPanicIsAFailure(t *testing.T) {
	f := &fakeClient{panics: true}
	reg := newRegistry()
	w := NewClientBreaker(f, reg)
	for range 2 {
		assert.PanicsWithValue(t, "boom", func() { w.Get(context.Background(), "k") })
	}
	assert.Equal(t, runtime.Open, state(t, reg, "client"))
}

func TestCarrierOfNilImpl(t *testing.T) {
	w := NewClientBreaker(nil, newRegistry())
	assert.ErrorIs(t, w.Get(context.Background(), "k").Err(), breakerimpl.ErrNilImpl)
	_, err := w.Do(NewRequest(context.Background(), "/"))
	assert.ErrorIs(t, err, breakerimpl.ErrNilImpl)
}

// TestNilRequest: a method whose ctx comes from its request answers a nil
// request with an error naming it, without asking the breaker or calling
// the client (reading the nil request's ctx would panic), on the plain, the
// retried and the stale route alike.
func TestNilRequest(t *testing.T) {
	f := &fakeClient{resp: &Response{Code: 200}}
	reg := newRegistry()
	w := NewClientBreaker(f, reg)
	for range 10 { // past any threshold
		_, err := w.Do(nil)
		require.ErrorIs(t, err, breakerimpl.ErrNilArg)
		assert.EqualError(t, err, "breaker: Client.Do called with a nil *Request (req), which gives the call its ctx")
		_, err = w.Ask(nil)
		assert.ErrorIs(t, err, breakerimpl.ErrNilArg)
	}
	assert.Zero(t, f.calls, "the client is not called")
	for _, name := range []string{"roundtrip", "tried"} {
		b, ok := reg.Lookup(name)
		require.True(t, ok, name)
		assert.Equal(t, runtime.Closed, b.State(), name)
		assert.Zero(t, b.Stats().Failures, name)
	}

	p := NewPagesBreaker(&fakePages{page: "page"}, reg)
	_, err := p.Page(nil)
	assert.ErrorIs(t, err, breakerimpl.ErrNilArg)
}

func TestCtxFromTheRequest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeClient{resp: &Response{Code: 200}}
		w := NewClientBreaker(f, newRegistry())
		type key struct{}
		ctx := context.WithValue(context.Background(), key{}, "caller's")
		resp, err := w.Do(NewRequest(ctx, "/"))
		require.NoError(t, err)
		assert.Equal(t, 200, resp.Code)
		assert.Equal(t, "caller's", f.seen.Value(key{}), "the request's ctx, passed on")
		deadline, ok := f.seen.Deadline()
		require.True(t, ok, "timeout=1s went on with the request")
		assert.Equal(t, time.Now().Add(time.Second), deadline)

		cctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err = w.Do(NewRequest(cctx, "/"))
		require.NoError(t, err)
		assert.ErrorIs(t, f.seen.Err(), context.Canceled, "the timeout's ctx derives from the request's")
	})
}

func TestFailureAnswers(t *testing.T) {
	f := &fakeClient{resp: &Response{Code: 500}}
	reg := newRegistry()
	w := NewClientBreaker(f, reg)
	req := NewRequest(context.Background(), "/")
	for range 4 { // threshold 5, the default
		resp, err := w.Do(req)
		require.NoError(t, err, "a failure answer reaches the caller")
		assert.Equal(t, 500, resp.Code)
	}
	assert.Equal(t, runtime.Closed, state(t, reg, "roundtrip"))
	f.resp = &Response{Code: 503}
	resp, err := w.Do(req)
	require.NoError(t, err)
	assert.Equal(t, 503, resp.Code)
	require.Equal(t, runtime.Open, state(t, reg, "roundtrip"), "RetryAfter opens it at once")
	b, _ := reg.Lookup("roundtrip")
	assert.Contains(t, reg.Events(1)[0].Reason, "retry after 1m")
	_, err = w.Do(req)
	var open *runtime.OpenError
	require.True(t, errors.As(err, &open))
	assert.Equal(t, b.Stats().OpenedAt.Add(time.Minute), open.Until, "the cooldown, not reset")
}

func TestCarrierRetries(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeClient{cmds: []*Cmd{NewCmd("", errDown), NewCmd("v", nil)}}
		reg := newRegistry()
		w := NewClientBreaker(f, reg)
		cmd := w.Fetch(context.Background(), "k")
		require.NoError(t, cmd.Err())
		assert.Equal(t, "v", cmd.Val(), "the second try's answer")
		assert.Equal(t, 2, f.calls)

		f.cmds = []*Cmd{NewCmd("", errDown), NewCmd("", errDown)}
		last := f.cmds[1]
		assert.Same(t, last, w.Fetch(context.Background(), "k"), "both failed: the last answer")
		b, _ := reg.Lookup("tried")
		assert.Equal(t, uint64(3), b.Stats().Failures, "every try counted")
	})
}

func TestFailureRetries(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeClient{resps: []*Response{{Code: 500}, {Code: 200}}}
		w := NewClientBreaker(f, newRegistry())
		resp, err := w.Ask(NewRequest(context.Background(), "/"))
		require.NoError(t, err)
		assert.Equal(t, 200, resp.Code, "the 500 was retried")

		// A 503 asks for a cooldown: not retried, returned as it is.
		f.resps = []*Response{{Code: 503}, {Code: 200}}
		resp, err = w.Ask(NewRequest(context.Background(), "/"))
		require.NoError(t, err)
		assert.Equal(t, 503, resp.Code)
		assert.Len(t, f.resps, 1, "one try")
		_, err = w.Ask(NewRequest(context.Background(), "/"))
		assert.ErrorIs(t, err, runtime.ErrOpen, "the cooldown")
	})
}

// userCtx is a UserCtx.
type userCtx struct{ context.Context }

func (userCtx) User() string { return "u" }

// fakeHandler answers its ctx's error, as an upstream that sees its
// caller go away does; Cached fails with err when it is set.
type fakeHandler struct {
	calls int
	err   error
}

func (f *fakeHandler) Serve(ctx UserCtx, path string) (string, error) {
	f.calls++
	return path, ctx.Err()
}

func (f *fakeHandler) Limited(ctx UserCtx) error {
	f.calls++
	return ctx.Err()
}

func (f *fakeHandler) Cached(ctx UserCtx, path string) (string, error) {
	f.calls++
	if f.err != nil {
		return "", f.err
	}
	return path, ctx.Err()
}

// TestCtxOfItsOwnType: a first parameter that is a context.Context of
// another type is the call's ctx: a cancelled caller's call is not a
// failure (threshold=1 would trip on one), a wait for a token ends at the
// caller's deadline, and a nil one is an error naming it, not a panic.
func TestCtxOfItsOwnType(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeHandler{}
		reg := newRegistry()
		w := NewHandlerBreaker(f, reg)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := w.Serve(userCtx{ctx}, "/")
		require.ErrorIs(t, err, context.Canceled)
		assert.Equal(t, runtime.Closed, state(t, reg, "handler"), "the caller's cancel is not the upstream's failure")
		got, err := w.Serve(userCtx{context.Background()}, "/a")
		require.NoError(t, err)
		assert.Equal(t, "/a", got)

		_, err = w.Serve(nil, "/")
		require.ErrorIs(t, err, breakerimpl.ErrNilArg)
		assert.EqualError(t, err, "breaker: Handler.Serve called with a nil UserCtx (ctx), which gives the call its ctx")
		assert.Equal(t, 2, f.calls, "a nil ctx reaches no upstream")

		require.NoError(t, w.Limited(userCtx{context.Background()}))
		// Burst 1 is spent and the next token is 1s away: the caller's
		// deadline, 10ms away, comes first.
		dctx, dcancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
		defer dcancel()
		start := time.Now()
		err = w.Limited(userCtx{dctx})
		assert.ErrorIs(t, err, runtime.ErrRateLimited)
		assert.Less(t, time.Since(start), 10*time.Millisecond, "no wait past the caller's deadline")
		assert.Equal(t, 3, f.calls)
	})
}

// TestStaleOfACtxOfItsOwnType: the stale cache of a method whose ctx is a
// context.Context of another type is keyed by its other arguments, the
// ctx left out: a call with the ctx of another request finds the answer
// kept for the same path.
func TestStaleOfACtxOfItsOwnType(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeHandler{}
		w := NewHandlerBreaker(f, newRegistry())
		type key struct{}
		got, err := w.Cached(userCtx{context.WithValue(context.Background(), key{}, 1)}, "/a")
		require.NoError(t, err)
		assert.Equal(t, "/a", got)

		f.err = errDown
		ctx, p := runtime.WithProvenance(context.WithValue(context.Background(), key{}, 2))
		got, err = w.Cached(userCtx{ctx}, "/a")
		require.NoError(t, err)
		assert.Equal(t, "/a", got, "the answer kept for /a, from another request's ctx")
		assert.Equal(t, "stale 0s (handlerstale error)", p.String())
		_, err = w.Cached(userCtx{ctx}, "/b")
		assert.ErrorIs(t, err, errDown, "nothing kept for /b")
	})
}
