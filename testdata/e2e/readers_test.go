package e2e

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/breakergen/breakergen/runtime"
)

// putStore records the body each Put read in full, and fails the Puts
// that errs lists. With delay, a Put waits that long, or for its ctx,
// before it reads the body.
type putStore struct {
	delay time.Duration
	errs  []error

	mu     sync.Mutex // guards bodies, reading
	bodies []string
	// reading counts the Puts reading the body at once; most is the
	// most seen.
	reading, most int
}

func (s *putStore) Put(ctx context.Context, _ string, body io.Reader) error {
	if s.delay > 0 {
		select {
		case <-time.After(s.delay):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	s.mu.Lock()
	i := len(s.bodies)
	s.reading++
	s.most = max(s.most, s.reading)
	s.mu.Unlock()
	b, err := io.ReadAll(body)
	s.mu.Lock()
	s.reading--
	s.bodies = append(s.bodies, string(b))
	s.mu.Unlock()
	if err != nil {
		return err
	}
	if i < len(s.errs) {
		return s.errs[i]
	}
	return nil
}

func (s *putStore) got() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.bodies...)
}

// unseekable is a reader that is no io.Seeker, as a pipe or a
// network stream is.
func unseekable(s string) io.Reader { return io.MultiReader(strings.NewReader(s)) }

// TestReaderRetriedWhole: a retry sends a seekable body whole again,
// from where the call found it; one that is no io.Seeker is sent once,
// and the call returns the first try's error.
func TestReaderRetriedWhole(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reset := errors.New("reset by peer")
		s := &putStore{errs: []error{reset, reset}}
		w := NewStoreBreaker(s, newRegistry())
		body := strings.NewReader("--object")
		_, _ = body.Seek(2, io.SeekStart) // the caller's position, not the start
		require.NoError(t, w.Put(context.Background(), "k", body))
		assert.Equal(t, []string{"object", "object", "object"}, s.got(), "every try reads the whole body")

		s = &putStore{errs: []error{reset, nil}}
		w = NewStoreBreaker(s, newRegistry())
		err := w.Put(context.Background(), "k", unseekable("object"))
		assert.ErrorIs(t, err, reset, "the first try's error: no try sent an empty body")
		assert.Equal(t, []string{"object"}, s.got(), "one try")
	})
}

// postFunc adapts a func to Poster.
type postFunc func(url, contentType string, body io.Reader) (*http.Response, error)

func (f postFunc) Post(url, contentType string, body io.Reader) (*http.Response, error) {
	return f(url, contentType, body)
}

// TestPosterRetriedWhole: a judged method's retry (a 503, a failure by
// httpguard.Failure) sends the body whole again.
func TestPosterRetriedWhole(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var bodies []string
		p := NewPosterBreaker(postFunc(func(_, _ string, body io.Reader) (*http.Response, error) {
			b, _ := io.ReadAll(body)
			bodies = append(bodies, string(b))
			code := http.StatusServiceUnavailable
			if len(bodies) > 1 {
				code = http.StatusOK
			}
			return &http.Response{StatusCode: code, Body: http.NoBody}, nil
		}), newRegistry())
		resp, err := p.Post("http://x", "text/plain", strings.NewReader("form"))
		require.NoError(t, err)
		assert.Equal(t, http.StatusOK, resp.StatusCode)
		assert.Equal(t, []string{"form", "form"}, bodies)

		bodies = nil
		resp, err = p.Post("http://x", "text/plain", unseekable("form"))
		require.NoError(t, err, "a 503 is an answer")
		assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode, "the first try's answer stands")
		assert.Equal(t, []string{"form"}, bodies)
	})
}

// closingBody is a body that counts its Close calls, as an *os.File
// being uploaded would be closed.
type closingBody struct {
	*strings.Reader
	closed int
}

func (c *closingBody) Close() error { c.closed++; return nil }

