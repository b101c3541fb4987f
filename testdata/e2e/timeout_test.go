package e2e

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// clientDoer is a TimedDoer that sends req as it is, as an adapter calling
// client.Do(req) does: ctx goes nowhere.
type clientDoer struct{ c *http.Client }

func (d clientDoer) Do(_ context.Context, req *http.Request) (*http.Response, error) {
	return d.c.Do(req)
}

func (d clientDoer) Get(_ context.Context, req *http.Request) (*http.Response, error) {
	return d.c.Do(req)
}

// TestTimedDoCutsAClientThatSendsReqAsItIs: against a server that hangs,
// a Do(ctx, req) with timeout=100ms whose client sends req as it is ends
// at the timeout, each try counted a failure; a retry sends the POST's
// body whole again (through GetBody), on a timeout of its own.
func TestTimedDoCutsAClientThatSendsReqAsItIs(t *testing.T) {
	var mu sync.Mutex // guards bodies
	var bodies []string
	stop := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies = append(bodies, string(b))
		mu.Unlock()
		select { // hangs until the request goes
		case <-r.Context().Done():
		case <-stop:
		case <-time.After(5 * time.Second):
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(stop) })
	reg := newRegistry()
	w := NewTimedDoerBreaker(clientDoer{srv.Client()}, reg)

	ctx := context.Background()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL, strings.NewReader("order=1"))
	require.NoError(t, err)
	start := time.Now()
	resp, err := w.Do(ctx, req)
	assert.Nil(t, resp)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Less(t, time.Since(start), 2*time.Second, "each try ends at its timeout")
	assert.Equal(t, uint64(2), stats(t, reg, "timeddoer").Failures, "both tries failed")
	mu.Lock()
	assert.Equal(t, []string{"order=1", "order=1"}, bodies, "the retry sent the body whole")
	mu.Unlock()

	req, err = http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
	require.NoError(t, err)
	start = time.Now()
	_, err = w.Get(ctx, req)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Less(t, time.Since(start), 2*time.Second)
	assert.Equal(t, uint64(3), stats(t, reg, "timeddoer").Failures)
}

// ctxDoer is a TimedDoer that answers at once, keeping the ctx of the
// request it was given.
type ctxDoer struct{ got context.Context }

func (d *ctxDoer) Do(_ context.Context, req *http.Request) (*http.Response, error) {
	d.got = req.Context()
	return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody}, nil
}

func (d *ctxDoer) Get(ctx context.Context, req *http.Request) (*http.Response, error) {
	return d.Do(ctx, req)
}

type reqKey struct{}

// TestTimedDoKeepsTheRequestsOwnCtx: a request made on a ctx of its own
// keeps it, with its values and no deadline of the wrapper's; one made on
// the call's ctx carries the timeout's deadline.
func TestTimedDoKeepsTheRequestsOwnCtx(t *testing.T) {
	d := &ctxDoer{}
	w := NewTimedDoerBreaker(d, newRegistry())
	own := context.WithValue(context.Background(), reqKey{}, "own")
	req, err := http.NewRequestWithContext(own, http.MethodGet, "http://quotes/", nil)
	require.NoError(t, err)
	_, err = w.Get(context.Background(), req)
	require.NoError(t, err)
	assert.Equal(t, own, d.got, "the request's own ctx")

	ctx := context.WithValue(context.Background(), reqKey{}, "call")
	req, err = http.NewRequestWithContext(ctx, http.MethodGet, "http://quotes/", nil)
	require.NoError(t, err)
	_, err = w.Get(ctx, req)
	require.NoError(t, err)
	_, ok := d.got.Deadline()
	assert.True(t, ok, "the timeout's ctx")
	assert.Equal(t, "call", d.got.Value(reqKey{}), "derived from the call's")
}
