// Package fakeupstream serves the market-data upstreams' HTTP API (the one
// [marketdata.Client] speaks) from canned data, for the example's demo and
// tests. Each provider can be told at run time to answer normally, fail
// with a status (5xx, a 403 ban, a 429 with Retry-After) or answer slowly,
// and the server counts the requests that reached each provider.
//
// [Server.Start] serves on a loopback port; [Server.Transport] serves
// in-process without sockets, so that code under test can run inside a
// testing/synctest bubble.
package fakeupstream

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/breakergen/breakergen/examples/marketdata"
)

// Providers lists the providers the server fakes, each under the path
// "/<provider>/".
var Providers = []string{marketdata.Eastmoney, marketdata.Tencent, marketdata.TDX, marketdata.Push2ex, marketdata.Sina}

// Behavior is how a provider answers.
type Behavior struct {
	// Status, when not 0 or 200, is the status every request gets, with a
	// JSON error body.
	Status int
	// RetryAfter, when positive, is sent as a Retry-After header in whole
	// seconds (with a failing Status).
	RetryAfter time.Duration
	// Delay, when positive, is how long each answer takes; a request whose
	// context ends first gets no answer.
	Delay time.Duration
	// Empty makes every successful answer an empty JSON object: a 200
	// with no data.
	Empty bool
	// Pattern, with a failing Status, says which requests fail: its
	// characters, repeated, map the requests since the behavior was set,
	// 'x' failing with Status and any other answering normally. An
	// upstream failing 1 request in 10 is ".........x"; empty fails every
	// request.
	Pattern string
}

// String describes the behavior, e.g. "429, Retry-After 2s" or "slow (1.5s)".
func (b Behavior) String() string {
	var parts []string
	if b.Status != 0 && b.Status != http.StatusOK {
		parts = append(parts, fmt.Sprintf("%d %s", b.Status, http.StatusText(b.Status)))
	} else {
		parts = append(parts, "200 OK")
	}
	if b.RetryAfter > 0 {
		parts = append(parts, fmt.Sprintf("Retry-After %s", b.RetryAfter))
	}
	if b.Delay > 0 {
		parts = append(parts, fmt.Sprintf("after %s", b.Delay))
	}
	if b.Empty {
		parts = append(parts, "empty answers")
	}
	if b.Pattern != "" && b.Status != 0 && b.Status != http.StatusOK {
		parts[0] = fmt.Sprintf("%d in %d: %s", strings.Count(b.Pattern, "x"), len(b.Pattern), parts[0])
	}
	return strings.Join(parts, ", ")
}

// Server is a fake of every upstream. Create one with [New]. A Server is
// safe for concurrent use.
type Server struct {
	counts map[string]*atomic.Int64 // per provider; the map is never written after New

	mu       sync.Mutex // guards behavior, since, srv, base
	behavior map[string]Behavior
	since    map[string]int64 // the request count when the behavior was set
	srv      *http.Server
	base     string
}

// New returns a server whose providers all answer normally. It serves
// nothing until [Server.Start], or through [Server.Transport].
func New() *Server {
	s := &Server{counts: map[string]*atomic.Int64{}, behavior: map[string]Behavior{}, since: map[string]int64{}, base: "http://upstream.test"}
	for _, p := range Providers {
		s.counts[p] = new(atomic.Int64)
	}
	return s
}

// Start serves on addr (":0" style addresses pick a free port; use
// "127.0.0.1:0") in the background and returns the base URL, e.g.
// "http://127.0.0.1:41234".
func (s *Server) Start(addr string) (string, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", err
	}
	srv := &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	s.mu.Lock()
	s.srv, s.base = srv, "http://"+ln.Addr().String()
	base := s.base
	s.mu.Unlock()
	go func() { _ = srv.Serve(ln) }()
	return base, nil
}

// Close stops serving, ending requests still in progress. It does nothing
// if the server was not started.
func (s *Server) Close() error {
	s.mu.Lock()
	srv := s.srv
	s.mu.Unlock()
	if srv == nil {
		return nil
	}
	return srv.Close()
}

// Endpoints returns the base URL of every provider: on the started
// server's port, or on a placeholder host that only [Server.Transport]
// reaches.
func (s *Server) Endpoints() marketdata.Endpoints {
	s.mu.Lock()
	base := s.base
	s.mu.Unlock()
	return marketdata.Endpoints{
		Eastmoney: base + "/" + marketdata.Eastmoney,
		Tencent:   base + "/" + marketdata.Tencent,
		TDX:       base + "/" + marketdata.TDX,
		Push2ex:   base + "/" + marketdata.Push2ex,
		Sina:      base + "/" + marketdata.Sina,
	}
}

