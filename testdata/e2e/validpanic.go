package e2e

import (
	"context"
	"net/http"

	"github.com/breakergen/breakergen/runtime/httpguard"
)

// Price is an answer whose valid func reads a field.
type Price struct{ Value float64 }

// positive is the valid func of Valued: it reads its
// answer's field, so a nil answer (an upstream's (nil, nil)) makes it
// panic.
func positive(p *Price) bool { return p.Value > 0 }

// judgedPositive is JudgedValued's valid func: it reads the answer's
// Request, which the tests' RoundTripper leaves nil.
func judgedPositive(r *http.Response) bool { return r.Request.Method != "" }

var _ = httpguard.Failure

// Valued is judged by a valid func that panics on a nil answer.
//
//breaker:name=vquotes threshold=2 reset=1m valid=positive
type Valued interface {
	Get(ctx context.Context) (*Price, error)
}

// JudgedValued is judged by a failure func and by a valid func that
// panics on a nil answer.
//
//breaker:name=judgedquotes threshold=2 reset=1m failure=httpguard.Failure valid=judgedPositive
type JudgedValued interface {
	RoundTrip(req *http.Request) (*http.Response, error)
}
