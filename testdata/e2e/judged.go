package e2e

import (
	"context"
	"database/sql"
	"errors"
	"net/http"

	"github.com/breakergen/breakergen/runtime/httpguard"
)

// The failure func of Replica.RoundTrip: an annotation names it through
// this file's import.
var _ = httpguard.Failure

// hasVal is the valid func of Cache.Get: an empty value is no data.
func hasVal(c *Cmd) bool { return c.Val() != "" }

// hasColumns is the valid func of Replica.Query: rows without columns are
// no data.
func hasColumns(r *sql.Rows) bool {
	cols, err := r.Columns()
	return err == nil && len(cols) > 0
}

// noColumns is the failure func of RetriedRows.Query: rows without
// columns are a failure.
func noColumns(r *sql.Rows) error {
	if !hasColumns(r) {
		return errNoColumns
	}
	return nil
}

var errNoColumns = errors.New("no columns")

// hasCode is the valid func of Replica.Ask: a zero code is no data.
func hasCode(r *Response) bool { return r != nil && r.Code != 0 }

// Cache keeps its answers, whose outcome its commands carry (SPEC §6 with
// §12): a stale command is served when Redis fails.
//
//breaker:name=cache threshold=2 reset=10s stale=1h
type Cache interface {
	//breaker:valid=hasVal
	Get(ctx context.Context, key string) *Cmd
	//breaker:failure=failed valid=hasCode
	Ask(req *Request) (*Response, error)
}

// Replica answers from a primary, then from its mirrors: commands, rows and
// HTTP responses judged by their own outcome.
//
//breaker:name=mirror threshold=2 reset=10s chain
type Replica interface {
	Get(ctx context.Context, key string) *Cmd
	QueryRow(ctx context.Context, query string) *sql.Row
	//breaker:failure=httpguard.Failure
	RoundTrip(req *http.Request) (*http.Response, error)
	//breaker:failure=failed valid=hasCode stale=1h
	Ask(ctx context.Context, path string) (*Response, error)
	//breaker:valid=hasColumns
	Query(ctx context.Context, query string) (*sql.Rows, error)
}

// Reads races its replicas (SPEC §9): a command carrying its error, and
// an answer judged by failure=.
//
//breaker:name=reads threshold=1 reset=1m hedge=100ms chain
type Reads interface {
	//breaker:stale=1h
	Get(ctx context.Context, key string) *Cmd
	//breaker:failure=failed
	Ask(ctx context.Context, path string) (*Response, error)
}

// Held races its mirrors for answers that hold a connection until their
// reader is done (SPEC §9 with §12): the race releases each answer that no
// caller sees, a loser's or a failed one.
//
//breaker:name=held threshold=5 reset=1m hedge=100ms chain
type Held interface {
	//breaker:failure=httpguard.Failure
	Fetch(ctx context.Context, url string) (*http.Response, error)
	QueryRow(ctx context.Context, query string) *sql.Row
	Query(ctx context.Context, query string) (*sql.Rows, error)
}

// Mirrors races its mirrors for a RoundTrip (SPEC §9 with §12): each
// source sends a request of its own, with its own ctx, so that a loser
// is cancelled.
//
//breaker:name=mirrors threshold=5 reset=1m hedge=50ms chain
type Mirrors interface {
	//breaker:failure=httpguard.Failure
	RoundTrip(req *http.Request) (*http.Response, error)
}

// Doers races its clients for a Do(ctx, req), an *http.Client behind an
// interface: each source's request carries the source's ctx too, so that
// a client that sends req as it is (client.Do(req)) is cancelled when it
// loses.
//
//breaker:name=doers threshold=5 reset=1m hedge=50ms chain
type Doers interface {
	//breaker:failure=httpguard.Failure
	Do(ctx context.Context, req *http.Request) (*http.Response, error)
}

// TimedDoer gives a Do(ctx, req), an *http.Client behind an interface, a
// timeout: a req made on ctx goes on with the timeout's ctx too, so that
// a client that sends req as it is (client.Do(req)) is cut at the
// timeout. Do retries, Get makes one try.
//
//breaker:name=timeddoer threshold=5 reset=1m timeout=100ms failure=httpguard.Failure
type TimedDoer interface {
	//breaker:attempts=2 backoff=1ms
	Do(ctx context.Context, req *http.Request) (*http.Response, error)
	Get(ctx context.Context, req *http.Request) (*http.Response, error)
}

// RetriedRows retries a query whose rows its failure func judges: a try
// that replaces rows closes them.
//
//breaker:name=rowsretried threshold=5 reset=1m attempts=2 chain
type RetriedRows interface {
	//breaker:failure=noColumns
	Query(ctx context.Context, query string) (*sql.Rows, error)
}
