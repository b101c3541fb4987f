// Package httpguard is what a breakergen wrapper of an http.RoundTripper
// (or of any method answering an *http.Response) needs beyond package
// runtime: a failure func telling a failed response from a good one, for
// the annotation key failure, and the helpers generated code calls to
// keep a timeout's ctx alive while the body is read and to dispose of a
// response that a retry replaced.
//
//	//breaker:name=api threshold=3 reset=30s timeout=2s failure=httpguard.Failure
//	type Transport interface {
//		RoundTrip(req *http.Request) (*http.Response, error)
//	}
//
// A response that [Failure] judges a failure counts as one for the
// breaker, and is still returned to the caller unchanged: the caller owns
// its body, as with any http.RoundTripper, and the wrapper never reads or
// closes it.
//
// It is a package of its own because package runtime imports nothing
// beyond the standard library's core, and net/http is heavy to link into
// programs that never use it.
package httpguard

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"
)

// MaxRetryAfter caps the wait a Retry-After header can ask for, as
// runtime.MaxCooldown caps every cooldown.
const MaxRetryAfter = 24 * time.Hour

// StatusError is the failure [Failure] makes of a response with a 5xx or
// 429 status. It has no RetryAfter method, so a route with attempts
// retries it.
type StatusError struct {
	Code   int    // the status code, 503
	Status string // the status line's text, "503 Service Unavailable"
}

func (e *StatusError) Error() string { return "http status " + e.Status }

// RetryAfterError is the failure [Failure] makes of a 429 or 503 response
// with a Retry-After header: RetryAfter() is the wait it asks for (capped
// at [MaxRetryAfter]), so the breaker opens at once for that long (the
// cooldown of breakergen's SPEC §5) and a route with attempts does not
// retry it. errors.As finds its *StatusError too.
type RetryAfterError struct {
	StatusError
	After time.Duration
}

func (e *RetryAfterError) Error() string {
	return "http status " + e.Status + " (retry after " + e.After.String() + ")"
}

// RetryAfter returns the wait the response asked for.
func (e *RetryAfterError) RetryAfter() time.Duration { return e.After }

// Unwrap returns the *StatusError.
func (e *RetryAfterError) Unwrap() error { return &e.StatusError }

// Failure is the failure func for responses: nil for a nil response and
// for every status below 500 but 429 (Too Many Requests); for 5xx and 429
// a [*StatusError], or, when a 429 or 503 says how long to wait in a
// Retry-After header (seconds, or an HTTP date), a [*RetryAfterError].
// It reads only the status and the header, never the body.
func Failure(resp *http.Response) error {
	if resp == nil || resp.StatusCode < 500 && resp.StatusCode != http.StatusTooManyRequests {
		return nil
	}
	se := StatusError{Code: resp.StatusCode, Status: resp.Status}
	if se.Status == "" {
		se.Status = strconv.Itoa(resp.StatusCode) + " " + http.StatusText(resp.StatusCode)
	}
	if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable {
		if d := RetryAfter(resp.Header.Get("Retry-After"), time.Now()); d > 0 {
			return &RetryAfterError{StatusError: se, After: d}
		}
	}
	return &se
}

// RetryAfter parses the value of a Retry-After header, seconds ("120") or
// an HTTP date, into a wait from now, capped at [MaxRetryAfter] (also a
// number of seconds too large for an int64); 0 for a value that is empty,
// malformed or in the past.
func RetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if errors.Is(err, strconv.ErrRange) {
		err = nil // seconds all the same: the sign says which end
	}
	if err == nil {
		if n <= 0 {
			return 0
		}
		if n >= int64(MaxRetryAfter/time.Second) {
			return MaxRetryAfter
		}
		return time.Duration(n) * time.Second
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0
	}
	return min(max(t.Sub(now), 0), MaxRetryAfter)
}

// Host is what a method annotated key=host keys its breaker by (SPEC §15):
// the host of req's URL, or "" for a request without a URL, which the
// wrapped client then refuses with an error of its own (an http.Client's
// "http: nil Request.URL"), counted on that key. (Host of a nil req is ""
// too; a method whose ctx comes from the request answers a nil one with
// breakerimpl.ErrNilArg before it asks for a key.)
func Host(req *http.Request) string {
	if req == nil || req.URL == nil {
		return ""
	}
	return req.URL.Host
}

// CancelOnClose is for generated code: it ties the cancel of a timeout's
// ctx (or of a hedged race's winning source) to resp's body, which the
// caller reads after the call returned. The cancel runs when the body is
// closed or read to its end, or at once when there is no body to read
// (resp or its Body nil). It returns resp.
//
// A 101 Switching Protocols (a WebSocket's, h2c's upgrade) is returned as
// it is, its ctx cancelled at once: its Body is the connection itself, an
// io.ReadWriteCloser that net/http hands over and that
// httputil.ReverseProxy writes to (a read-only wrapper would make it
// answer 502), and the call is over once the protocol switched. net/http
// does not tie the upgraded connection to the request's ctx, so it lives
// on past the cancel, and past the timeout's deadline.
func CancelOnClose(resp *http.Response, cancel context.CancelFunc) *http.Response {
	if resp == nil || resp.Body == nil || resp.Body == http.NoBody || resp.StatusCode == http.StatusSwitchingProtocols {
		cancel()
		return resp
	}
	resp.Body = &cancelBody{rc: resp.Body, cancel: cancel}
	return resp
}

