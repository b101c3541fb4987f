package clients_test

import (
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/breakergen/breakergen/examples/clients"
	"github.com/breakergen/breakergen/runtime"
	"github.com/breakergen/breakergen/runtime/breakerimpl"
	"github.com/breakergen/breakergen/runtime/httpguard"
)

// countingBodies is the transport under the guarded one: it counts the
// bodies it hands out and those closed.
type countingBodies struct {
	next           http.RoundTripper
	opened, closed atomic.Int64
}

func (c *countingBodies) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := c.next.RoundTrip(req)
	if resp != nil && resp.Body != nil {
		c.opened.Add(1)
		resp.Body = &countedBody{ReadCloser: resp.Body, closed: &c.closed}
	}
	return resp, err
}

type countedBody struct {
	io.ReadCloser
	closed *atomic.Int64
	done   bool
}

func (b *countedBody) Close() error {
	if !b.done {
		b.done = true
		b.closed.Add(1)
	}
	return b.ReadCloser.Close()
}

// server answers with the status the test sets, counting requests and
// the connections they came on.
type server struct {
	*httptest.Server
	status     atomic.Int64
	retryAfter atomic.Value // string
	requests   atomic.Int64
	conns      atomic.Int64
}

func newServer(t *testing.T) *server {
	s := &server{}
	s.status.Store(http.StatusOK)
	s.retryAfter.Store("")
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.requests.Add(1)
		if ra := s.retryAfter.Load().(string); ra != "" {
			w.Header().Set("Retry-After", ra)
		}
		w.WriteHeader(int(s.status.Load()))
		_, _ = io.WriteString(w, "body of the answer")
	}))
	s.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			s.conns.Add(1)
		}
	}
	s.Start()
	t.Cleanup(s.Close)
	return s
}

// get makes a request as a careful caller does: reads the body, closes it.
func get(t *testing.T, c *http.Client, url string) (int, error) {
	t.Helper()
	resp, err := c.Get(url)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err, "the body is readable after RoundTrip returned (the timeout's ctx lives until Close)")
	assert.Equal(t, "body of the answer", string(body))
	return resp.StatusCode, nil
}

// TestHTTPRetryAfterCooldown: a 503 with Retry-After reaches the caller as
// a 503 (body and all) and opens the breaker at once for the wait it asks
// (SPEC §5's cooldown), whatever the threshold; the calls in that window
// are refused without a request; then one probe goes out.
func TestHTTPRetryAfterCooldown(t *testing.T) {
	srv := newServer(t)
	clock := newClock()
	reg := newRegistry(clock)
	base := &countingBodies{next: srv.Client().Transport}
	client := &http.Client{Transport: clients.NewTransportBreaker(base, reg)}
	b, _ := reg.Lookup("api")

	code, err := get(t, client, srv.URL)
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, code)

	srv.status.Store(http.StatusServiceUnavailable)
	srv.retryAfter.Store("30")
	code, err = get(t, client, srv.URL)
	require.NoError(t, err, "a failure answer is still an answer to the caller")
	assert.Equal(t, http.StatusServiceUnavailable, code)
	require.Equal(t, runtime.Open, b.State(), "Retry-After opens it at once")
	ev := reg.Events(1)
	require.Len(t, ev, 1)
	assert.Contains(t, ev[0].Reason, "retry after 30s")

	sent := srv.requests.Load()
	for range 3 {
		_, err := get(t, client, srv.URL)
		assert.ErrorIs(t, err, runtime.ErrOpen)
	}
	clock.Add(29 * time.Second)
	_, err = get(t, client, srv.URL)
	assert.ErrorIs(t, err, runtime.ErrOpen, "the cooldown is 30s, not reset=10s")
	assert.Equal(t, sent, srv.requests.Load(), "refusals send nothing")

	srv.status.Store(http.StatusOK)
	srv.retryAfter.Store("")
	clock.Add(time.Second)
	code, err = get(t, client, srv.URL)
	require.NoError(t, err, "the probe")
	assert.Equal(t, http.StatusOK, code)
	assert.Equal(t, runtime.Closed, b.State())

	assert.Equal(t, base.opened.Load(), base.closed.Load(), "every body was closed once, by its caller")
	assert.Equal(t, int64(1), srv.conns.Load(), "one connection served every request: no body held one")
}

