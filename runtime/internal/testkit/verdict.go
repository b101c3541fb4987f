package testkit

import (
	"context"
	"time"

	"github.com/breakergen/breakergen/runtime"
)

// ClassVerdict returns how a call recorded with class (a recording's
// outcome class, SPEC §13) counts for its breaker: "success", "failure"
// or "neither", what the live breaker must have counted for that line.
func ClassVerdict(class string) string {
	switch class {
	case "success":
		return "success"
	case "failure", "injected":
		return "failure"
	}
	return "neither"
}

// Verdict returns how the one call that moved a breaker's counts from
// before to now counted: "success", "failure", "neither" (ignored), or
// "nothing" when it moved none of them.
func Verdict(before, now runtime.Stats) string {
	switch {
	case now.Successes > before.Successes:
		return "success"
	case now.Failures > before.Failures:
		return "failure"
	case now.Ignored > before.Ignored:
		return "neither"
	}
	return "nothing"
}

// Deadline ends a call at its ctx's deadline, 50ms after it begins: a
// failure unless a classifier says otherwise.
func Deadline() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), 50*time.Millisecond)
}

// Canceled ends a call by its caller's cancel, 50ms after it begins:
// counted as neither unless a classifier says otherwise.
func Canceled() (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	return ctx, cancel
}
