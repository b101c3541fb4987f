package e2e

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/breakergen/breakergen/runtime"
	"github.com/breakergen/breakergen/runtime/breakerimpl"
)

var errKeyDown = errors.New("down")

// keyedFake fails for the keys in bad and counts the calls per key.
type keyedFake struct {
	bad   map[string]bool
	calls map[string]int
}

func newKeyedFake(bad ...string) *keyedFake {
	f := &keyedFake{bad: map[string]bool{}, calls: map[string]int{}}
	for _, b := range bad {
		f.bad[b] = true
	}
	return f
}

func (f *keyedFake) call(key string) error {
	f.calls[key]++
	if f.bad[key] {
		return errKeyDown
	}
	return nil
}

func (f *keyedFake) Quote(_ context.Context, code string) (string, error) {
	return "q:" + code, f.call(code)
}

func (f *keyedFake) Get(_ context.Context, id OrderID) error {
	return f.call(strconv.Itoa(int(id)))
}

func (f *keyedFake) Shard(_ context.Context, shard uint16) error {
	return f.call("shard" + strconv.Itoa(int(shard)))
}

func (f *keyedFake) Depth(_ context.Context, sym Symbol) (int, error) {
	return len(sym.Code), f.call(sym.String())
}

func (f *keyedFake) Do(_ context.Context, tenant string) error { return f.call(tenant) }

func (f *keyedFake) Book(_ context.Context, sym string) (string, error) {
	return "book:" + sym, f.call(sym)
}

// backupBooks is the chain's fallback.
type backupBooks struct{ calls int }

func (b *backupBooks) Book(_ context.Context, sym string) (string, error) {
	b.calls++
	return "backup:" + sym, nil
}

func keyState(t *testing.T, reg *runtime.Registry, name string) runtime.State {
	t.Helper()
	b, ok := reg.Lookup(name)
	require.True(t, ok, "no breaker %q", name)
	return b.State()
}

func TestKeyedStringTripsTheBadKeyAlone(t *testing.T) {
	reg := newRegistry()
	fake := newKeyedFake("bad")
	w := NewQuotesBreaker(fake, reg)
	ctx := context.Background()
	for range 2 {
		_, err := w.Quote(ctx, "bad")
		require.ErrorIs(t, err, errKeyDown)
	}
	_, err := w.Quote(ctx, "bad")
	require.ErrorIs(t, err, runtime.ErrOpen)
	assert.Contains(t, err.Error(), "quote/bad")
	assert.Equal(t, 2, fake.calls["bad"], "an open key's upstream is not called")
	for range 5 {
		q, err := w.Quote(ctx, "good")
		require.NoError(t, err, "another key keeps being served")
		assert.Equal(t, "q:good", q)
	}
	assert.Equal(t, runtime.Open, keyState(t, reg, "quote/bad"))
	assert.Equal(t, runtime.Closed, keyState(t, reg, "quote/good"))
	_, ok := reg.Lookup("quote")
	assert.False(t, ok, "a keyed name has no breaker of its own")
	h := reg.Health()
	require.Len(t, h.Families, 1)
	assert.Equal(t, "quote", h.Families[0].Name)
	assert.Equal(t, 2, h.Families[0].Keys)
	assert.Equal(t, runtime.DefaultFamilyKeys, h.Families[0].Limit)
}

func TestKeyedIntegers(t *testing.T) {
	reg := newRegistry()
	fake := newKeyedFake("-7", "shard3")
	w := NewOrdersBreaker(fake, reg)
	ctx := context.Background()
	require.ErrorIs(t, w.Get(ctx, -7), errKeyDown)
	require.ErrorIs(t, w.Get(ctx, -7), runtime.ErrOpen)
	require.NoError(t, w.Get(ctx, 42))
	assert.Equal(t, runtime.Open, keyState(t, reg, "orders/-7"))
	assert.Equal(t, runtime.Closed, keyState(t, reg, "orders/42"))

	require.ErrorIs(t, w.Shard(ctx, 3), errKeyDown)
	require.ErrorIs(t, w.Shard(ctx, 3), runtime.ErrOpen)
	require.NoError(t, w.Shard(ctx, 65535))
	assert.Equal(t, runtime.Open, keyState(t, reg, "shards/3"))
	assert.Equal(t, runtime.Closed, keyState(t, reg, "shards/65535"))
	assert.Equal(t, 1, fake.calls["shard3"])
}

func TestKeyedStringerRetriesOnItsKey(t *testing.T) {
	reg := newRegistry()
	bad := Symbol{"sh", "600519"}
	fake := newKeyedFake(bad.String())
	w := NewDepthBreaker(fake, reg)
	ctx := context.Background()
	_, err := w.Depth(ctx, bad)
	require.ErrorIs(t, err, errKeyDown)
	assert.Equal(t, 2, fake.calls[bad.String()], "attempts=2: both tries on the key's breaker")
	assert.Equal(t, runtime.Open, keyState(t, reg, "depth/sh:600519"), "two failed tries trip threshold=2")
	n, err := w.Depth(ctx, Symbol{"sz", "000001"})
	require.NoError(t, err)
	assert.Equal(t, 6, n)
	assert.Equal(t, runtime.Closed, keyState(t, reg, "depth/sz:000001"))
}

