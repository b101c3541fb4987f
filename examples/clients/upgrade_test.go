package clients_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/breakergen/breakergen/examples/clients"
	"github.com/breakergen/breakergen/runtime"
)

// echoBackend switches a request with "Upgrade: echo" to a protocol of
// its own, as a WebSocket server does: 101 on the hijacked connection,
// then each line it reads echoed.
func echoBackend(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Upgrade") != "echo" {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		conn, brw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return
		}
		defer conn.Close()
		_, _ = brw.WriteString("HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\n")
		_ = brw.Flush()
		for {
			line, err := brw.ReadString('\n')
			if err != nil {
				return
			}
			_, _ = brw.WriteString("echo:" + line)
			_ = brw.Flush()
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// ctxRecorder is the transport under the guarded one: it keeps the ctx
// of the request it sent last.
type ctxRecorder struct {
	next http.RoundTripper
	mu   sync.Mutex // guards ctx
	ctx  context.Context
}

func (c *ctxRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
	c.mu.Lock()
	c.ctx = req.Context()
	c.mu.Unlock()
	return c.next.RoundTrip(req)
}

func (c *ctxRecorder) sent() context.Context {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ctx
}

// TestHTTPUpgradeThroughProxy: httputil.ReverseProxy over a guarded
// transport passes a WebSocket-style upgrade on: the 101's body, the
// connection, reaches the proxy writable (a read-only one makes it answer
// 502), for a route with a timeout and for a hedged chain alike. The
// try's ctx has ended by then (the upgrade was the answer), and the
// upgraded connection lives on after it.
func TestHTTPUpgradeThroughProxy(t *testing.T) {
	backend := echoBackend(t)
	target, err := url.Parse(backend.URL)
	require.NoError(t, err)
	for _, tc := range []struct {
		name string
		wrap func(http.RoundTripper, *runtime.Registry) http.RoundTripper
	}{
		{"Transport (timeout=5s)", func(rt http.RoundTripper, reg *runtime.Registry) http.RoundTripper {
			return clients.NewTransportBreaker(rt, reg)
		}},
		{"HostTransport (timeout=5s, key=host)", func(rt http.RoundTripper, reg *runtime.Registry) http.RoundTripper {
			return clients.NewHostTransportBreaker(rt, reg)
		}},
		{"MirroredTransport (hedge=50ms)", func(rt http.RoundTripper, reg *runtime.Registry) http.RoundTripper {
			return clients.NewMirroredTransportChain(rt, reg, runtime.Fallback[clients.MirroredTransport]{Name: "mirror", Impl: rt})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := &http.Transport{}
			t.Cleanup(tr.CloseIdleConnections)
			under := &ctxRecorder{next: tr}
			proxy := httputil.NewSingleHostReverseProxy(target)
			proxy.Transport = tc.wrap(under, runtime.NewRegistry(runtime.WithoutEnv()))
			proxy.ErrorLog = log.New(io.Discard, "", 0)
			front := httptest.NewServer(proxy)
			t.Cleanup(front.Close)

			conn, err := net.Dial("tcp", front.Listener.Addr().String())
			require.NoError(t, err)
			defer conn.Close()
			require.NoError(t, conn.SetDeadline(time.Now().Add(10*time.Second)))
			_, err = fmt.Fprint(conn, "GET / HTTP/1.1\r\nHost: quotes\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\n")
			require.NoError(t, err)
			br := bufio.NewReader(conn)
			resp, err := http.ReadResponse(br, nil)
			require.NoError(t, err)
			require.Equal(t, http.StatusSwitchingProtocols, resp.StatusCode, "the proxy passed the upgrade on")

			ctx := under.sent()
			require.NotNil(t, ctx)
			assert.Error(t, ctx.Err(), "the try's ctx ended with the 101")
			for _, line := range []string{"hi\n", "again\n"} {
				_, err = io.WriteString(conn, line)
				require.NoError(t, err)
				got, err := br.ReadString('\n')
				require.NoError(t, err, "the upgraded connection outlives the try's ctx")
				assert.Equal(t, "echo:"+line, got)
			}
		})
	}
}
