package clients_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/breakergen/breakergen/examples/clients"
	"github.com/breakergen/breakergen/runtime"
)

// toServer sends every request to srv, whatever its URL's host.
type toServer struct {
	srv  *httptest.Server
	next http.RoundTripper
}

func (t toServer) RoundTrip(req *http.Request) (*http.Response, error) {
	c := req.Clone(req.Context())
	c.URL.Scheme, c.URL.Host = "http", strings.TrimPrefix(t.srv.URL, "http://")
	return t.next.RoundTrip(c)
}

// TestMirroredTransportCutsTheTail: the primary stalls; at the hedge delay
// the mirror is sent the request too, and its answer is the client's.
// The primary's request is cancelled (its server sees it go), a POST's
// body reaches both whole, and every response body handed out is closed.
func TestMirroredTransportCutsTheTail(t *testing.T) {
	cancelled := make(chan struct{}, 2)
	bodies := make(chan string, 4)
	stalled := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		bodies <- "primary " + string(b)
		<-r.Context().Done() // stalls until the race cancels it
		cancelled <- struct{}{}
	}))
	t.Cleanup(stalled.Close)
	mirror := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		bodies <- "mirror " + string(b)
		_, _ = io.WriteString(w, "600519 1688.00")
	}))
	t.Cleanup(mirror.Close)
	under := &countingBodies{next: &http.Transport{}}
	reg := runtime.NewRegistry(runtime.WithoutEnv())
	client := &http.Client{Transport: clients.NewMirroredTransportChain(toServer{stalled, under}, reg,
		runtime.Fallback[clients.MirroredTransport]{Name: "mirror", Impl: toServer{mirror, under}})}

	for _, body := range []string{"", "order=1"} {
		ctx, p := runtime.WithProvenance(context.Background())
		method := http.MethodGet
		if body != "" {
			method = http.MethodPost
		}
		req, err := http.NewRequestWithContext(ctx, method, "http://quotes/600519", strings.NewReader(body))
		require.NoError(t, err)
		resp, err := client.Do(req)
		require.NoError(t, err)
		got, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		require.NoError(t, resp.Body.Close())
		assert.Equal(t, "600519 1688.00", string(got))
		assert.Equal(t, "fallback:mirror hedged (mirrored slow)", p.String())
		<-cancelled
		assert.ElementsMatch(t, []string{"primary " + body, "mirror " + body}, []string{<-bodies, <-bodies})
	}
	assert.Equal(t, under.opened.Load(), under.closed.Load(), "every response body handed out is closed")
}
