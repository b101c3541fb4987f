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

	// LevelOK is the level of a CLOSED breaker.
	LevelOK Level = "ok"
	// LevelDegraded is the level of a HALF_OPEN breaker.
	LevelDegraded Level = "degraded"
	// LevelDown is the level of an OPEN breaker.
	LevelDown Level = "down"
)

// String returns "CLOSED", "HALF_OPEN" or "OPEN"; other values print as
// "State(7)".
func (s State) String() string {
	switch s {
	case Closed:
		return "CLOSED"
	case HalfOpen:
		return "HALF_OPEN"
	case Open:
		return "OPEN"
	}
	return "State(" + strconv.Itoa(int(s)) + ")"
}

// Level returns the health level of the state: [LevelOK] for Closed,
// [LevelDegraded] for HalfOpen and [LevelDown] for Open.
func (s State) Level() Level {
	switch s {
	case Closed:
		return LevelOK
	case HalfOpen:
		return LevelDegraded
	}
	return LevelDown
}

// MarshalText encodes the state as its String form, so that it reads well
// in JSON.
func (s State) MarshalText() ([]byte, error) {
	if s < Closed || s > Open {
		return nil, fmt.Errorf("breaker: invalid state %d", int32(s))
	}
	return []byte(s.String()), nil
}

// UnmarshalText decodes "CLOSED", "HALF_OPEN" or "OPEN".
func (s *State) UnmarshalText(b []byte) error {
	switch string(b) {
	case "CLOSED":
		*s = Closed
	case "HALF_OPEN":
		*s = HalfOpen
	case "OPEN":
		*s = Open
	default:
		return fmt.Errorf("breaker: unknown state %q", b)
	}
	return nil
}