func TestKeyedBoundAndMaxOpen(t *testing.T) {
	reg := newRegistry()
	fake := newKeyedFake("a", "b")
	w := NewTenantsBreaker(fake, reg)
	ctx := context.Background()
	require.ErrorIs(t, w.Do(ctx, "a"), errKeyDown)
	assert.Equal(t, runtime.Open, keyState(t, reg, "tenants/a"))
	// Two live keys, maxopen 50%: one may be out of CLOSED, so b stays
	// CLOSED and keeps being called.
	require.ErrorIs(t, w.Do(ctx, "b"), errKeyDown)
	require.ErrorIs(t, w.Do(ctx, "b"), errKeyDown)
	assert.Equal(t, runtime.Closed, keyState(t, reg, "tenants/b"))
	assert.Equal(t, 2, fake.calls["b"])
	// A third key goes past keys=2: the CLOSED b is dropped, the OPEN a
	// never.
	require.NoError(t, w.Do(ctx, "c"))
	h := reg.Health()
	require.Len(t, h.Families, 1)
	f := h.Families[0]
	assert.Equal(t, 2, f.Limit)
	assert.Equal(t, 50, f.MaxOpen)
	assert.Equal(t, 2, f.Keys)
	assert.Equal(t, uint64(1), f.Dropped)
	assert.Equal(t, uint64(2), f.KeptShut)
	assert.Equal(t, runtime.Open, keyState(t, reg, "tenants/a"))
	_, ok := reg.Lookup("tenants/b")
	assert.False(t, ok, "the dropped key's breaker is gone")
}

func TestKeyedChainFallsBackForTheOpenKeyAlone(t *testing.T) {
	reg := newRegistry()
	primary, backup := newKeyedFake("x"), &backupBooks{}
	c := NewBooksChain(primary, reg, runtime.Fallback[Books]{Name: "backup", Impl: backup})

	ctx, p := runtime.WithProvenance(context.Background())
	got, err := c.Book(ctx, "x")
	require.NoError(t, err)
	assert.Equal(t, "backup:x", got, "the primary failed: the fallback answers")
	assert.Equal(t, "fallback:backup", p.Source)
	assert.Equal(t, runtime.Open, keyState(t, reg, "book/x"), "threshold=1: the key tripped")

	ctx, p = runtime.WithProvenance(context.Background())
	got, err = c.Book(ctx, "x")
	require.NoError(t, err)
	assert.Equal(t, "backup:x", got)
	assert.Equal(t, 1, primary.calls["x"], "the open key's primary is not called")
	require.Len(t, p.Skipped, 1)
	assert.Equal(t, "book/x", p.Skipped[0].Source)

	ctx, p = runtime.WithProvenance(context.Background())
	got, err = c.Book(ctx, "y")
	require.NoError(t, err)
	assert.Equal(t, "book:y", got, "another key is served by the primary")
	assert.Equal(t, "book/y", p.Source)
	assert.Equal(t, 2, backup.calls)
}

// TestKeyedHostRequestWithoutURL: a request without a URL is the wrapped
// transport's to refuse, with its own error, as it would be unwrapped; the
// wrapper keys it by "" and does not panic reading its host.
func TestKeyedHostRequestWithoutURL(t *testing.T) {
	reg := newRegistry()
	base := http.DefaultTransport.(*http.Transport).Clone()
	defer base.CloseIdleConnections()
	w := NewHostTransportBreaker(base, reg)
	_, want := base.RoundTrip(&http.Request{Method: http.MethodGet})
	require.Error(t, want)
	resp, err := w.RoundTrip(&http.Request{Method: http.MethodGet})
	assert.Nil(t, resp)
	assert.Equal(t, want, err)
	_, ok := reg.Lookup("hosts/")
	assert.True(t, ok, "the call is counted on key \"\"")
}

func TestKeyedHostTransportTripsTheFailingHostAlone(t *testing.T) {
	bad := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer bad.Close()
	var goodCalls int
	good := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		goodCalls++
		_, _ = io.WriteString(w, "ok")
	}))
	defer good.Close()
	reg := newRegistry()
	base := http.DefaultTransport.(*http.Transport).Clone()
	defer base.CloseIdleConnections()
	client := &http.Client{Transport: NewHostTransportBreaker(base, reg)}
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
	badHost, goodHost := hostOf(t, bad.URL), hostOf(t, good.URL)
	assert.Contains(t, err.Error(), "hosts/"+badHost)
	for range 5 {
		resp, err := get(good.URL)
		require.NoError(t, err, "the other host keeps being served")
		assert.Equal(t, http.StatusOK, resp.StatusCode)
	}
	assert.Equal(t, 5, goodCalls)
	assert.Equal(t, runtime.Open, keyState(t, reg, "hosts/"+badHost))
	assert.Equal(t, runtime.Closed, keyState(t, reg, "hosts/"+goodHost))
	h := reg.Health()
	require.Len(t, h.Families, 1)
	assert.Equal(t, 1, h.Families[0].Open)
}

func hostOf(t *testing.T, raw string) string {
	t.Helper()
	u, err := url.Parse(raw)
	require.NoError(t, err)
	return u.Host
}

// TestKeyedChainOfNilPrimaryFallsBack: a chain whose keyed primary is nil
// passes over it, its error saying so, as over an unkeyed nil primary.
func TestKeyedChainOfNilPrimaryFallsBack(t *testing.T) {
	backup := &backupBooks{}
	c := NewBooksChain(nil, newRegistry(), runtime.Fallback[Books]{Name: "backup", Impl: backup})
	ctx, p := runtime.WithProvenance(context.Background())
	got, err := c.Book(ctx, "x")
	require.NoError(t, err)
	assert.Equal(t, "backup:x", got)
	assert.Equal(t, "fallback:backup", p.Source)
	require.Len(t, p.Skipped, 1)
	assert.Equal(t, "book", p.Skipped[0].Source)
	assert.ErrorIs(t, p.Skipped[0].Err, breakerimpl.ErrNilImpl)
}
