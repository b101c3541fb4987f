// Package clients guards the clients a Go service already uses, without
// writing an interface of its own for them: go-redis v9 (whose commands
// carry their error), database/sql (whose *sql.Row does too) and
// net/http's RoundTripper (whose ctx is the request's and whose 503 is an
// answer, not an error), also with one breaker per host. See
// docs/clients.md and docs/keys.md.
package clients

import (
	"context"
	"database/sql"
	"net/http"

	"github.com/redis/go-redis/v9"

	"github.com/breakergen/breakergen/runtime/httpguard"
)

//go:generate go run github.com/breakergen/breakergen/cmd/breakergen

// Cache is go-redis's every command. *redis.Client implements it. Each
// command's Err() is its outcome, redis.Nil (a missing key) counts as an
// answer, also when Pipelined, TxPipelined or Process return it, and so
// does Watch's redis.TxFailedErr (a watched key changed); a refusal comes
// back as a command whose Err() is the refusal.
//
//breaker:name=redis threshold=3 reset=5s
type Cache interface {
	redis.Cmdable

	// Process sends a command built by hand (redis.NewStringCmd); its
	// error is the command's, redis.Nil for a missing key.
	Process(ctx context.Context, cmd redis.Cmder) error
	// Watch runs fn in an optimistic transaction on keys; its error is
	// redis.TxFailedErr when a watched key changed before EXEC.
	Watch(ctx context.Context, fn func(*redis.Tx) error, keys ...string) error

	// A pipeline is a batch built locally, not a call to Redis: the
	// commands it sends through Exec are what can fail.
	//
	//breaker:skip
	Pipeline() redis.Pipeliner
	//breaker:skip
	TxPipeline() redis.Pipeliner
}

// DB is the part of *sql.DB a service queries through. A missing table or
// a locked database trips it; a refusal comes back as a *sql.Row whose
// Err() and Scan are the refusal.
//
//breaker:name=sqlite threshold=2 reset=5s
type DB interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// Tx is the part of *sql.Tx a transaction's work goes through. The
// Rollback that database/sql's idiom defers answers sql.ErrTxDone after a
// Commit: a transaction already ended is the caller's order of calls, not
// the database's health, so it is an answer, not a failure.
//
//breaker:name=sqlitetx threshold=2 reset=5s
type Tx interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	Commit() error
	Rollback() error
}

// Transport is an http.RoundTripper: breaker, limiter and timeout run on
// req.Context(); a 5xx or 429 answer is a failure (a Retry-After on a 429
// or 503 opens the breaker for that long) and still reaches the caller,
// body unread.
//
//breaker:name=api threshold=3 reset=10s timeout=5s failure=httpguard.Failure
type Transport interface {
	RoundTrip(req *http.Request) (*http.Response, error)
}

// RetryingTransport is a Transport that tries twice: a 5xx answer
// without Retry-After is retried (its body drained and closed: no caller
// sees it), a 429 or 503 with one is not (it opens the breaker).
//
//breaker:name=api threshold=3 reset=10s attempts=2 backoff=10ms failure=httpguard.Failure
type RetryingTransport interface {
	RoundTrip(req *http.Request) (*http.Response, error)
}

// HostTransport is a Transport with one breaker per host: behind one
// shared client, a dead host trips its own breaker, "hosts/<host>", and
// the other hosts keep being served. At most 100 hosts' breakers live at
// once, and at most half of them out of CLOSED (SPEC §15, docs/keys.md).
//
//breaker:name=hosts threshold=3 reset=10s timeout=5s keys=100 maxopen=50% failure=httpguard.Failure key=host
type HostTransport interface {
	RoundTrip(req *http.Request) (*http.Response, error)
}

// MirroredTransport is a Transport whose chain sends a request to a
// mirror too when the primary has not answered within 50ms, and takes
// the first good answer (SPEC §9's hedge): the tail of the primary's
// latency is cut. Each sends a request of its own (a POST's body read
// again through GetBody), the loser's is cancelled, and a response no
// caller sees is closed.
//
//breaker:name=mirrored threshold=3 reset=10s hedge=50ms failure=httpguard.Failure chain
type MirroredTransport interface {
	RoundTrip(req *http.Request) (*http.Response, error)
}

// QuoteCache reads quotes from Redis and, while Redis fails or its
// breaker refuses, serves the last value it read for the same key, for
// up to a day (SPEC §6's stale): a quote page shows the last price rather
// than an error. The command is kept as Redis returned it; a missing key
// (redis.Nil) is an answer, returned as it is and never kept.
//
//breaker:name=quotecache threshold=3 reset=5s stale=24h
type QuoteCache interface {
	Get(ctx context.Context, key string) *redis.StringCmd
}

// Replicas reads from a primary Redis, then from each replica in turn
// when the primary fails or its breaker refuses (SPEC §6's chain); when
// none answers, the command's Err() is a *runtime.ChainError naming each.
//
//breaker:name=redisprimary threshold=3 reset=5s chain
type Replicas interface {
	Get(ctx context.Context, key string) *redis.StringCmd
}

// The annotation's failure func: an annotation names what its file imports.
var _ = httpguard.Failure
