package httpguard_test

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/breakergen/breakergen/runtime/httpguard"
)

// echoUpgrade is a server that switches a request with "Upgrade: echo"
// to a protocol of its own, as a WebSocket server does: it answers 101 on
// the hijacked connection, then echoes each line it reads.
func echoUpgrade(t *testing.T) *httptest.Server {
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

// TestCancelOnCloseUpgrade: a 101 from net/http's transport comes back
// with its writable body, the connection, as it is; the try's ctx ends
// at once (the upgrade was the answer), and the upgraded connection lives
// on after it.
func TestCancelOnCloseUpgrade(t *testing.T) {
	srv := echoUpgrade(t)
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
	require.NoError(t, err)
	req.Header.Set("Connection", "Upgrade")
	req.Header.Set("Upgrade", "echo")
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	resp, err := tr.RoundTrip(req)
	require.NoError(t, err)
	require.Equal(t, http.StatusSwitchingProtocols, resp.StatusCode)
	body := resp.Body

	resp = httpguard.CancelOnClose(resp, cancel)
	assert.Same(t, body, resp.Body, "the connection itself, not a read-only wrapper")
	conn, ok := resp.Body.(io.ReadWriteCloser)
	require.True(t, ok, "a 101's body is writable (net/http's contract, which httputil.ReverseProxy needs)")
	defer conn.Close()
	assert.ErrorIs(t, ctx.Err(), context.Canceled, "the call is over once the protocol switched")

	br := bufio.NewReader(conn)
	for _, line := range []string{"hi\n", "again\n"} {
		_, err = io.WriteString(conn, line)
		require.NoError(t, err)
		got, err := br.ReadString('\n')
		require.NoError(t, err, "the upgraded connection outlives the request's ctx")
		assert.Equal(t, "echo:"+line, got)
	}
}
