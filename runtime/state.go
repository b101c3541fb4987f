package runtime

import (
	"fmt"
	"strconv"
)

// State is the state of a [Breaker]. The zero value is [Closed].
type State int32

// The states of a breaker, and the health [Level] each stands for (see
// [State.Level]).
const (
	// Closed admits every call and counts consecutive failures.
	Closed State = iota
	// HalfOpen admits a limited number of probe calls once the reset (how
	// long the breaker stays OPEN) has passed.
	HalfOpen
	// Open rejects every call with an error that matches [ErrOpen].
	Open
	// Isolated is an operator's mode ([Breaker.Isolate]): every call is
	// rejected with an error that matches [ErrOpen], with no timer, no
	// probe and no limiter token, until [Breaker.Resume].
	Isolated
	// Bypassed is an operator's mode ([Breaker.Bypass]): every call is
	// admitted (the limiter, timeouts, the bulkhead and retries still
	// apply) and counted, and the breaker never trips, until
	// [Breaker.Resume].
	Bypassed

	// LevelOK is the level of a CLOSED breaker.
	LevelOK Level = "ok"
	// LevelDegraded is the level of a HALF_OPEN or BYPASSED breaker.
	LevelDegraded Level = "degraded"
	// LevelDown is the level of an OPEN or ISOLATED breaker.
	LevelDown Level = "down"
)

// String returns "CLOSED", "HALF_OPEN", "OPEN", "ISOLATED" or
// "BYPASSED"; other values print as "State(7)".
func (s State) String() string {
	switch s {
	case Closed:
		return "CLOSED"
	case HalfOpen:
		return "HALF_OPEN"
	case Open:
		return "OPEN"
	case Isolated:
		return "ISOLATED"
	case Bypassed:
		return "BYPASSED"
	}
	return "State(" + strconv.Itoa(int(s)) + ")"
}

// Level returns the health level of the state: [LevelOK] for Closed,
// [LevelDegraded] for HalfOpen and Bypassed, and [LevelDown] for Open and
// Isolated.
func (s State) Level() Level {
	switch s {
	case Closed:
		return LevelOK
	case HalfOpen, Bypassed:
		return LevelDegraded
	}
	return LevelDown
}

// MarshalText encodes the state as its String form, so that it reads well
// in JSON.
func (s State) MarshalText() ([]byte, error) {
	if s < Closed || s > Bypassed {
		return nil, fmt.Errorf("breaker: invalid state %d", int32(s))
	}
	return []byte(s.String()), nil
}

// UnmarshalText decodes the String form of a state.
func (s *State) UnmarshalText(b []byte) error {
	switch string(b) {
	case "CLOSED":
		*s = Closed
	case "HALF_OPEN":
		*s = HalfOpen
	case "OPEN":
		*s = Open
	case "ISOLATED":
		*s = Isolated
	case "BYPASSED":
		*s = Bypassed
	default:
		return fmt.Errorf("breaker: unknown state %q", b)
	}
	return nil
}
