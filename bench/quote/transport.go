package quote

import (
	"net/http"
	"strings"

	"github.com/breakergen/breakergen/runtime/httpguard"
)

// The failure func of the transports' lines: an annotation names it
// through this file's import.
var _ = httpguard.Failure

// Transport is an http.RoundTripper in a chain (SPEC §12): what guarding a
// request costs, beside HedgedTransport, the same chain racing its sources
// (SPEC §9) with a delay its primary always beats.
//
//breaker:name=transport threshold=5 reset=30s failure=httpguard.Failure chain
type Transport interface {
	RoundTrip(req *http.Request) (*http.Response, error)
}

// HedgedTransport is Transport with hedge: each source sends a request of
// its own, with its own ctx, and the winner's ctx ends with its body.
//
//breaker:name=hedgedtransport threshold=5 reset=30s failure=httpguard.Failure hedge=1h chain
type HedgedTransport interface {
	RoundTrip(req *http.Request) (*http.Response, error)
}

// LocalTransport answers every request at once with 200 and a short body,
// made anew for each request as a transport's is.
type LocalTransport struct{}

// RoundTrip answers req.
func (LocalTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: http.StatusOK, Body: &localBody{Reader: strings.NewReader("600519 1688.00")}, Request: req}, nil
}

type localBody struct{ *strings.Reader }

func (*localBody) Close() error { return nil }
