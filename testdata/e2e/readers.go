package e2e

import (
	"bytes"
	"context"
	"io"
	"net/http"

	"github.com/breakergen/breakergen/runtime/httpguard"
)

var _ = httpguard.Failure // Poster's failure func

// Store puts objects whose body a retry must send whole again: each
// try after the first reads it from where the first began.
//
//breaker:name=store threshold=5 reset=1m attempts=3 backoff=1ms
type Store interface {
	Put(ctx context.Context, key string, body io.Reader) error
}

// Poster is http.Client's Post, judged by httpguard.Failure: a 503 is
// retried, with its body sent whole again.
//
//breaker:name=poster threshold=5 reset=1m attempts=2 backoff=1ms failure=httpguard.Failure
type Poster interface {
	Post(url, contentType string, body io.Reader) (*http.Response, error)
}

// PlainPoster is http.Client's Post with nothing but a breaker (its own
// line's failure=- says that its answers are judged by their errors
// alone): the generator's plainest body.
//
//breaker:name=plainposter threshold=5 reset=1m
type PlainPoster interface {
	//breaker:failure=-
	Post(url, contentType string, body io.Reader) (*http.Response, error)
}

// Replicas puts an object on a primary, then on each mirror in turn:
// each source reads the body from where the call found it.
//
//breaker:name=replicas threshold=5 reset=1m chain
type Replicas interface {
	Put(ctx context.Context, key string, body io.Reader) error
}

// RacedStore has a hedge that a reader's method cannot use: two sources
// cannot read one body at once, so its sources are asked one at a time.
//
//breaker:name=racedstore threshold=5 reset=1m hedge=10ms chain
type RacedStore interface {
	Put(ctx context.Context, key string, body io.Reader) error
}

// Signer's arguments with Read are no bodies: Get fills the caller's
// buffer, and Sign reads entropy (crypto.Signer's rand), which every
// try reads on from. A retry and a fallback are made as for any method.
//
//breaker:name=signer threshold=5 reset=1m attempts=3 backoff=1ms chain
type Signer interface {
	Get(ctx context.Context, key string, dst *bytes.Buffer) error
	Sign(ctx context.Context, rand io.Reader, digest []byte) ([]byte, error)
}

// Download is a body read to its end through a breaker: io.EOF, the end
// of the data, is an answer of its Read, no failure.
//
//breaker:name=download threshold=3 reset=1m
type Download interface {
	io.ReadCloser
	//breaker:skip
	Close() error
}
