package httphealth

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/breakergen/breakergen/runtime"
)

// The paths a [Handler] serves, relative to where it is mounted.
const (
	// PathDatasources serves the registry's [runtime.Health] as JSON.
	PathDatasources = "/health/datasources"
	// PathEvents serves the degradation log as a JSON array, newest first.
	PathEvents = "/health/degradation-events"
	// PathDashboard serves the operator dashboard, an HTML page.
	PathDashboard = "/health/"
)

// DefaultRefresh is how often the dashboard refreshes itself unless
// [WithRefresh] says otherwise.
const DefaultRefresh = 5 * time.Second

// DefaultTitle is the dashboard's title unless [WithTitle] says otherwise.
const DefaultTitle = "Data source health"

// DefaultMaxLimit is the most events one answer of [PathEvents] holds
// unless [WithMaxLimit] says otherwise: a larger limit is cut to it.
const DefaultMaxLimit = 1000

// defaultLimit is how many events [PathEvents] answers with when the
// request gives no limit, or 0: the registry's default.
const defaultLimit = 50

// Handler serves the health endpoints and the dashboard of one
// [runtime.Registry]. Create one with [New]; the zero value serves
// [runtime.Default] with every default. A Handler is safe for concurrent
// use.
type Handler struct {
	reg   *runtime.Registry
	clock runtime.Clock
	names map[string]string // breaker name → display name
	every time.Duration     // dashboard refresh interval
	title string
	max   int // most events per answer
	cache renderCache
	ctl   *control // nil without WithControl
}

// Option configures a [Handler].
type Option func(*Handler)

// WithDisplayName registers display, a name for people such as
// "东方财富 East Money", for the breaker called name. The dashboard shows it
// for that breaker, for the breakers whose name ends in ":"+name (such as
// "fallback:eastmoney") and for those whose name, after any such prefix,
// starts with name+"_" (such as "eastmoney_kline"), unless they have a
// display name of their own. A family's key, "<family>/<key>", shows as
// its family's display name and the key ("东方财富/600519"). The JSON
// endpoints always report bare breaker names. An empty name or display is
// ignored.
func WithDisplayName(name, display string) Option {
	return func(h *Handler) {
		if name != "" && display != "" {
			h.names[name] = display
		}
	}
}

// WithClock sets the clock the handler reads the current time from: the
// time the dashboard and the Date header of every answer report, from
// which the dashboard counts down to the next probe. Give it the clock
// given to the registry with [runtime.WithClock]. Default: the real clock.
// A nil clock is ignored.
func WithClock(c runtime.Clock) Option {
	return func(h *Handler) {
		if c != nil {
			h.clock = c
		}
	}
}

// WithRefresh sets how often the dashboard refreshes itself from the JSON
// endpoints. Default [DefaultRefresh]; values below 100ms are ignored.
func WithRefresh(d time.Duration) Option {
	return func(h *Handler) {
		if d >= 100*time.Millisecond {
			h.every = d
		}
	}
}

// WithTitle sets the dashboard's title. Default [DefaultTitle]; an empty
// title is ignored.
func WithTitle(title string) Option {
	return func(h *Handler) {
		if title != "" {
			h.title = title
		}
	}
}

// WithMaxLimit sets the most events one answer of [PathEvents] holds: a
// request for more gets this many (the registry keeps at most its
// capacity anyway, 100 unless [runtime.WithEventCapacity] says otherwise).
// It bounds what one request can cost a server whose registry keeps many
// events. Default [DefaultMaxLimit]; values below 1 are ignored.
func WithMaxLimit(n int) Option {
	return func(h *Handler) {
		if n >= 1 {
			h.max = n
		}
	}
}

// New returns a Handler for reg, or for [runtime.Default] when reg is nil.
func New(reg *runtime.Registry, opts ...Option) *Handler {
	if reg == nil {
		reg = runtime.Default()
	}
	h := &Handler{
		reg:   reg,
		clock: realClock{},
		names: map[string]string{},
		every: DefaultRefresh,
		title: DefaultTitle,
		max:   DefaultMaxLimit,
	}
	for _, o := range opts {
		if o != nil {
			o(h)
		}
	}
	return h
}

// registry, now, refresh and pageTitle read the settings, with the
// defaults for a zero Handler.
func (h *Handler) registry() *runtime.Registry {
	if h.reg == nil {
		return runtime.Default()
	}
	return h.reg
}