// TestPosterRefusedClosesTheBody: a Post refused before any try sent its
// body closes it when it is an io.Closer, as http.Client's Post does
// ("if the provided body is an io.Closer, it is closed after the
// request"); a refused upload of a file was left open. A body a try sent
// is the client's to close, and is not closed again.
func TestPosterRefusedClosesTheBody(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := newRegistry()
		sent := 0
		p := NewPosterBreaker(postFunc(func(_, _ string, body io.Reader) (*http.Response, error) {
			sent++
			return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody}, nil
		}), reg)
		body := &closingBody{Reader: strings.NewReader("upload")}
		_, err := p.Post("http://x", "text/plain", body)
		require.NoError(t, err)
		assert.Equal(t, 0, body.closed, "a body a try sent is the client's to close")

		b, ok := reg.Lookup("poster")
		require.True(t, ok)
		b.Isolate("rehearsal")
		body = &closingBody{Reader: strings.NewReader("upload")}
		_, err = p.Post("http://x", "text/plain", body)
		require.Error(t, err, "an isolated breaker refuses")
		assert.Equal(t, 1, sent, "no try was sent")
		assert.Equal(t, 1, body.closed, "the refused call's body is closed once")
		_, err = p.Post("http://x", "text/plain", strings.NewReader("no closer"))
		require.Error(t, err, "a body that is no io.Closer is left as it is")

		// The plainest body (no retries, no failure func) too.
		plain := NewPlainPosterBreaker(postFunc(func(string, string, io.Reader) (*http.Response, error) {
			sent++
			return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody}, nil
		}), reg)
		pb, ok := reg.Lookup("plainposter")
		require.True(t, ok)
		pb.Isolate("rehearsal")
		body = &closingBody{Reader: strings.NewReader("upload")}
		_, err = plain.Post("http://x", "text/plain", body)
		require.Error(t, err, "an isolated breaker refuses")
		assert.Equal(t, 1, sent, "no try was sent")
		assert.Equal(t, 1, body.closed, "the plain wrapper's refused body is closed once")
	})
}

// TestReaderChain: a chain's fallback reads the body whole again; one
// that cannot be read again passes the fallback over as unsent.
func TestReaderChain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		down := errors.New("down")
		primary, mirror := &putStore{errs: []error{down, down}}, &putStore{}
		c := NewReplicasChain(primary, newRegistry(), runtime.Fallback[Replicas]{Name: "mirror", Impl: mirror})
		ctx, p := runtime.WithProvenance(context.Background())
		require.NoError(t, c.Put(ctx, "k", strings.NewReader("object")))
		assert.Equal(t, []string{"object"}, primary.got())
		assert.Equal(t, []string{"object"}, mirror.got(), "the fallback read the whole body")
		assert.Equal(t, "fallback:mirror", p.Source)

		ctx, p = runtime.WithProvenance(context.Background())
		err := c.Put(ctx, "k", unseekable("object"))
		assert.ErrorIs(t, err, down)
		assert.Equal(t, []string{"object"}, mirror.got(), "the mirror was not asked")
		require.Len(t, p.Skipped, 2)
		assert.Equal(t, "fallback:mirror", p.Skipped[1].Source)
		assert.Equal(t, "unsent", p.Skipped[1].Why)
		assert.ErrorIs(t, p.Skipped[1].Err, runtime.ErrUnrewindable)
	})
}

// TestReaderNotHedged: a hedged chain's method taking a reader asks its
// sources one at a time, whatever the hedge delay: no two read the body
// at once (the test runs under -race), and each reads it whole.
func TestReaderNotHedged(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		slow := &putStore{delay: time.Second, errs: []error{errors.New("down")}}
		mirror := &putStore{}
		c := NewRacedStoreChain(slow, newRegistry(), runtime.Fallback[RacedStore]{Name: "mirror", Impl: mirror})
		ctx, p := runtime.WithProvenance(context.Background())
		start := time.Now()
		require.NoError(t, c.Put(ctx, "k", strings.NewReader("object")))
		assert.Equal(t, time.Second, time.Since(start), "the mirror was asked once the primary failed, not at the hedge delay")
		assert.Equal(t, []string{"object"}, slow.got())
		assert.Equal(t, []string{"object"}, mirror.got())
		assert.False(t, p.Hedged)
		assert.Equal(t, "fallback:mirror", p.Source)
	})
}

