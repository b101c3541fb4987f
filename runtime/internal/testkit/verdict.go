package testkit

import "github.com/breakergen/breakergen/runtime"

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