func (h *Handler) now() time.Time {
	if h.clock == nil {
		return time.Now()
	}
	return h.clock.Now()
}

func (h *Handler) refresh() time.Duration {
	if h.every <= 0 {
		return DefaultRefresh
	}
	return h.every
}

func (h *Handler) maxLimit() int {
	if h.max <= 0 {
		return DefaultMaxLimit
	}
	return h.max
}

func (h *Handler) pageTitle() string {
	if h.title == "" {
		return DefaultTitle
	}
	return h.title
}

type realClock struct{}

func (realClock) Now() time.Time                                    { return time.Now() }
func (realClock) AfterFunc(d time.Duration, f func()) runtime.Timer { return time.AfterFunc(d, f) }

// ServeHTTP routes the request by its path: see [PathDatasources],
// [PathEvents] and [PathDashboard], and with [WithControl] the controls
// under PathDatasources. "/health" redirects to "health/". GET and HEAD are
// allowed (POST only, and only, for the controls); every other method gets
// 405 Method Not Allowed, every other path 404 Not Found, a bad query (a
// parameter the endpoint does not read among them) 400 Bad Request, each
// with a JSON body {"error": "..."}. Every answer carries
// Cache-Control: no-store.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r == nil || r.URL == nil {
		h.writeError(w, r, http.StatusBadRequest, "no request")
		return
	}
	if name, action, ok := h.controlPath(r.URL.Path); ok {
		h.serveControl(w, r, name, action)
		return
	}
	var serve func(http.ResponseWriter, *http.Request, url.Values)
	var params []string // the query parameters the endpoint reads
	switch r.URL.Path {
	case PathDatasources:
		serve, params = h.serveDatasources, []string{"page", "q", "family"}
	case PathEvents:
		serve, params = h.serveEvents, []string{"limit", "since", "source", "page"}
	case PathDashboard:
		serve, params = h.serveDashboard, []string{"page", "q"}
	case "/health":
		serve, params = h.redirectDashboard, []string{"page", "q"} // the dashboard's: the redirect keeps them
	default:
		msg := fmt.Sprintf("no such endpoint: %q; try %s, %s or %s", r.URL.Path, PathDatasources, PathEvents, PathDashboard)
		if strings.HasSuffix(r.URL.Path, PathDatasources) || strings.HasSuffix(r.URL.Path, PathEvents) || strings.HasSuffix(r.URL.Path, PathDashboard) {
			msg += fmt.Sprintf(" (mounted under a prefix? serve the handler through http.StripPrefix(%q, ...))", strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(r.URL.Path, PathDatasources), PathEvents), PathDashboard))
		}
		h.writeError(w, r, http.StatusNotFound, msg)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		h.writeError(w, r, http.StatusMethodNotAllowed, fmt.Sprintf("method %s not allowed; use GET or HEAD", r.Method))
		return
	}
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		h.writeError(w, r, http.StatusBadRequest, "malformed query: "+err.Error())
		return
	}
	if msg := unknownParam(q, "query parameter", r.URL.Path, params); msg != "" {
		h.writeError(w, r, http.StatusBadRequest, msg)
		return
	}
	serve(w, r, q)
}

