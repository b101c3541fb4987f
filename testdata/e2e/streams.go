package e2e

import (
	"context"
	"errors"
	"io"
	"net/http"
)

// Blobs opens objects through a chain whose primary retries: a stream
// that no caller sees (the answer of a try that a retry replaces, of a
// source the chain passes over as invalid) is closed.
//
//breaker:name=blobs threshold=5 reset=1m attempts=2 backoff=1ms chain
type Blobs interface {
	//breaker:valid=hasBytes
	Open(ctx context.Context, name string) (io.ReadCloser, error)
}

// RacedBlobs races its mirrors for a stream: the loser's is closed.
//
//breaker:name=racedblobs threshold=5 reset=1m hedge=50ms chain
type RacedBlobs interface {
	Open(ctx context.Context, name string) (io.ReadCloser, error)
}

// Sized is a stream that knows its length, as an object store's reader
// does.
type Sized interface{ Len() int }

// hasBytes is the valid func of Blobs.Open: an empty object is no data.
func hasBytes(r io.ReadCloser) bool {
	s, ok := r.(Sized)
	return ok && s.Len() > 0
}

// Fetcher retries a hand-written client that returns its response beside
// its error (resp, fmt.Errorf("status %d", ...)): the response of the try
// a retry replaces is closed.
//
//breaker:name=fetcher threshold=5 reset=1m attempts=2 backoff=1ms
type Fetcher interface {
	//breaker:failure=-
	Fetch(ctx context.Context, url string) (*http.Response, error)
}

// Pair sends two requests in one call (a primary's and an audit copy):
// a retry sends both again, each with its body rewound.
//
//breaker:name=pair threshold=5 reset=1m attempts=2 backoff=1ms
type Pair interface {
	Send(ctx context.Context, a, b *http.Request) error
}

// Fetches races its mirrors for a body fetched with a request and
// returned as a stream (resp.Body of client.Do(req)): it is read through
// the winner's ctx after the call, so that ctx lives on with it.
//
//breaker:name=fetches threshold=5 reset=1m hedge=50ms chain
type Fetches interface {
	Fetch(ctx context.Context, req *http.Request) (io.ReadCloser, error)
}

// Object is an object store's answer: its Body is the caller's to close.
type Object struct {
	Body io.ReadCloser
	Size int
}

// errEmpty is emptyObject's verdict.
var errEmpty = errors.New("empty object")

// emptyObject is the failure func of Objects.Get: an empty object is the
// store failing.
func emptyObject(o *Object) error {
	if o == nil || o.Size == 0 {
		return errEmpty
	}
	return nil
}

// Objects gets objects through a chain whose primary retries a failure
// its answer shows: the Body of an answer no caller sees (a try a retry
// replaced, a source the chain passed over) is closed.
//
//breaker:name=objects threshold=5 reset=1m attempts=2 backoff=1ms chain
type Objects interface {
	//breaker:failure=emptyObject
	Get(ctx context.Context, key string) (*Object, error)
}
