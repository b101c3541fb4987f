package contend_test

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/breakergen/breakergen/runtime"

	"github.com/breakergen/breakergen/bench/quote"
)

// The cost of guarding a request and of hedging it (SPEC §9 with §12): a
// GET through quote.LocalTransport called directly, through the generated
// chain, and through the hedged chain, whose primary answers long before
// the delay (hedge=1h). Each call reads and closes the body, as a client
// does. The -loopback rows send it to an httptest server through an
// http.Transport, keeping its connections: the same three, against a
// real request's cost. Run:
//
//	cd bench && go test -run '^$' -bench 'TransportSuccess' -benchmem -count 6 -cpu 1 ./contend/
func BenchmarkTransportSuccess(b *testing.B) {
	reg := func() *runtime.Registry {
		return runtime.NewRegistry(runtime.WithoutEnv(), runtime.WithLogger(slog.New(slog.DiscardHandler)))
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "600519 1688.00")
	}))
	defer srv.Close()
	loop := &http.Transport{}
	defer loop.CloseIdleConnections()
	type rows = []struct {
		name string
		rt   http.RoundTripper
	}
	var cases rows
	urls := map[string]string{}
	for _, u := range []struct {
		suffix, url string
		up          http.RoundTripper
	}{{"", "http://quotes/600519", quote.LocalTransport{}}, {"-loopback", srv.URL + "/600519", loop}} {
		cases = append(cases, rows{
			{"direct" + u.suffix, u.up},
			{"chain" + u.suffix, quote.NewTransportChain(u.up, reg(), runtime.Fallback[quote.Transport]{Name: "mirror", Impl: u.up})},
			{"hedged" + u.suffix, quote.NewHedgedTransportChain(u.up, reg(), runtime.Fallback[quote.HedgedTransport]{Name: "mirror", Impl: u.up})},
		}...)
		urls[u.suffix] = u.url
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			url := urls[""]
			if strings.HasSuffix(c.name, "-loopback") {
				url = urls["-loopback"]
			}
			req, err := http.NewRequest(http.MethodGet, url, nil)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				resp, err := c.rt.RoundTrip(req)
				if err != nil {
					b.Fatal(err)
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				_ = resp.Body.Close()
			}
		})
	}
}