// unknownParam returns the error for the first name of q, in name order,
// that the endpoint does not read, or "": an ignored one (source misspelt,
// the dashboard's ?family=, or a control's resaon=) would answer as
// though nothing had been asked, which a reader takes for the answer
// asked for. what says what q holds ("query parameter", "form field"),
// endpoint names the endpoint, params are the names it reads. A name that
// starts with "_" is let through unread: the cache buster (?_=1733312345)
// that some clients and monitors add, a web framework's _csrf field.
func unknownParam(q url.Values, what, endpoint string, params []string) string {
	names := make([]string, 0, len(q))
	for name := range q {
		if !slices.Contains(params, name) && !strings.HasPrefix(name, "_") {
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		return ""
	}
	slices.Sort(names)
	msg := fmt.Sprintf("unknown %s %q; %s takes ", what, names[0], endpoint)
	if len(params) == 0 {
		return msg + "no " + what
	}
	for i, p := range params {
		switch {
		case i == 0:
		case i == len(params)-1:
			msg += " and "
		default:
			msg += ", "
		}
		msg += p
	}
	if near := nearParam(names[0], params); near != "" {
		msg += fmt.Sprintf(" (did you mean %s?)", near)
	}
	return msg
}

// nearParam returns the parameter of params that name is a plural, a
// change of case, one edit or two swapped neighbours away from, or "".
func nearParam(name string, params []string) string {
	lower := strings.ToLower(name)
	for _, p := range params {
		// One edit of a one-letter name is any other letter: ?x=1 is
		// no misspelt q.
		if lower == p || lower == p+"s" || len(lower) > 1 && len(p) > 1 && editOne(lower, p) || swapOne(lower, p) {
			return p
		}
	}
	return ""
}

// editOne reports whether a and b differ by one inserted, deleted or
// replaced byte.
func editOne(a, b string) bool {
	if len(a) < len(b) {
		a, b = b, a
	}
	if len(a)-len(b) > 1 {
		return false
	}
	i := 0
	for i < len(b) && a[i] == b[i] {
		i++
	}
	if i == len(a) {
		return false // a == b
	}
	if len(a) == len(b) {
		return a[i+1:] == b[i+1:]
	}
	return a[i+1:] == b[i:]
}

// swapOne reports whether a is b with two neighbouring bytes swapped, the
// commonest typo (resaon, limti).
func swapOne(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	i := 0
	for i < len(a) && a[i] == b[i] {
		i++
	}
	return i+1 < len(a) && a[i] == b[i+1] && a[i+1] == b[i] && a[i+2:] == b[i+2:]
}

func (h *Handler) serveDatasources(w http.ResponseWriter, r *http.Request, q url.Values) {
	req, err := parsePage(q)
	if err != nil {
		h.writeError(w, r, http.StatusBadRequest, err.Error())
		return
	}
	if req.paged {
		p, ok := h.breakerPage(req)
		if !ok {
			h.writeError(w, r, http.StatusNotFound, fmt.Sprintf("no family of per-key breakers called %q", req.family))
			return
		}
		h.writeJSON(w, r, http.StatusOK, p)
		return
	}
	h.writeJSON(w, r, http.StatusOK, h.registry().Health())
}

// eventJSON is the wire form of a [runtime.Event]: its timestamp in RFC 3339
// at second precision, in UTC.
type eventJSON struct {
	Timestamp string        `json:"timestamp"`
	Source    string        `json:"source"`
	From      runtime.State `json:"from_state"`
	To        runtime.State `json:"to_state"`
	Reason    string        `json:"reason"`
}

func (h *Handler) serveEvents(w http.ResponseWriter, r *http.Request, q url.Values) {
	limit, err := parseLimit(q)
	if err != nil {
		h.writeError(w, r, http.StatusBadRequest, err.Error())
		return
	}
	if limit == 0 {
		limit = defaultLimit
	}
	filter, err := parseEventFilter(q, min(limit, h.maxLimit()))
	if err != nil {
		h.writeError(w, r, http.StatusBadRequest, err.Error())
		return
	}
	evs, more := h.events(filter)

	// The array is written one event at a time, in the layout writeJSON
	// gives, so that no answer is ever built whole.
	h.setCommon(w)
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	if more {
		w.Header().Set(MoreEventsHeader, "true")
	}
	bw := &bodyWriter{w: w, head: r.Method == http.MethodHead, status: http.StatusOK}
	if len(evs) == 0 {
		bw.writeString("[]\n")
		bw.close()
		return
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("  ", "  ")
	sep := "[\n  "
	for _, ev := range evs {
		buf.Reset()
		buf.WriteString(sep)
		// An eventJSON holds strings and states only: it always encodes.
		_ = enc.Encode(eventJSON{
			Timestamp: formatTimestamp(ev.Time),
			Source:    ev.Source,
			From:      ev.From,
			To:        ev.To,
			Reason:    ev.Reason,
		})
		buf.Truncate(buf.Len() - 1) // the Encoder's newline
		if !bw.write(buf.Bytes()) {
			return // the client is gone
		}
		sep = ",\n  "
	}
	bw.writeString("\n]\n")
	bw.close()
}

// spillSize is how much of an answer a [bodyWriter] keeps before it starts
// streaming.
const spillSize = 32 << 10

// bodyWriter writes an answer whose length is known only at its end. It
// keeps the first spillSize bytes, so that a short answer goes out in one
// write with its Content-Length; past that it sends the headers and
// streams the rest (chunked, under HTTP/1.1). For HEAD it counts the bytes
// and writes none, so that the Content-Length is what GET would send.
type bodyWriter struct {
	w         http.ResponseWriter
	head      bool
	status    int
	buf       []byte
	n         int  // bytes counted, for HEAD
	streaming bool // the headers are sent
	failed    bool // a write failed: the client is gone
}

// write writes p and reports whether the client can still take more.
func (b *bodyWriter) write(p []byte) bool {
	switch {
	case b.failed:
		return false
	case b.head:
		b.n += len(p)
	case b.streaming:
		if _, err := b.w.Write(p); err != nil {
			b.failed = true
		}
	default:
		b.buf = append(b.buf, p...)
		if len(b.buf) > spillSize {
			b.streaming = true
			b.w.WriteHeader(b.status)
			_, err := b.w.Write(b.buf)
			b.buf = nil
			b.failed = err != nil
		}
	}
	return !b.failed
}

func (b *bodyWriter) writeString(s string) bool { return b.write([]byte(s)) }

// close sends what is left: the whole answer with its length when it never
// spilled.
func (b *bodyWriter) close() {
	switch {
	case b.streaming:
	case b.head:
		b.w.Header().Set("Content-Length", strconv.Itoa(b.n))
		b.w.WriteHeader(b.status)
	default:
		b.w.Header().Set("Content-Length", strconv.Itoa(len(b.buf)))
		b.w.WriteHeader(b.status)
		_, _ = b.w.Write(b.buf)
	}
}

// formatTimestamp formats t in RFC 3339 at second precision, in UTC.
func formatTimestamp(t time.Time) string {
	return t.UTC().Format(time.RFC3339)
}

// parseLimit reads the limit parameter: absent or 0 means the default
// (50); a value above the maximum ([WithMaxLimit]) or the log's capacity is
// cut by the caller; anything but one whole number >= 0 is an error.
func parseLimit(q url.Values) (int, error) {
	vs, ok := q["limit"]
	if !ok {
		return 0, nil
	}
	if len(vs) != 1 {
		return 0, fmt.Errorf("limit given %d times; give it once", len(vs))
	}
	n, err := strconv.Atoi(vs[0])
	if err != nil && !errors.Is(err, strconv.ErrRange) { // out of range: n is clamped
		return 0, fmt.Errorf("limit %q is not a whole number", vs[0])
	}
	if n < 0 {
		return 0, fmt.Errorf("limit %q is negative; give 0 (the default, 50) or more", vs[0])
	}
	return n, nil
}

func (h *Handler) redirectDashboard(w http.ResponseWriter, r *http.Request, _ url.Values) {
	// A relative reference, so that the redirect keeps whatever prefix the
	// handler is mounted under (http.Redirect would make it absolute from
	// the stripped path).
	target := "health/"
	if r.URL.RawQuery != "" {
		target += "?" + r.URL.RawQuery
	}
	h.setCommon(w)
	w.Header().Set("Location", target)
	w.WriteHeader(http.StatusMovedPermanently)
}

// ServerTimeHeader is the header in which every answer gives the handler's
// clock reading in RFC 3339 with milliseconds. The dashboard counts down
// to the next probe from it, as the Date header has whole seconds only
// and the browser's clock may be off.
const ServerTimeHeader = "X-Server-Time"

// setCommon sets the headers of every answer.
func (h *Handler) setCommon(w http.ResponseWriter) {
	now := h.now().UTC()
	hd := w.Header()
	hd.Set("Cache-Control", "no-store")
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Date", now.Format(http.TimeFormat))
	hd.Set(ServerTimeHeader, now.Format("2006-01-02T15:04:05.000Z07:00"))
}

// writeJSON writes v as indented JSON with status; HEAD gets the headers
// only.
func (h *Handler) writeJSON(w http.ResponseWriter, r *http.Request, status int, v any) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		buf.Reset()
		status = http.StatusInternalServerError
		_ = json.NewEncoder(&buf).Encode(errorJSON{Error: "encoding the answer: " + err.Error()})
	}
	h.write(w, r, status, "application/json; charset=utf-8", buf.Bytes())
}

type errorJSON struct {
	Error string `json:"error"`
}

func (h *Handler) writeError(w http.ResponseWriter, r *http.Request, status int, msg string) {
	h.writeJSON(w, r, status, errorJSON{Error: msg})
}

func (h *Handler) write(w http.ResponseWriter, r *http.Request, status int, contentType string, body []byte) {
	h.setCommon(w)
	hd := w.Header()
	hd.Set("Content-Type", contentType)
	hd.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	if r == nil || r.Method != http.MethodHead {
		_, _ = w.Write(body)
	}
}
