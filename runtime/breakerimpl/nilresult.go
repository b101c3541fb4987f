package breakerimpl

import "errors"

// ErrNilResult is matched by the error of a call whose method returned a
// nil result that should carry its outcome (a go-redis command, a
// *sql.Row): a mock with no Return configured, or a fake that answers
// nothing. The generated wrapper counts it as a failure and returns it in
// a new result of that type, where the caller would otherwise find a nil
// to call Err() on.
var ErrNilResult = errors.New("breaker: the method returned a nil result")

// NilResult returns the error of a call of method (Interface.Method) whose
// result of type typ was nil (see [ErrNilResult]).
func NilResult(method, typ string) error {
	return &nilResult{method: method, typ: typ}
}

type nilResult struct{ method, typ string }

func (e *nilResult) Error() string {
	return "breaker: " + e.method + " returned a nil " + e.typ + ", which should carry its outcome (a mock with no Return?)"
}

func (e *nilResult) Is(target error) bool { return target == ErrNilResult }