// TestHTTP5xxTrips: 5xx answers without Retry-After count one by one up
// to threshold=3.
func TestHTTP5xxTrips(t *testing.T) {
	srv := newServer(t)
	reg := newRegistry(newClock())
	base := &countingBodies{next: srv.Client().Transport}
	client := &http.Client{Transport: clients.NewTransportBreaker(base, reg)}
	b, _ := reg.Lookup("api")
	srv.status.Store(http.StatusBadGateway)
	for i := range 3 {
		assert.Equal(t, runtime.Closed, b.State(), "after %d", i)
		code, err := get(t, client, srv.URL)
		require.NoError(t, err)
		assert.Equal(t, http.StatusBadGateway, code)
	}
	assert.Equal(t, runtime.Open, b.State())
	_, err := get(t, client, srv.URL)
	assert.ErrorIs(t, err, runtime.ErrOpen)
	var se *httpguard.StatusError
	assert.False(t, errors.As(err, &se), "a refusal is not the status")
	srv.status.Store(http.StatusNotFound)
	assert.Equal(t, base.opened.Load(), base.closed.Load())
	assert.Equal(t, int64(1), srv.conns.Load())
}

// TestHTTPBodyOutlivesTheTimeout: the route's timeout ctx goes on with the
// request (req.WithContext) and stays alive while the caller reads a body
// the server sends after the headers.
func TestHTTPBodyOutlivesTheTimeout(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		<-release
		_, _ = io.WriteString(w, "late body")
	}))
	defer srv.Close()
	var deadline atomic.Bool
	base := roundTripFunc(func(req *http.Request) (*http.Response, error) {
		_, ok := req.Context().Deadline()
		deadline.Store(ok)
		return srv.Client().Transport.RoundTrip(req)
	})
	client := &http.Client{Transport: clients.NewTransportBreaker(base, newRegistry(newClock()))}
	resp, err := client.Get(srv.URL)
	require.NoError(t, err)
	assert.True(t, deadline.Load(), "the request went on with the timeout's ctx")
	close(release)
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err, "reading after RoundTrip returned")
	assert.Equal(t, "late body", string(body))
	require.NoError(t, resp.Body.Close())
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// TestHTTPRetryDiscardsTheReplacedAnswer: a 502 is retried; its body,
// which no caller will see, is drained and closed, and the caller gets the
// second answer. Every body is closed once and one connection serves all.
func TestHTTPRetryDiscardsTheReplacedAnswer(t *testing.T) {
	srv := newServer(t)
	var n atomic.Int64
	base := &countingBodies{next: roundTripFunc(func(req *http.Request) (*http.Response, error) {
		if n.Add(1) == 1 {
			srv.status.Store(http.StatusBadGateway)
		} else {
			srv.status.Store(http.StatusOK)
		}
		return srv.Client().Transport.RoundTrip(req)
	})}
	reg := realRegistry() // the backoff waits 10ms on the real clock
	client := &http.Client{Transport: clients.NewRetryingTransportBreaker(base, reg)}
	code, err := get(t, client, srv.URL)
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, code, "the retry's answer")
	assert.Equal(t, int64(2), srv.requests.Load())
	assert.Equal(t, int64(2), base.opened.Load())
	assert.Equal(t, int64(2), base.closed.Load(), "the 502's body was closed for the caller who never saw it")
	assert.Equal(t, int64(1), srv.conns.Load(), "drained: its connection served the retry")
	b, _ := reg.Lookup("api")
	assert.Equal(t, uint64(1), b.Stats().Failures, "the 502 counted")

	// Both tries fail: the caller gets the last answer, body unread.
	n.Store(-100)
	srv.status.Store(http.StatusBadGateway)
	base2 := &countingBodies{next: srv.Client().Transport}
	client = &http.Client{Transport: clients.NewRetryingTransportBreaker(base2, realRegistry())}
	code, err = get(t, client, srv.URL)
	require.NoError(t, err)
	assert.Equal(t, http.StatusBadGateway, code)
	assert.Equal(t, base2.opened.Load(), base2.closed.Load())
}

