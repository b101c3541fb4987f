package core

import "context"

// Stage says how far a recorded call got (see [Recorder]).
type Stage uint8

const (
	// Refused: a step before the upstream refused the call, or injection
	// failed it; the error says which.
	Refused Stage = iota
	// Done: the upstream answered with the error (nil for a success).
	Done
	// Invalid: the upstream answered data that the route's valid func
	// rejected.
	Invalid
	// Panicked: the upstream panicked.
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
	Record(b any, ctx context.Context, start int64, stage Stage, err error)
	// Drop counts a call that is not recorded.
	Drop()
}

// RecorderOf returns the recorder of the *runtime.Registry reg, or nil
// when it records nothing. Package runtime sets it in its init.
var RecorderOf func(reg any) Recorder
