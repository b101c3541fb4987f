package httpguard_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/breakergen/breakergen/runtime/httpguard"
)

func response(code int, retryAfter string) *http.Response {
	h := http.Header{}
	if retryAfter != "" {
		h.Set("Retry-After", retryAfter)
	}
	return &http.Response{StatusCode: code, Status: http.StatusText(code), Header: h}
}

func TestFailure(t *testing.T) {
	for _, code := range []int{200, 204, 301, 400, 404, 499} {
		assert.NoError(t, httpguard.Failure(response(code, "5")), "%d", code)
	}
	assert.NoError(t, httpguard.Failure(nil))
	for _, code := range []int{500, 502, 503, 504, 429} {
		err := httpguard.Failure(response(code, ""))
		var se *httpguard.StatusError
		require.ErrorAs(t, err, &se, "%d", code)
		assert.Equal(t, code, se.Code)
		_, hasRetryAfter := err.(interface{ RetryAfter() time.Duration })
		assert.False(t, hasRetryAfter, "%d without Retry-After: retryable, no cooldown", code)
	}
}

func TestFailureRetryAfter(t *testing.T) {
	for _, code := range []int{429, 503} {
		err := httpguard.Failure(response(code, "30"))
		var ra *httpguard.RetryAfterError
		require.ErrorAs(t, err, &ra)
		assert.Equal(t, 30*time.Second, ra.RetryAfter())
		var se *httpguard.StatusError
		assert.ErrorAs(t, err, &se, "the status is found through the cooldown")
		assert.Contains(t, err.Error(), "retry after 30s")
	}
	// Only 429 and 503 ask for a wait.
	_, ok := httpguard.Failure(response(500, "30")).(interface{ RetryAfter() time.Duration })
	assert.False(t, ok)
	// Huge values are capped; junk asks for nothing.
	var ra *httpguard.RetryAfterError
	require.ErrorAs(t, httpguard.Failure(response(503, "99999999999")), &ra)
	assert.Equal(t, httpguard.MaxRetryAfter, ra.After)
	assert.False(t, errors.As(httpguard.Failure(response(503, "soon")), &ra))
	assert.False(t, errors.As(httpguard.Failure(response(503, "-5")), &ra))
}

func TestRetryAfterDate(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	assert.Equal(t, 90*time.Second, httpguard.RetryAfter(now.Add(90*time.Second).Format(http.TimeFormat), now))
	assert.Zero(t, httpguard.RetryAfter(now.Add(-time.Minute).Format(http.TimeFormat), now), "a date in the past")
	assert.Equal(t, httpguard.MaxRetryAfter, httpguard.RetryAfter(now.Add(72*time.Hour).Format(http.TimeFormat), now))
	assert.Equal(t, 2*time.Second, httpguard.RetryAfter(" 2 ", now))
	assert.Zero(t, httpguard.RetryAfter("", now))
}

// TestRetryAfterHuge: a number of seconds too large for an int64 is still
// a number of seconds, and asks for the longest wait, as a large one does.
// It used to be taken as malformed: no cooldown, and a 429 that a route
// retried.
func TestRetryAfterHuge(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	for _, v := range []string{"99999999999999999999", "9223372036854775808"} {
		assert.Equal(t, httpguard.MaxRetryAfter, httpguard.RetryAfter(v, now), v)
		_, ok := httpguard.Failure(response(429, v)).(interface{ RetryAfter() time.Duration })
		assert.True(t, ok, "a 429 with Retry-After: %s asks for a cooldown", v)
	}
	assert.Zero(t, httpguard.RetryAfter("-99999999999999999999", now), "a negative number is in the past")
}

type body struct {
	io.Reader
	closed bool
}

func (b *body) Close() error { b.closed = true; return nil }

func TestCancelOnClose(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	b := &body{Reader: strings.NewReader("hello")}
	resp := httpguard.CancelOnClose(&http.Response{Body: b}, cancel)
	require.NoError(t, ctx.Err(), "the body is not read yet")
	got, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	assert.Equal(t, "hello", string(got))
	assert.ErrorIs(t, ctx.Err(), context.Canceled, "read to its end")

	ctx, cancel = context.WithCancel(context.Background())
	b = &body{Reader: strings.NewReader("hello")}
	resp = httpguard.CancelOnClose(&http.Response{Body: b}, cancel)
	require.NoError(t, resp.Body.Close())
	assert.True(t, b.closed)
	assert.ErrorIs(t, ctx.Err(), context.Canceled, "closed")

	ctx, cancel = context.WithCancel(context.Background())
	assert.Nil(t, httpguard.CancelOnClose(nil, cancel))
	assert.ErrorIs(t, ctx.Err(), context.Canceled, "nothing to read: cancelled at once")
}

func TestDiscard(t *testing.T) {
	b := &body{Reader: strings.NewReader(strings.Repeat("x", 100))}
	httpguard.Discard(&http.Response{Body: b})
	assert.True(t, b.closed)
	httpguard.Discard(nil)
	httpguard.Discard(&http.Response{})

	// A body declared longer than the drain is closed unread.
	b = &body{Reader: strings.NewReader(strings.Repeat("x", 100))}
	httpguard.Discard(&http.Response{Body: b, ContentLength: 1 << 20})
	assert.True(t, b.closed)
	assert.Equal(t, 100, b.Reader.(*strings.Reader).Len(), "nothing read")
}

// stalledBody sends a few bytes, then blocks its reader until it is
// closed, as a half-sent error page whose sender died does on a
// connection.
type stalledBody struct {
	sent   bool
	closed chan struct{}
	once   sync.Once
}

