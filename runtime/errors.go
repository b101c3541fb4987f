package runtime

import (
	"errors"
	"fmt"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

var (
	// ErrOpen matches (with errors.Is) every call that a breaker rejected,
	// in the OPEN state or because the HALF_OPEN probe quota was in use.
	// The error returned is an [*OpenError], which says which breaker and
	// when the next probe is allowed.
	ErrOpen = errors.New("breaker: circuit open")

	// ErrRateLimited matches every call that a [Limiter] refused because a
	// token could not arrive before the call's deadline or its maximum wait.
	ErrRateLimited = errors.New("breaker: rate limited")

	// ErrBudget matches a call that could make no upstream try because its
	// budget of tries was spent (see [WithBudget] and the `budget` key).
	ErrBudget = errors.New("breaker: retry budget spent")

	// ErrInvalid matches a [ChainError] whose every answer was rejected by
	// the route's `valid` function: the sources answered, but with no
	// usable data.
	ErrInvalid = errors.New("breaker: no valid answer")

	// ErrBulkheadFull matches a call refused because its name already had
	// Concurrency calls in flight and no slot came free within the route's
	// maxwait or the ctx deadline (a wait the ctx ended matches ctx.Err()
	// too). The upstream was not called.
	ErrBulkheadFull = errors.New("breaker: bulkhead full")

	// ErrThrottled matches a call refused locally by adaptive throttling
	// (Config.Throttle): the upstream was not called.
	ErrThrottled = errors.New("breaker: throttled")

	// ErrUnrewindable matches why a generated wrapper did not send a
	// reader again: a method's io.Reader argument (or another body, see
	// docs/clients.md) was read by an earlier try or source, and it is no
	// io.Seeker, or seeking it back failed. A retry then stops with the
	// last try's answer, and a chain passes its next sources over as
	// "unsent" (see [Skip]). Pass an io.ReadSeeker (a *strings.Reader, a
	// *bytes.Reader, a file) or a []byte to have every try send it.
	ErrUnrewindable = errors.New("breaker: the reader was read by an earlier try, and it cannot be sought back to read it again")
)

// OpenError is the error of a rejected call. It matches [ErrOpen]. The
// value for a state period is built once, at the transition, so returning it
// allocates nothing; treat it as read-only.
type OpenError struct {
	// Name is the breaker's name.
	Name string
	// State is Open, HalfOpen when the probe quota was in use, or
	// Isolated when an operator isolated the breaker ([Breaker.Isolate]).
	State State
	// Until is when the next probe is allowed; zero in HALF_OPEN and
	// ISOLATED.
	Until time.Time
	// Reason is the operator's, in ISOLATED ("isolated by operator:
	// maintenance"); empty otherwise.
	Reason string

	msg string
}

// newIsolatedError is the rejection of an ISOLATED period.
func newIsolatedError(name, reason string) *OpenError {
	return &OpenError{Name: name, State: Isolated, Reason: reason, msg: "breaker " + name + ": " + reason}
}

func newOpenError(name string, s State, until time.Time, probes int) *OpenError {
	e := &OpenError{Name: name, State: s, Until: until}
	if s == HalfOpen {
		e.msg = fmt.Sprintf("breaker %s: circuit half-open, %d probe(s) already in flight", name, probes)
	} else {
		e.msg = fmt.Sprintf("breaker %s: circuit open until %s", name, until.Format(time.RFC3339))
	}
	return e
}

func (e *OpenError) Error() string { return e.msg }

// Is reports whether target is [ErrOpen].
func (e *OpenError) Is(target error) bool { return target == ErrOpen }

// RateLimitError is the error of a call the limiter refused. It matches
// [ErrRateLimited].
type RateLimitError struct {
	// Name is the limiter's name.
	Name string
}

func (e *RateLimitError) Error() string {
	return "breaker " + e.Name + ": rate limited, no token before the deadline"
}

// Is reports whether target is [ErrRateLimited].
func (e *RateLimitError) Is(target error) bool { return target == ErrRateLimited }

const (
	briefMax  = 160
	reasonMax = 200
)

// Brief describes err in one line of at most 160 characters:
// "<type>: <message>", with every run of white space folded to one space.
// The type is the error's dynamic type without "*" (url.Error,
// marketdata.StatusError), left out for the standard library's plain errors
// made by errors.New and fmt.Errorf; when the message is empty it is the type
// alone. Cuts fall on rune boundaries. Brief(nil) is "".
//
// The line is safe to show to whoever can read the health endpoints or a
// terminal:
//   - Every control character ([unicode.IsControl]: NUL, BEL, ESC, DEL, the
//     C1 controls) that is not white space, and every byte that is not
//     UTF-8, becomes U+FFFD.
//   - No URL keeps its credentials: its userinfo becomes "REDACTED", every
//     value of its query string becomes "REDACTED" (the keys stay, so that
//     "?symbol=REDACTED&token=REDACTED" still says what was sent), and its
//     fragment becomes "#REDACTED". A URL is the URL of every [*url.Error]
//     in err's chain, with or without a scheme, and every word of the
//     message (up to white space, a quote or an angle bracket) that
//     contains "://", or a "?" followed later by "=". Secrets elsewhere
//     (in a path, in a header an error quotes) are not recognised.
func Brief(err error) string {
	if err == nil {
		return ""
	}
	typ := errorTypeName(err)
	msg := redactWords(foldSpace(redactURLErrors(errorText(err), err)))
	var s string
	switch {
	case typ == "":
		s = msg
	case msg == "":
		s = typ
	default:
		s = typ + ": " + msg
	}
	return truncate(s, briefMax)
}

// errorText is err.Error(), or what fmt would print when that panics:
// "<nil>" for a nil pointer (an error type whose Error reads a field,
// returned as a typed nil), else a note of the panic. A breaker makes
// reasons of its callers' errors, some with its lock held: their bugs must
// not panic there.
func errorText(err error) (s string) {
	defer func() {
		if v := recover(); v != nil {
			if rv := reflect.ValueOf(err); rv.Kind() == reflect.Pointer && rv.IsNil() {
				s = "<nil>"
				return
			}
			s = fmt.Sprintf("(Error method panicked: %v)", v)
		}
	}()
	return err.Error()
}

func errorTypeName(err error) string {
	t := reflect.TypeOf(err)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	full := t.String() // e.g. "url.Error", "errors.errorString"
	switch t.PkgPath() + "." + t.Name() {
	case "errors.errorString", "fmt.wrapError", "fmt.wrapErrors", "errors.joinError",
		"context.deadlineExceededError": // context.DeadlineExceeded, whose message names it
		return ""
	}
	return full
}

// foldSpace makes s one line that is safe to print: every run of white
// space becomes one space (none at either end), and every other control
// character ([unicode.IsControl]), every bidirectional control and every
// byte that is not UTF-8 becomes U+FFFD, so that no ESC, BEL or NUL reaches a JSON answer, a page or a
// terminal. Every reason goes through it.
func foldSpace(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	space := false
	for _, r := range s {
		if unicode.IsSpace(r) {
			space = true
			continue
		}
		if space && b.Len() > 0 {
			b.WriteByte(' ')
		}
		space = false
		if unicode.IsControl(r) || isBidiControl(r) {
			r = utf8.RuneError
		}
		b.WriteRune(r)
	}
	return b.String()
}

// isBidiControl reports whether r is one of Unicode's bidirectional
// controls (embeddings, overrides, isolates and marks): in a reason shown
// on a dashboard or a terminal they can make text read other than it is
// (CVE-2021-42574), so that they go as control characters do.
func isBidiControl(r rune) bool {
	switch {
	case r == '\u061c', r == '\u200e', r == '\u200f':
		return true
	case r >= '\u202a' && r <= '\u202e', r >= '\u2066' && r <= '\u2069':
		return true
	}
	return false
}

// truncate cuts s to at most max characters (runes, so that a Chinese
// message is not cut to a third of its length), ending a cut string with
// "…". A cut never splits a rune.
func truncate(s string, max int) string {
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	n := 0
	for i := range s {
		if n == max-1 {
			return s[:i] + "…"
		}
		n++
	}
	return s
}

// redactedText is what stands in for a credential in a [Brief] line.
const redactedText = "REDACTED"

// redactURLErrors replaces in msg the URL of every [*url.Error] in err's
// chain, as it is and as %q quotes it, by its redacted form: such a URL
// may have no scheme, which the word scan of [redactWords] would need.
func redactURLErrors(msg string, err error) string {
	walkErrors(err, func(e error) {
		ue, ok := e.(*url.Error)
		if !ok || ue == nil || ue.URL == "" {
			return
		}
		r := redactURL(ue.URL, true)
		if r == ue.URL {
			return
		}
		msg = strings.ReplaceAll(msg, ue.URL, r)
		q, rq := strconv.Quote(ue.URL), strconv.Quote(r)
		if q = q[1 : len(q)-1]; q != ue.URL {
			msg = strings.ReplaceAll(msg, q, rq[1:len(rq)-1])
		}
	})
	return msg
}

// maxErrorNodes bounds the walk of an error tree, so that a chain that
// unwraps to itself cannot hang Brief.
const maxErrorNodes = 64

// walkErrors calls f for err and every error it wraps, depth first, for at
// most maxErrorNodes errors. An Unwrap that panics (a typed nil) ends the
// walk.
func walkErrors(err error, f func(error)) {
	defer func() { _ = recover() }()
	n := 0
	var walk func(error)
	walk = func(e error) {
		if e == nil || n >= maxErrorNodes {
			return
		}
		n++
		f(e)
		switch u := e.(type) {
		case sourceError: // a ChainError's source's error (chain.go)
			walk(u.err)
		case interface{ Unwrap() error }:
			walk(u.Unwrap())
		case interface{ Unwrap() []error }:
			for _, e := range u.Unwrap() {
				walk(e)
			}
		}
	}
	walk(err)
}

// redactWords redacts every word of s, a line from [foldSpace], that looks
// like a URL: one that contains "://", or a "?" followed later by "=".
// Words end at a space, a quote, a backquote or an angle bracket.
func redactWords(s string) string {
	if !strings.Contains(s, "://") && !strings.Contains(s, "?") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for s != "" {
		i := strings.IndexFunc(s, isWordEnd)
		if i < 0 {
			i = len(s)
		}
		b.WriteString(redactWord(s[:i]))
		if i == len(s) {
			break
		}
		_, n := utf8.DecodeRuneInString(s[i:])
		b.WriteString(s[i : i+n])
		s = s[i+n:]
	}
	return b.String()
}

func isWordEnd(r rune) bool {
	switch r {
	case ' ', '"', '\'', '`', '<', '>':
		return true
	}
	return false
}

// redactWord redacts w if it looks like a URL, keeping punctuation that
// ends a sentence or closes a bracket after it.
func redactWord(w string) string {
	scheme := strings.Contains(w, "://")
	q := strings.IndexByte(w, '?')
	if !scheme && (q < 0 || !strings.Contains(w[q:], "=")) {
		return w
	}
	body := strings.TrimRight(w, ".,:;!)]}")
	return redactURL(body, scheme) + w[len(body):]
}

// redactURL returns u with its userinfo, every value of its query and its
// fragment replaced by "REDACTED". userinfo says whether u may carry one:
// after "://", or at its start when it has no scheme.
func redactURL(u string, userinfo bool) string {
	frag := ""
	if i := strings.IndexByte(u, '#'); i >= 0 {
		u, frag = u[:i], "#"+redactedText
	}
	query := ""
	if i := strings.IndexByte(u, '?'); i >= 0 {
		u, query = u[:i], "?"+redactQuery(u[i+1:])
	}
	if userinfo {
		start := 0
		if i := strings.Index(u, "://"); i >= 0 {
			start = i + 3
			for start < len(u) && u[start] == '/' { // dns:///host, file:///
				start++
			}
		}
		end := len(u)
		if i := strings.IndexByte(u[start:], '/'); i >= 0 {
			end = start + i
		}
		if at := strings.LastIndexByte(u[start:end], '@'); at >= 0 {
			u = u[:start] + redactedText + u[start+at:]
		}
	}
	return u + query + frag
}

// redactQuery replaces every value of the query q by "REDACTED", keeping
// its keys; a part without "=" is taken for a value.
func redactQuery(q string) string {
	parts := strings.Split(q, "&")
	for i, p := range parts {
		switch k, _, ok := strings.Cut(p, "="); {
		case ok:
			parts[i] = k + "=" + redactedText
		case p != "":
			parts[i] = redactedText
		}
	}
	return strings.Join(parts, "&")
}
