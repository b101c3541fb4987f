package breakerimpl_test

import (
	"errors"
	"testing"

	"github.com/breakergen/breakergen/runtime/breakerimpl"
)

// TestNilArg: the error of a nil ctx-giving argument matches ErrNilArg
// and names the method, the type and the parameter, when it has a name.
func TestNilArg(t *testing.T) {
	for _, c := range []struct{ param, want string }{
		{"req", "breaker: T.RoundTrip called with a nil *http.Request (req), which gives the call its ctx"},
		{"", "breaker: T.RoundTrip called with a nil *http.Request, which gives the call its ctx"},
	} {
		err := breakerimpl.NilArg("T.RoundTrip", c.param, "*http.Request")
		if !errors.Is(err, breakerimpl.ErrNilArg) {
			t.Errorf("NilArg(%q) does not match ErrNilArg", c.param)
		}
		if err.Error() != c.want {
			t.Errorf("NilArg(%q) = %q, want %q", c.param, err.Error(), c.want)
		}
	}
}

// TestNilAnswer: the error of a nil answer with a nil error matches
// ErrNilResult and names the method and the type.
func TestNilAnswer(t *testing.T) {
	err := breakerimpl.NilAnswer("T.RoundTrip", "*http.Response")
	if !errors.Is(err, breakerimpl.ErrNilResult) {
		t.Error("NilAnswer does not match ErrNilResult")
	}
	if want := "breaker: T.RoundTrip returned a nil *http.Response with a nil error (a mock with no Return?)"; err.Error() != want {
		t.Errorf("NilAnswer = %q, want %q", err.Error(), want)
	}
}