func (b *stalledBody) Read(p []byte) (int, error) {
	if !b.sent {
		b.sent = true
		return copy(p, "<html>502"), nil
	}
	<-b.closed
	return 0, net.ErrClosed
}

func (b *stalledBody) Close() error {
	b.once.Do(func() { close(b.closed) })
	return nil
}

func TestDiscardStalledBody(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		b := &stalledBody{closed: make(chan struct{})}
		httpguard.Discard(&http.Response{Body: b, ContentLength: -1})
		synctest.Wait() // the close runs beside the read
		select {
		case <-b.closed:
		default:
			t.Fatal("the stalled body was not closed")
		}
		assert.Equal(t, 100*time.Millisecond, time.Since(start), "given up after the drain's wait")
	})
}

// lockedBody is a body whose Close waits for a Read in progress, as the
// transport's gzip reader's does while it waits for the gzip header.
type lockedBody struct {
	mu      sync.Mutex
	release chan struct{}
	closed  bool
}

func (b *lockedBody) Read([]byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	<-b.release
	return 0, io.EOF
}

func (b *lockedBody) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closed = true
	return nil
}

// TestDiscardCloseWaitsOnTheRead: a body whose Close waits for the stalled
// read still lets Discard return after the drain's wait; the close ends
// when the read does. A body the transport decompressed is closed
// unread.
func TestDiscardCloseWaitsOnTheRead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		b := &lockedBody{release: make(chan struct{})}
		httpguard.Discard(&http.Response{Body: b, ContentLength: -1})
		assert.Equal(t, 100*time.Millisecond, time.Since(start))
		close(b.release) // the page's sender gives up
		synctest.Wait()
		assert.True(t, b.closed)

		b = &lockedBody{release: make(chan struct{})}
		httpguard.Discard(&http.Response{Body: b, ContentLength: -1, Uncompressed: true})
		assert.True(t, b.closed, "closed at once, unread")
		assert.Equal(t, 100*time.Millisecond, time.Since(start), "no wait")
	})
}

// TestDiscardStalledServer: through net/http's transport, a 502 whose body
// stalls half-sent is given up, the body closed, and Discard returns.
func TestDiscardStalledServer(t *testing.T) {
	stop := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusBadGateway)
		_, _ = io.WriteString(w, "<html>502")
		w.(http.Flusher).Flush()
		select { // the page's sender died: nothing more comes
		case <-stop:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(stop)
	resp, err := srv.Client().Get(srv.URL)
	require.NoError(t, err)
	require.Equal(t, http.StatusBadGateway, resp.StatusCode)
	httpguard.Discard(resp) // with no bound, this never returns
	_, err = resp.Body.Read(make([]byte, 1))
	assert.Error(t, err, "the body is closed")
}

// tagged is a caller's ctx carried by value with a slice in it: a legal
// context.Context that == cannot compare (it panics).
type tagged struct {
	context.Context
	tags []string
}

// wrapped is comparable, but == panics on it when its Context is a tagged.
type wrapped struct{ context.Context }

// numbered is comparable by value: two boxes of one numbered are ==.
type numbered struct {
	context.Context
	n int
}

// TestOnContext: whether a request was made on a ctx is ==, and never
// panics: a ctx of a type == cannot compare is the request's only when
// it is the very interface value (a Do(ctx, req) with a timeout asks on
// every try, and a panic there was counted as the breaker's failure).
func TestOnContext(t *testing.T) {
	bg := context.Background()
	parent, cancel := context.WithCancel(bg)
	defer cancel()
	child, cancelChild := context.WithCancel(parent)
	defer cancelChild()
	on := func(ctx context.Context) *http.Request {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://example.com", nil)
		require.NoError(t, err)
		return req
	}
	tag := tagged{Context: bg, tags: []string{"a"}}
	var tagCtx context.Context = tag // one interface value, passed on
	wrap := wrapped{Context: tag}
	var wrapCtx context.Context = wrap
	for _, tc := range []struct {
		name string
		req  *http.Request
		ctx  context.Context
		want bool
	}{
		{"nil request", nil, bg, false},
		{"made on ctx", on(parent), parent, true},
		{"made on its parent", on(parent), child, false},
		{"made on another type", on(parent), tagCtx, false},
		{"background", on(bg), context.Background(), true},
		{"comparable value, two boxes", on(numbered{bg, 1}), numbered{bg, 1}, true},
		{"comparable value, another", on(numbered{bg, 1}), numbered{bg, 2}, false},
		{"uncomparable, one interface value", on(tagCtx), tagCtx, true},
		{"uncomparable, two boxes", on(tag), tag, false},
		{"uncomparable inside, one interface value", on(wrapCtx), wrapCtx, true},
		{"uncomparable inside, two boxes", on(wrap), wrap, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, httpguard.OnContext(tc.req, tc.ctx))
		})
	}
}

func BenchmarkOnContext(b *testing.B) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	other, cancelOther := context.WithCancel(ctx)
	defer cancelOther()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://example.com", nil)
	require.NoError(b, err)
	b.Run("same", func(b *testing.B) {
		for b.Loop() {
			if !httpguard.OnContext(req, ctx) {
				b.Fatal("not on its ctx")
			}
		}
	})
	b.Run("other", func(b *testing.B) {
		for b.Loop() {
			if httpguard.OnContext(req, other) {
				b.Fatal("on another ctx")
			}
		}
	})
}
