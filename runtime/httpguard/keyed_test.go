package httpguard_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/breakergen/breakergen/runtime"
	"github.com/breakergen/breakergen/runtime/breakerimpl"
	"github.com/breakergen/breakergen/runtime/httpguard"
)

// hostKeyed is the shape breakergen generates for an http.RoundTripper
// annotated `//breaker:name=api threshold=2 failure=httpguard.Failure
// key=host`: one breaker per req.URL.Host, "api/<host>".
type hostKeyed struct {
	next   http.RoundTripper
	family *breakerimpl.Family
}

func (w *hostKeyed) RoundTrip(req *http.Request) (r0 *http.Response, err error) {
	ctx := req.Context()
	k := w.family.Key(req.URL.Host)
	defer k.Done()
	call, ok := k.Route.EnterFast()
	if !ok {
		if err = call.Refusal(); err != nil {
			return
		}
		if call, err = k.Route.Enter(ctx); err != nil {
			return
		}
	}
	r0, err = w.try(ctx, call, req)
	return
}

func (w *hostKeyed) try(ctx context.Context, call breakerimpl.Call, req *http.Request) (r0 *http.Response, err error) {
	var outcome error
	defer call.Exit(ctx, &outcome)
	outcome = breakerimpl.PanicGuard
	r0, err = w.next.RoundTrip(req)
	if outcome = err; err == nil {
		outcome = httpguard.Failure(r0)
	}
	return
}

func TestKeyedRoundTripperTripsTheFailingHostAlone(t *testing.T) {
	bad := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer bad.Close()
	good := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, "ok")
	}))
	defer good.Close()

	reg := runtime.NewRegistry(runtime.WithLogger(slog.New(slog.DiscardHandler)), runtime.WithoutEnv())
	base := http.DefaultTransport.(*http.Transport).Clone()
	defer base.CloseIdleConnections()
	client := &http.Client{Transport: &hostKeyed{next: base, family: breakerimpl.NewFamily(reg, base,
		breakerimpl.RouteConfig{Breaker: runtime.Config{Name: "api", FailureThreshold: 2}}, 0, 0)}}

	get := func(u string) (*http.Response, error) {
		resp, err := client.Get(u)
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		return resp, err
	}
	for range 2 {
		resp, err := get(bad.URL)
		require.NoError(t, err, "a failure answer still reaches the caller")
		assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	}
	_, err := get(bad.URL)
	require.ErrorIs(t, err, runtime.ErrOpen, "the 503 host is refused")
	badHost := mustHost(t, bad.URL)
	assert.Contains(t, err.Error(), "api/"+badHost)

	for range 5 {
		resp, err := get(good.URL)
		require.NoError(t, err, "the other host keeps being served")
		assert.Equal(t, http.StatusOK, resp.StatusCode)
	}
	b, ok := reg.Lookup("api/" + badHost)
	require.True(t, ok)
	assert.Equal(t, runtime.Open, b.State())
	g, ok := reg.Lookup("api/" + mustHost(t, good.URL))
	require.True(t, ok)
	assert.Equal(t, runtime.Closed, g.State())
	h := reg.Health()
	require.Len(t, h.Families, 1)
	assert.Equal(t, 1, h.Families[0].Open)
	assert.Equal(t, 2, h.Families[0].Keys)
}

func mustHost(t *testing.T, raw string) string {
	t.Helper()
	u, err := url.Parse(raw)
	require.NoError(t, err)
	return u.Host
}
