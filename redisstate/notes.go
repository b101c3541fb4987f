package redisstate

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/breakergen/breakergen/runtime"
)

// version is the version of the notes and messages this package writes
// and the only one it reads.
const version = 1

// Kinds of message on <prefix>events.
const (
	kindOpen  = "open"  // a breaker tripped: open yours for MS milliseconds
	kindClose = "close" // the fleet's probe succeeded: close yours
)

// message is what crosses <prefix>events. Durations, never clock
// readings, cross the wire, so clock skew between hosts does not matter.
type message struct {
	V      int    `json:"v"`
	Kind   string `json:"kind"`
	Name   string `json:"name"`
	Origin string `json:"origin"`
	Reason string `json:"reason"`
	MS     int64  `json:"ms,omitempty"`   // open: the window left, in milliseconds
	Mode   string `json:"mode,omitempty"` // mode: isolated, bypassed or auto (see modes.go)
	Seq    uint64 `json:"seq,omitempty"`  // mode: the change's order (see modes.go)
}

// note is the value of <prefix>open:<name>; the key's expiry is the window
// left. Instance is the Attach that wrote it (see [Fleet.followNotes]);
// a peer of an earlier version writes none, and ignores it.
type note struct {
	V        int    `json:"v"`
	Origin   string `json:"origin"`
	Reason   string `json:"reason"`
	Instance string `json:"instance,omitempty"`
}

// parseMessage decodes and checks a message from a peer: the version, a
// kind, a name, and for an open a window in (0, MaxCooldown].
func parseMessage(payload string) (message, error) {
	var m message
	if err := json.Unmarshal([]byte(payload), &m); err != nil {
		return m, fmt.Errorf("not a note: %w", err)
	}
	if m.V != version {
		return m, fmt.Errorf("note version %d, want %d", m.V, version)
	}
	if m.Name == "" {
		return m, errors.New("note names no breaker")
	}
	switch m.Kind {
	case kindOpen:
		if err := checkWindow(time.Duration(m.MS) * time.Millisecond); err != nil {
			return m, err
		}
	case kindClose:
	case kindMode:
		if _, err := modeState(m.Mode); err != nil {
			return m, err
		}
	default:
		return m, fmt.Errorf("note of unknown kind %q", m.Kind)
	}
	return m, nil
}

// parseNote decodes and checks the value of an open note whose key
// expires in left.
func parseNote(value string, left time.Duration) (note, error) {
	var n note
	if err := json.Unmarshal([]byte(value), &n); err != nil {
		return n, fmt.Errorf("not a note: %w", err)
	}
	if n.V != version {
		return n, fmt.Errorf("note version %d, want %d", n.V, version)
	}
	return n, checkWindow(left)
}

// checkWindow refuses a window no real note asks for: none, or more than
// the runtime's longest cooldown.
func checkWindow(d time.Duration) error {
	if d <= 0 {
		return fmt.Errorf("note with no window (%s)", d)
	}
	if d > runtime.MaxCooldown {
		return fmt.Errorf("note asks for %s, more than %s", d, runtime.MaxCooldown)
	}
	return nil
}

func marshal(v any) string {
	b, _ := json.Marshal(v) // plain structs of strings and ints
	return string(b)
}