// signerImpl fails its first fails calls of each method.
type signerImpl struct {
	fails       int
	gets, signs int
	down        error
}

func (f *signerImpl) Get(_ context.Context, key string, dst *bytes.Buffer) error {
	if f.gets++; f.gets <= f.fails {
		return f.down
	}
	dst.WriteString("value of " + key)
	return nil
}

func (f *signerImpl) Sign(_ context.Context, rand io.Reader, digest []byte) ([]byte, error) {
	if f.signs++; f.signs <= f.fails {
		return nil, f.down
	}
	b := make([]byte, 4)
	if _, err := io.ReadFull(rand, b); err != nil {
		return nil, err
	}
	return append(b, digest...), nil
}

// TestNoBodyRetried: an argument with Read that is no body (a buffer
// the method fills, an entropy source named rand) neither stops a retry
// nor passes a fallback over, as before readers were sought back.
func TestNoBodyRetried(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		down := errors.New("down")
		primary := &signerImpl{fails: 2, down: down}
		w := NewSignerBreaker(primary, newRegistry())
		var dst bytes.Buffer
		require.NoError(t, w.Get(context.Background(), "k", &dst), "the third try answers")
		assert.Equal(t, "value of k", dst.String())
		assert.Equal(t, 3, primary.gets)
		sig, err := w.Sign(context.Background(), rand.Reader, []byte("d"))
		require.NoError(t, err, "the third try answers")
		assert.Len(t, sig, 5)
		assert.Equal(t, 3, primary.signs)

		primary, mirror := &signerImpl{fails: 3, down: down}, &signerImpl{}
		c := NewSignerChain(primary, newRegistry(), runtime.Fallback[Signer]{Name: "mirror", Impl: mirror})
		ctx, p := runtime.WithProvenance(context.Background())
		dst.Reset()
		require.NoError(t, c.Get(ctx, "k", &dst))
		assert.Equal(t, "value of k", dst.String())
		assert.Equal(t, "fallback:mirror", p.Source, "the mirror was asked")
		ctx, p = runtime.WithProvenance(context.Background())
		_, err = c.Sign(ctx, rand.Reader, []byte("d"))
		require.NoError(t, err)
		assert.Equal(t, "fallback:mirror", p.Source, "the mirror was asked")
	})
}

// TestReadToEOFIsNoFailure: downloads read to their end, each ending in
// io.EOF, leave their breaker CLOSED with no failure, and a read that
// fails otherwise still counts. Each io.EOF was a failure: five downloads
// counted five, and three empty ones in a row (threshold=3) tripped it.
func TestReadToEOFIsNoFailure(t *testing.T) {
	reg := runtime.NewRegistry(runtime.WithoutEnv())
	for _, body := range []string{"quote", "quote", "quote", "quote", "quote", "", "", ""} {
		w := NewDownloadBreaker(io.NopCloser(strings.NewReader(body)), reg)
		got, err := io.ReadAll(w)
		require.NoError(t, err)
		require.Equal(t, body, string(got))
	}
	b, _ := reg.Lookup("download")
	st := b.Stats()
	assert.Equal(t, runtime.Closed, st.State)
	assert.Zero(t, st.Failures)

	broken := NewDownloadBreaker(io.NopCloser(iotestErrReader{}), reg)
	_, err := broken.Read(make([]byte, 8))
	require.Error(t, err)
	assert.Equal(t, uint64(1), b.Stats().Failures, "another error is a failure still")
}

// iotestErrReader fails every read.
type iotestErrReader struct{}

func (iotestErrReader) Read([]byte) (int, error) { return 0, errors.New("connection reset") }