// Client returns a [marketdata.Client] for this server: over loopback
// when it was started, in-process through [Server.Transport] otherwise.
func (s *Server) Client() *marketdata.Client {
	s.mu.Lock()
	started := s.srv != nil
	s.mu.Unlock()
	hc := &http.Client{Transport: &http.Transport{Proxy: nil, MaxIdleConnsPerHost: 16}}
	if !started {
		hc = &http.Client{Transport: s.Transport()}
	}
	return &marketdata.Client{HTTP: hc, Endpoints: s.Endpoints()}
}

// Transport returns a RoundTripper that hands each request straight to the
// server's handler on the caller's goroutine, without a socket: requests
// are counted and answered exactly as over the network, and a Delay waits
// on the request's context, so the whole exchange can run inside a
// testing/synctest bubble.
func (s *Server) Transport() http.RoundTripper { return roundTripper{s} }

type roundTripper struct{ s *Server }

// RoundTrip serves r with the server's handler on the caller's goroutine.
func (t roundTripper) RoundTrip(r *http.Request) (*http.Response, error) {
	if err := r.Context().Err(); err != nil {
		return nil, err
	}
	rec := httptest.NewRecorder()
	t.s.ServeHTTP(rec, r)
	if err := r.Context().Err(); err != nil {
		return nil, err
	}
	res := rec.Result()
	res.Request = r
	return res, nil
}

// Set makes provider answer as b from now on.
func (s *Server) Set(provider string, b Behavior) {
	s.mu.Lock()
	s.behavior[provider] = b
	s.since[provider] = s.Requests(provider)
	s.mu.Unlock()
}

// Behavior returns how provider answers now.
func (s *Server) Behavior(provider string) Behavior {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.behavior[provider]
}

// Healthy makes provider answer normally.
func (s *Server) Healthy(provider string) { s.Set(provider, Behavior{}) }

// Fail makes provider answer every request with status, e.g. 503.
func (s *Server) Fail(provider string, status int) { s.Set(provider, Behavior{Status: status}) }

// Ban makes provider answer 403 Forbidden, as eastmoney does to an IP it
// has banned (without a Retry-After).
func (s *Server) Ban(provider string) { s.Set(provider, Behavior{Status: http.StatusForbidden}) }

// Throttle makes provider answer 429 Too Many Requests with a Retry-After
// of retryAfter (whole seconds).
func (s *Server) Throttle(provider string, retryAfter time.Duration) {
	s.Set(provider, Behavior{Status: http.StatusTooManyRequests, RetryAfter: retryAfter})
}

// Slow makes provider answer normally, after delay.
func (s *Server) Slow(provider string, delay time.Duration) { s.Set(provider, Behavior{Delay: delay}) }

// Requests returns how many requests have reached provider, whatever the
// answer; 0 for an unknown provider.
func (s *Server) Requests(provider string) int64 {
	if c, ok := s.counts[provider]; ok {
		return c.Load()
	}
	return 0
}

// ServeHTTP serves GET /<provider>/<endpoint>.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	provider, endpoint, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
	count, ok := s.counts[provider]
	if !ok {
		writeError(w, http.StatusNotFound, "no such provider")
		return
	}
	n := count.Add(1)
	s.mu.Lock()
	b, since := s.behavior[provider], s.since[provider]
	s.mu.Unlock()
	if p := b.Pattern; p != "" && p[(n-since-1)%int64(len(p))] != 'x' {
		b.Status, b.RetryAfter = 0, 0 // one of the requests that answer
	}
	if b.Delay > 0 {
		t := time.NewTimer(b.Delay)
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
			return
		}
	}
	if b.Status != 0 && b.Status != http.StatusOK {
		if b.RetryAfter > 0 {
			w.Header().Set("Retry-After", strconv.Itoa(int((b.RetryAfter+time.Second-1)/time.Second)))
		}
		writeError(w, b.Status, http.StatusText(b.Status))
		return
	}
	if r.Method != http.MethodGet {
		writeError(w, http.StatusMethodNotAllowed, "GET only")
		return
	}
	v, status := answer(provider, endpoint, r.URL.Query())
	if status != http.StatusOK {
		writeError(w, status, http.StatusText(status))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	if b.Empty {
		v = struct{}{}
	}
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": msg})
}