func realRegistry() *runtime.Registry {
	return runtime.NewRegistry(runtime.WithoutEnv(), runtime.WithLogger(slog.New(slog.DiscardHandler)))
}

// TestHTTPRetrySendsTheBodyAgain: a POST whose first try answers 502 is
// retried with its whole body, read again through GetBody; a body that
// cannot be read again is not retried, and the 502 is the answer.
func TestHTTPRetrySendsTheBodyAgain(t *testing.T) {
	var n atomic.Int64
	var got []string
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, string(body))
		mu.Unlock()
		if n.Add(1)%2 == 1 {
			w.WriteHeader(http.StatusBadGateway)
		}
	}))
	t.Cleanup(srv.Close)
	client := &http.Client{Transport: clients.NewRetryingTransportBreaker(srv.Client().Transport, realRegistry())}

	req, err := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader("order=1"))
	require.NoError(t, err)
	resp, err := client.Do(req)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	assert.Equal(t, http.StatusOK, resp.StatusCode, "the retry's answer")
	assert.Equal(t, []string{"order=1", "order=1"}, got, "the body, whole, both times")

	got = nil
	req, err = http.NewRequest(http.MethodPost, srv.URL, strings.NewReader("order=2"))
	require.NoError(t, err)
	req.GetBody = nil // a body that cannot be read twice
	resp, err = client.Do(req)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	assert.Equal(t, http.StatusBadGateway, resp.StatusCode, "not retried: the last answer stands")
	assert.Equal(t, []string{"order=2"}, got)
}

// TestHTTPNilResponseIsAFailure: a transport answering (nil, nil),
// neither a response nor an error, fails the try: the caller gets an
// error matching breakerimpl.ErrNilResult (http.Client would refuse the
// nil response itself), the breaker counts it and trips at its threshold.
// A retry asks again, and a chain moves on to the next source, here a
// real server.
func TestHTTPNilResponseIsAFailure(t *testing.T) {
	nothing := roundTripFunc(func(*http.Request) (*http.Response, error) { return nil, nil })
	reg := realRegistry()
	client := &http.Client{Transport: clients.NewTransportBreaker(nothing, reg)}
	for range 3 {
		_, err := client.Get("http://quotes.example/600519")
		require.ErrorIs(t, err, breakerimpl.ErrNilResult)
		assert.ErrorContains(t, err, "Transport.RoundTrip returned a nil *http.Response with a nil error")
	}
	b, _ := reg.Lookup("api")
	assert.Equal(t, uint64(3), b.Stats().Failures)
	_, err := client.Get("http://quotes.example/600519")
	assert.ErrorIs(t, err, runtime.ErrOpen, "tripped at threshold=3")

	srv := newServer(t)
	var n atomic.Int64
	once := roundTripFunc(func(req *http.Request) (*http.Response, error) {
		if n.Add(1) == 1 {
			return nil, nil
		}
		return srv.Client().Transport.RoundTrip(req)
	})
	reg = realRegistry()
	client = &http.Client{Transport: clients.NewRetryingTransportBreaker(once, reg)}
	code, err := get(t, client, srv.URL)
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, code, "the retry's answer")
	b, _ = reg.Lookup("api")
	assert.Equal(t, uint64(1), b.Stats().Failures, "the nil answer counted")

	client = &http.Client{Transport: clients.NewMirroredTransportChain(nothing, realRegistry(),
		runtime.Fallback[clients.MirroredTransport]{Name: "mirror", Impl: srv.Client().Transport})}
	code, err = get(t, client, srv.URL)
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, code, "the mirror's answer")
}
