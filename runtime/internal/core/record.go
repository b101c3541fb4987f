package core

// Stage says how a recorded call ended (see [Recorder]): the outcome its
// breaker applied to it, or how far it got, so that a recording holds
// what the breaker did rather than a second opinion on the call's error.
type Stage uint8

const (
	// Refused: a step before the upstream refused the call, injection
	// failed it, or the caller's ctx ended a wait (counted as neither);
	// the error says which.
	Refused Stage = iota
	// Succeeded: the breaker counted the call a success (no error, an
	// excluded one, or its classifier's verdict).
	Succeeded
	// Failed: the breaker counted the call a failure; the error (for
	// the cooldown it asks for) is the call's.
	Failed
	// Ignored: the upstream answered and the breaker counted the call
	// as neither (the caller's cancel, a classifier, a hedge's loser).
	Ignored
	// Invalid: the upstream answered data that the route's valid func
	// rejected.
	Invalid
	// Panicked: the upstream panicked (or a classifier did).
	Panicked
	// Gone: the upstream's goroutine exited without returning.
	Gone
)

// Recorder is the call recorder of a registry (runtime.WithRecorder), as
// package breakerimpl's routes use it.
type Recorder interface {
	// Now returns the instant a recorded call starts, read once.
	Now() int64
	// Record queues one call of breaker b (a *runtime.Breaker) that
	// started at start (from Now) and ends now; it never blocks.
	Record(b any, start int64, stage Stage, err error)
	// Drop counts a call that is not recorded.
	Drop()
}

// RecorderOf returns the recorder of the *runtime.Registry reg, or nil
// when it records nothing. Package runtime sets it in its init.
var RecorderOf func(reg any) Recorder
