package e2e

import (
	"context"
	"net/http"

	"github.com/breakergen/breakergen/runtime/httpguard"
)

// Quotes is keyed by a string: one bad code trips alone.
//
//breaker:name=quote threshold=2 reset=1m key=code
type Quotes interface {
	Quote(ctx context.Context, code string) (string, error)
}

// OrderID is a named signed integer.
type OrderID int32

// Orders is keyed by integers, a named one converted.
//
//breaker:name=orders threshold=1 reset=1m key=id
type Orders interface {
	Get(ctx context.Context, id OrderID) error
	//breaker:name=shards threshold=1 key=shard
	Shard(ctx context.Context, shard uint16) error
}

// Symbol keys by its String.
type Symbol struct{ Exchange, Code string }

func (s Symbol) String() string { return s.Exchange + ":" + s.Code }

// Depth is keyed by a fmt.Stringer; attempts retry on the key's breaker.
//
//breaker:name=depth threshold=2 reset=1m attempts=2 backoff=1ms key=sym
type Depth interface {
	Depth(ctx context.Context, sym Symbol) (int, error)
}

// Tenants is bounded: at most two keys live, half of them out of CLOSED.
//
//breaker:name=tenants threshold=1 reset=1m keys=2 maxopen=50% key=tenant
type Tenants interface {
	Do(ctx context.Context, tenant string) error
}

// HostTransport is an http.RoundTripper with one breaker per host; a 5xx
// answer is a failure.
//
//breaker:name=hosts threshold=2 reset=1m failure=httpguard.Failure key=host
type HostTransport interface {
	RoundTrip(req *http.Request) (*http.Response, error)
}

// Books is a chain keyed by symbol: the primary's breakers are per key,
// the fallback's is one.
//
//breaker:name=book threshold=1 reset=1m key=sym chain
type Books interface {
	Book(ctx context.Context, sym string) (string, error)
}

// The annotation's failure func: an annotation names what its file imports.
var _ = httpguard.Failure
