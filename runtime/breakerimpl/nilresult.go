package breakerimpl

import "errors"

// ErrNilResult is matched by the error of a call whose method returned a
// nil result that should carry its outcome (a go-redis command, a
// *sql.Row): a mock with no Return configured, or a fake that answers
// nothing. The generated wrapper counts it as a failure and returns it in
// a new result of that type, where the caller would otherwise find a nil
// to call Err() on. It is matched too by the error of a call whose method
// returned a nil *http.Response with a nil error, neither an answer nor
// an error (http.Client refuses it from a RoundTripper): when a failure
// func judges its answers, the wrapper counts it as a failure and
// returns it as the error.
var ErrNilResult = errors.New("breaker: the method returned a nil result")

// NilResult returns the error of a call of method (Interface.Method) whose
// result of type typ was nil (see [ErrNilResult]).
func NilResult(method, typ string) error {
	return &nilResult{method: method, typ: typ}
}

// NilAnswer returns the error of a call of method (Interface.Method) whose
// answer of type typ (a *http.Response) was nil, and its error too (see
// [ErrNilResult]).
func NilAnswer(method, typ string) error {
	return &nilResult{method: method, typ: typ, answer: true}
}

type nilResult struct {
	method, typ string
	answer      bool // the answer and the error were nil
}

func (e *nilResult) Error() string {
	if e.answer {
		return "breaker: " + e.method + " returned a nil " + e.typ + " with a nil error (a mock with no Return?)"
	}
	return "breaker: " + e.method + " returned a nil " + e.typ + ", which should carry its outcome (a mock with no Return?)"
}

func (e *nilResult) Is(target error) bool { return target == ErrNilResult }

// ErrNilArg is matched by the error of a call whose ctx comes from a
// parameter (an *http.Request, SPEC §12), or is one of a type of its own
// (an interface embedding context.Context, a *gin.Context), that was
// nil: the wrapper has no
// ctx to guard the call with, and returns this error without asking the
// breaker or calling the wrapped method (net/http's own transport would
// panic on it).
var ErrNilArg = errors.New("breaker: nil argument")

// NilArg returns the error of a call of method (Interface.Method) whose
// parameter param ("" for one the interface leaves unnamed), of type
// typ, was nil (see [ErrNilArg]).
func NilArg(method, param, typ string) error {
	return &nilArg{method: method, param: param, typ: typ}
}

type nilArg struct{ method, param, typ string }

func (e *nilArg) Error() string {
	param := ""
	if e.param != "" {
		param = " (" + e.param + ")"
	}
	return "breaker: " + e.method + " called with a nil " + e.typ + param + ", which gives the call its ctx"
}

func (e *nilArg) Is(target error) bool { return target == ErrNilArg }
