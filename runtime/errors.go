package runtime

import (
	"errors"
	"fmt"
	"reflect"
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
)

// OpenError is the error of a rejected call. It matches [ErrOpen]. The
// value for a state period is built once, at the transition, so returning it
// allocates nothing; treat it as read-only.
type OpenError struct {
	// Name is the breaker's name.
	Name string
	// State is Open, or HalfOpen when the probe quota was in use.
	State State
	// Until is when the next probe is allowed; zero in HALF_OPEN.
	Until time.Time

	msg string
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
func Brief(err error) string {
	if err == nil {
		return ""
	}
	typ := errorTypeName(err)
	msg := foldSpace(err.Error())
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

func errorTypeName(err error) string {
	t := reflect.TypeOf(err)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	full := t.String() // e.g. "url.Error", "errors.errorString"
	switch t.PkgPath() + "." + t.Name() {
	case "errors.errorString", "fmt.wrapError", "fmt.wrapErrors", "errors.joinError":
		return ""
	}
	return full
}

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
		b.WriteRune(r)
	}
	return b.String()
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
