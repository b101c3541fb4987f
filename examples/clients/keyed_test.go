package clients_test

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/breakergen/breakergen/examples/clients"
	"github.com/breakergen/breakergen/runtime"
)

// TestHostTransportTripsTheFailingHostAlone: one client, two hosts; the
// one answering 503 trips its own breaker, "hosts/<host>", after
// threshold=3 answers (each reaching the caller, body and all), and is
// then refused without a request, while the other host keeps being served
// through its own breaker.
func TestHostTransportTripsTheFailingHostAlone(t *testing.T) {
	bad, good := newServer(t), newServer(t)
	bad.status.Store(http.StatusServiceUnavailable)
	reg := newRegistry(newClock())
	tr := http.DefaultTransport.(*http.Transport).Clone()
	t.Cleanup(tr.CloseIdleConnections)
	base := &countingBodies{next: tr}
	client := &http.Client{Transport: clients.NewHostTransportBreaker(base, reg)}

	for range 3 {
		code, err := get(t, client, bad.URL)
		require.NoError(t, err, "a failure answer is still an answer to the caller")
		assert.Equal(t, http.StatusServiceUnavailable, code)
	}
	_, err := get(t, client, bad.URL)
	require.ErrorIs(t, err, runtime.ErrOpen)
	assert.Equal(t, int64(3), bad.requests.Load(), "the refusal sent nothing")
	for range 5 {
		code, err := get(t, client, good.URL)
		require.NoError(t, err, "the other host keeps being served")
		assert.Equal(t, http.StatusOK, code)
	}
	assert.Equal(t, int64(5), good.requests.Load())

	bb, ok := reg.Lookup("hosts/" + hostOf(t, bad.URL))
	require.True(t, ok)
	assert.Equal(t, runtime.Open, bb.State())
	gb, ok := reg.Lookup("hosts/" + hostOf(t, good.URL))
	require.True(t, ok)
	assert.Equal(t, runtime.Closed, gb.State())
	h := reg.Health()
	require.Len(t, h.Families, 1)
	assert.Equal(t, runtime.FamilyHealth{Name: "hosts", Keys: 2, Limit: 100, Open: 1, MaxOpen: 50}, h.Families[0])
	assert.Equal(t, base.opened.Load(), base.closed.Load(), "every body was closed")
}

func hostOf(t *testing.T, raw string) string {
	t.Helper()
	u, err := url.Parse(raw)
	require.NoError(t, err)
	return u.Host
}
