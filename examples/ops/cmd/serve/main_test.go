package main

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/breakergen/breakergen/examples/marketdata/demo"
	"github.com/breakergen/breakergen/runtime"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func get(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
	return string(body)
}

func TestMountMetricsBesideTheDashboard(t *testing.T) {
	reg := runtime.NewRegistry(runtime.WithoutEnv(), runtime.WithLogger(slog.New(slog.DiscardHandler)))
	tdx := reg.Breaker(runtime.Config{Name: "tdx", FailureThreshold: 1})
	require.Error(t, tdx.Do(context.Background(), func(context.Context) error { return errors.New("down") }))
	mux := demo.HealthMux(reg)
	mountMetrics(mux, reg)
	srv := httptest.NewServer(mux)
	defer srv.Close()

	metrics := get(t, srv.URL+"/metrics")
	assert.Contains(t, metrics, `breakergen_breaker_state{breaker="tdx",state="open"} 1`+"\n")
	assert.Contains(t, metrics, `breakergen_breaker_transitions_total{breaker="tdx",from="closed",to="open"} 1`+"\n")
	assert.Contains(t, get(t, srv.URL+"/health/datasources"), `"name": "tdx"`)
}

// addressWriter is the demo's stdout: it keeps what is written and sends
// the served address once the demo prints it.
type addressWriter struct {
	mu   sync.Mutex
	buf  []byte
	addr chan string
	sent bool
}

var dashboardLine = regexp.MustCompile(`dashboard +http://([^/\s]+)/health/`)

func (w *addressWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	if m := dashboardLine.FindSubmatch(w.buf); m != nil && !w.sent {
		w.sent = true
		w.addr <- string(m[1])
	}
	return len(p), nil
}

// TestMainServesMetrics plays the whole demo (a few seconds of real time
// against the fake upstream on loopback) and scrapes /metrics on the port
// it serves.
func TestMainServesMetrics(t *testing.T) {
	if testing.Short() {
		t.Skip("plays the demo in real time; skipped with -short")
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	out := &addressWriter{addr: make(chan string, 1)}
	done := make(chan error, 1)
	go func() {
		done <- demo.Main(ctx, []string{"-reset", "200ms", "-serve", "127.0.0.1:0"}, out, io.Discard, mountMetrics)
	}()

	var addr string
	select {
	case addr = <-out.addr:
	case err := <-done:
		t.Fatalf("the demo ended before serving: %v\n%s", err, out.buf)
	case <-time.After(2 * time.Minute): // a bound on a hang, not a wait for something
		t.Fatal("the demo did not serve within 2 minutes")
	}
	metrics := get(t, "http://"+addr+"/metrics")
	// The scenario's tdx outage tripped tdx, and every breaker ended CLOSED.
	assert.Regexp(t, `(?m)^breakergen_breaker_transitions_total\{breaker="tdx",from="closed",to="open"\} [1-9]`, metrics)
	assert.Contains(t, metrics, `breakergen_breaker_state{breaker="tdx",state="closed"} 1`+"\n")
	assert.Regexp(t, `(?m)^breakergen_breaker_calls_total\{breaker="tdx",outcome="failure"\} [1-9]`, metrics)
	assert.NotContains(t, metrics, `outcome="success"`, "the demo does not count every call")
	assert.Regexp(t, `(?m)^breakergen_breaker_calls_total\{breaker="tdx",outcome="rejected"\} [1-9]`, metrics,
		"the calls OPEN tdx refused, counted all the same")
	assert.Contains(t, get(t, "http://"+addr+"/health/datasources"), `"name": "tdx"`)

	cancel()
	require.NoError(t, <-done)
}