// cancelBody cancels a ctx once its body is done with, as http.Client's
// own timeout does.
type cancelBody struct {
	rc     io.ReadCloser
	cancel context.CancelFunc
}

func (b *cancelBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	if err == io.EOF {
		b.cancel()
	}
	return n, err
}

func (b *cancelBody) Close() error {
	err := b.rc.Close()
	b.cancel()
	return err
}

// drainLimit is the most of a body [Discard] reads so that the connection
// can be reused, and drainWait how long it waits for those bytes.
const (
	drainLimit = 4 << 10
	drainWait  = 100 * time.Millisecond
)

// Discard drains a little of resp's body (so that its connection can be
// reused) and closes it: for a response that no caller will see. Generated
// code calls it on the answer of a try that a retry replaces, and of a
// source that a chain passes over.
//
// It reads at most 4 KiB, none when the body is declared longer (its
// connection cannot be reused then) or was gzipped and is decompressed by
// the transport (resp.Uncompressed: its reader holds a lock while it
// waits for the gzip header, which its Close waits for), and waits at
// most 100ms for them: a failing upstream's error page that stalls
// half-sent (a proxy whose own upstream died) would otherwise hold the
// retry, or the chain's next source, until the caller's ctx ends, which
// with context.Background is never. Past the wait it closes the body in
// a goroutine of its own, beside the read, and returns: the close ends
// the read for net/http's bodies (and any body whose Close unblocks a
// Read, as a net.Conn's does), and the connection is not reused then.
func Discard(resp *http.Response) {
	if resp == nil || resp.Body == nil {
		return
	}
	body := resp.Body
	if resp.ContentLength > drainLimit || resp.Uncompressed {
		_ = body.Close()
		return
	}
	drained := make(chan struct{})
	go func() {
		_, _ = io.CopyN(io.Discard, body, drainLimit)
		close(drained)
	}()
	t := time.NewTimer(drainWait)
	select {
	case <-drained:
		t.Stop()
		_ = body.Close()
	case <-t.C:
		go func() { _ = body.Close() }() // a Close that waits on the read must not hold the caller
	}
}

// Drop closes resp's body without reading it: for an answer that a hedged
// race does not return, which must not wait on a slow body (Discard's
// drain would hold the race, and every source's answer, until it ends).
// The connection is not reused when unread bytes remain.
func Drop(resp *http.Response) {
	if resp != nil && resp.Body != nil {
		_ = resp.Body.Close()
	}
}

// ErrUnrewindable is why a request was not sent again: its body was read
// by an earlier try or source, and it has no GetBody to read it again.
// http.NewRequest sets GetBody for a *bytes.Buffer, *bytes.Reader or
// *strings.Reader body; set it yourself for another body that can be
// read twice.
var ErrUnrewindable = errors.New("httpguard: the request's body was sent once, and it has no GetBody to send it again")

// Rewind returns req ready to be sent again, by a retry or by a chain's
// next source, after an earlier try may have read its body: req itself
// when it has no body, and otherwise a shallow copy of it whose Body is
// read again through GetBody, as net/http does before it retries a
// request. It returns req and [ErrUnrewindable] when the body cannot be
// read again (no GetBody): generated code then makes no further try with
// it.
//
// GetBody is called when the copy's body is first read, not before: a
// copy that is never sent (its try refused by a breaker or a budget)
// opens nothing and holds nothing. An error of GetBody is the error of
// that read, matching ErrUnrewindable, and so the try's.
func Rewind(req *http.Request) (*http.Request, error) {
	if req == nil || req.Body == nil || req.Body == http.NoBody {
		return req, nil
	}
	if req.GetBody == nil {
		return req, ErrUnrewindable
	}
	again := *req
	again.Body = &rewound{get: req.GetBody}
	return &again, nil
}

// rewound is a request body read again through get, called on the first
// Read. The transport may Close it from another goroutine than the one
// reading it.
type rewound struct {
	get func() (io.ReadCloser, error)

	mu     sync.Mutex // guards rc, err, closed
	rc     io.ReadCloser
	err    error
	closed bool
}

func (b *rewound) Read(p []byte) (int, error) {
	b.mu.Lock()
	if b.rc == nil && b.err == nil {
		switch {
		case b.closed:
			b.err = http.ErrBodyReadAfterClose
		default:
			if b.rc, b.err = b.get(); b.err != nil {
				b.rc, b.err = nil, fmt.Errorf("%w: GetBody: %w", ErrUnrewindable, b.err)
			}
		}
	}
	rc, err := b.rc, b.err
	b.mu.Unlock()
	if err != nil {
		return 0, err
	}
	return rc.Read(p)
}

func (b *rewound) Close() error {
	b.mu.Lock()
	rc := b.rc
	b.closed = true
	b.mu.Unlock()
	if rc == nil {
		return nil // never read: nothing was opened
	}
	return rc.Close()
}

