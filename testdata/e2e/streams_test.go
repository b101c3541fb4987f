package e2e

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/breakergen/breakergen/runtime"
)

// blob is a stream that notes its Close.
type blob struct {
	*strings.Reader
	closed bool
}

func (b *blob) Close() error { b.closed = true; return nil }

// blobStore answers Open with the blobs and errors given, in turn, after
// delay.
type blobStore struct {
	delay  time.Duration
	blobs  []*blob
	errs   []error
	opened int
}

func (s *blobStore) Open(ctx context.Context, _ string) (io.ReadCloser, error) {
	if s.delay > 0 {
		time.Sleep(s.delay) // an open that ignores its ctx, as os.Open does
	}
	i := s.opened
	s.opened++
	return s.blobs[i], s.errs[i]
}

func newBlob(s string) *blob { return &blob{Reader: strings.NewReader(s)} }

// TestStreamsNoCallerSeesAreClosed: a retry closes the stream of the try
// it replaces (returned beside an error), a chain that of a source it
// passes over (an empty object, invalid), and a race its loser's.
func TestStreamsNoCallerSeesAreClosed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		replaced, passed, kept := newBlob("partial"), newBlob(""), newBlob("object")
		primary := &blobStore{blobs: []*blob{replaced, passed}, errs: []error{errors.New("reset by peer"), nil}}
		c := NewBlobsChain(primary, newRegistry(), runtime.Fallback[Blobs]{Name: "mirror", Impl: &blobStore{blobs: []*blob{kept}, errs: []error{nil}}})
		r, err := c.Open(context.Background(), "k")
		require.NoError(t, err)
		assert.Same(t, kept, r, "the mirror's answer")
		assert.True(t, replaced.closed, "the try a retry replaced")
		assert.True(t, passed.closed, "the invalid answer the chain passed over")
		assert.False(t, kept.closed, "the caller's")

		loser, winner := newBlob("slow"), newBlob("fast")
		rc := NewRacedBlobsChain(&blobStore{delay: time.Second, blobs: []*blob{loser}, errs: []error{nil}}, newRegistry(),
			runtime.Fallback[RacedBlobs]{Name: "mirror", Impl: &blobStore{blobs: []*blob{winner}, errs: []error{nil}}})
		r, err = rc.Open(context.Background(), "k")
		require.NoError(t, err)
		assert.Same(t, winner, r)
		synctest.Wait()
		assert.True(t, loser.closed, "the race's loser")
		assert.False(t, winner.closed)
	})
}

// fetchFunc adapts a func to Fetcher.
type fetchFunc func(ctx context.Context, url string) (*http.Response, error)

func (f fetchFunc) Fetch(ctx context.Context, url string) (*http.Response, error) { return f(ctx, url) }

// TestRetryClosesAResponseBesideAnError: a try that answers a response
// beside its error, then a try that answers: the first response is
// closed, the second is the caller's.
func TestRetryClosesAResponseBesideAnError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		first, second := newBlob("502"), newBlob("quote")
		n := 0
		w := NewFetcherBreaker(fetchFunc(func(context.Context, string) (*http.Response, error) {
			n++
			if n == 1 {
				return &http.Response{StatusCode: http.StatusBadGateway, Body: first, ContentLength: 3}, errors.New("status 502")
			}
			return &http.Response{StatusCode: http.StatusOK, Body: second}, nil
		}), newRegistry())
		resp, err := w.Fetch(context.Background(), "http://quotes/")
		require.NoError(t, err)
		assert.Same(t, second, resp.Body)
		assert.True(t, first.closed, "the response the retry replaced")
		assert.False(t, second.closed)
	})
}

// pairFunc adapts a func to Pair.
type pairFunc func(ctx context.Context, a, b *http.Request) error

func (f pairFunc) Send(ctx context.Context, a, b *http.Request) error { return f(ctx, a, b) }

// TestRetryRewindsEveryRequest: a retry of a method taking two requests
// sends both again with their whole bodies; only the first was rewound,
// and the second try sent the other with an empty body.
func TestRetryRewindsEveryRequest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var sent []string
		w := NewPairBreaker(pairFunc(func(_ context.Context, a, b *http.Request) error {
			ab, _ := io.ReadAll(a.Body)
			bb, _ := io.ReadAll(b.Body)
			sent = append(sent, string(ab)+"|"+string(bb))
			if len(sent) == 1 {
				return errors.New("reset by peer")
			}
			return nil
		}), newRegistry())
		a, err := http.NewRequest(http.MethodPost, "http://quotes/", strings.NewReader("order=1"))
		require.NoError(t, err)
		b, err := http.NewRequest(http.MethodPost, "http://audit/", strings.NewReader("copy=1"))
		require.NoError(t, err)
		require.NoError(t, w.Send(context.Background(), a, b))
		assert.Equal(t, []string{"order=1|copy=1", "order=1|copy=1"}, sent)
	})
}

// ctxBody is a body read through the ctx of the request it answers, as
// net/http's is: a Read after that ctx ended fails.
type ctxBody struct {
	ctx context.Context
	*strings.Reader
}

func (b ctxBody) Read(p []byte) (int, error) {
	if err := b.ctx.Err(); err != nil {
		return 0, err
	}
	return b.Reader.Read(p)
}

func (ctxBody) Close() error { return nil }

// fetchesFunc adapts a func to Fetches.
type fetchesFunc func(ctx context.Context, req *http.Request) (io.ReadCloser, error)

func (f fetchesFunc) Fetch(ctx context.Context, req *http.Request) (io.ReadCloser, error) {
	return f(ctx, req)
}

// TestHedgedStreamReadAfterTheCall: the stream a hedged Fetch returns is
// read after the call, through the winner's ctx, which the race leaves
// alive for it.
func TestHedgedStreamReadAfterTheCall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		body := func(ctx context.Context, req *http.Request) (io.ReadCloser, error) {
			_ = req.Context().Done() // watched, as net/http watches a request's ctx
			return ctxBody{req.Context(), strings.NewReader("object")}, nil
		}
		c := NewFetchesChain(fetchesFunc(body), newRegistry(), runtime.Fallback[Fetches]{Name: "mirror", Impl: fetchesFunc(body)})
		ctx := context.Background()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://blobs/k", nil)
		require.NoError(t, err)
		r, err := c.Fetch(ctx, req)
		require.NoError(t, err)
		got, err := io.ReadAll(r)
		require.NoError(t, err, "read after the call")
		assert.Equal(t, "object", string(got))
	})
}

// objectStore answers Get with the objects given, in turn.
type objectStore struct {
	objs []*Object
	n    int
}

func (s *objectStore) Get(context.Context, string) (*Object, error) {
	o := s.objs[s.n]
	s.n++
	return o, nil
}

// TestFieldStreamsNoCallerSeesAreClosed: the Body of an object whose
// answer a retry replaced, or a chain passed over, is closed; the one
// the caller gets is not.
func TestFieldStreamsNoCallerSeesAreClosed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		replaced, passed, kept := newBlob(""), newBlob(""), newBlob("object")
		primary := &objectStore{objs: []*Object{{Body: replaced}, {Body: passed}}}
		c := NewObjectsChain(primary, newRegistry(), runtime.Fallback[Objects]{Name: "mirror", Impl: &objectStore{objs: []*Object{{Body: kept, Size: 6}}}})
		o, err := c.Get(context.Background(), "k")
		require.NoError(t, err)
		assert.Same(t, kept, o.Body)
		assert.True(t, replaced.closed, "the try a retry replaced")
		assert.True(t, passed.closed, "the failed answer the chain passed over")
		assert.False(t, kept.closed, "the caller's")
	})
}