// Shared is a request's body as the racing sources of a hedged call
// share it (see [Share]).
type Shared struct{ sent atomic.Bool }

// Share prepares req to be sent by the racing sources of one hedged call
// (generated code): nil when req has no body, which every source sends as
// it is; otherwise a Shared that gives the body itself to the first
// source to take it ([Take]) and a copy read again through GetBody to
// each other.
func Share(req *http.Request) *Shared {
	if req == nil || req.Body == nil || req.Body == http.NoBody {
		return nil
	}
	return new(Shared)
}

// Take returns the request that one racing source, or one try of it,
// sends (see [Share]): req itself when it has no body, or to the first
// that takes it; to every other, a copy whose body is read again through
// GetBody, called now, so that no two sources read one body; or, without
// GetBody or when it fails, an error matching [ErrUnrewindable], and that
// source sends nothing. GetBody may be called by several sources at once:
// http.NewRequest's is safe for that.
func Take(req *http.Request, sh *Shared) (*http.Request, error) {
	if sh == nil || sh.sent.CompareAndSwap(false, true) {
		return req, nil
	}
	if req.GetBody == nil {
		return req, ErrUnrewindable
	}
	// Opened now, not at the first Read as Rewind's copy is: the source
	// sends it at once, and a GetBody that fails must send nothing (the
	// transport would have written the headers before the first Read).
	body, err := req.GetBody()
	if err != nil {
		return req, fmt.Errorf("%w: GetBody: %w", ErrUnrewindable, err)
	}
	again := *req
	again.Body = body
	return &again, nil
}

// Unsent reports why no other source of a hedged call can send req (see
// [Share]): [ErrUnrewindable] once a source took its body, which has no
// GetBody; nil otherwise. A race asks before it admits a try.
func Unsent(req *http.Request, sh *Shared) error {
	if sh != nil && req.GetBody == nil && sh.sent.Load() {
		return ErrUnrewindable
	}
	return nil
}

// Unshare ends a hedged call's use of req (see [Share]) once its race has
// ended: it closes req's body when no source took it, as a RoundTripper
// must; a source that took it passed it on to be closed.
func Unshare(req *http.Request, sh *Shared) {
	if sh != nil && !sh.sent.Load() {
		_ = req.Body.Close()
	}
}

// OnContext reports whether req was made on ctx (its Context is ctx):
// a hedged Do(ctx, req) then sends each source's request on the source's
// ctx, so that a loser is cancelled even when the source sends req as it
// is, and a Do(ctx, req) with a timeout sends it on the timeout's ctx, so
// that the timeout cuts such a source too; a request on a ctx of its own
// keeps it, with its deadline and values. False for a nil req.
//
// It never panics, where req.Context() == ctx does when both hold one
// type that == cannot compare (a struct with a slice, carried by value):
// such a ctx is req's only when req holds the very interface value ctx
// is (the same dynamic type and data pointer), as when req was made on
// the ctx variable the caller passes on.
func OnContext(req *http.Request, ctx context.Context) bool {
	if req == nil {
		return false
	}
	c := req.Context()
	x, y := *(*iface)(unsafe.Pointer(&c)), *(*iface)(unsafe.Pointer(&ctx))
	// The same type and data words are the same value, decided without
	// reflect (the common case: req made on the ctx passed on); two
	// dynamic types are never equal.
	return x.typ == y.typ && (x.data == y.data || equalContext(c, ctx))
}

// iface is the layout of an interface value: its type (or itab) word and
// its data word.
type iface struct{ typ, data unsafe.Pointer }

// equalContext reports whether a == b, for a and b of one dynamic type
// but two data words: false for two pointers (the data words are the
// pointers: the usual ctx, a *cancelCtx made on another), and false,
// without comparing, when the value cannot be compared (its type, or the
// dynamic type of an interface inside it, is not comparable), where ==
// would panic.
func equalContext(a, b context.Context) bool {
	if reflect.TypeOf(a).Kind() == reflect.Pointer {
		return false
	}
	return reflect.ValueOf(a).Comparable() && a == b
}

// CloseBody closes req's body, if it has one: for a call refused before
// any try sent the request. A RoundTripper must close the body even when
// it fails, and http.Client.Do promises the same of its Transport; an
// upload through an io.Pipe would otherwise block its writer for ever.
func CloseBody(req *http.Request) {
	if req != nil && req.Body != nil {
		_ = req.Body.Close()
	}
}

// CloseReader closes body when it is an io.Closer: for a call refused
// before any try sent it, of a method that takes the body as a reader and
// answers an *http.Response, as http.Client's Post does ("if the provided
// body is an io.Closer, it is closed after the request"), which a refused
// upload of a file would otherwise leave open. A nil body, or a nil
// pointer in it, is left alone.
func CloseReader(body io.Reader) {
	c, ok := body.(io.Closer)
	if !ok || c == nil {
		return
	}
	if v := reflect.ValueOf(c); v.Kind() == reflect.Pointer && v.IsNil() {
		return
	}
	_ = c.Close()
}
