package redisstate

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/breakergen/breakergen/runtime"
)

// The operators' modes (SPEC §14), shared by the fleet. The mode of a
// name is the key <prefix>mode:{<name>}, without expiry, holding a
// versioned JSON object {"v":1,"mode":"isolated"|"bypassed"|"auto",
// "origin":...,"reason":...,"seq":N}, "auto" being a Resume's mark; a
// change is also a message of kind "mode" on <prefix>events, carrying the
// same fields. A process that attaches later, or reconnects, reads the
// keys. seq orders the changes of a name (a Lamport clock: one more than
// the latest the setter knew, ties broken by origin), so that a message
// or a key older than what a process knows, a late or repeated one, is
// never taken over a newer change.
//
// A Redis outage never lifts a mode: each process keeps the modes it
// knows, and one set or resumed while Redis was away is written when it
// is back. A key that is gone (a Redis restarted without persistence) is
// written again by every process that knows its mode; an "auto" mark is
// what ends a mode a process knew, never a missing key. A mode a process
// took from its own environment (BREAKER_<NAME>_MODE) is not shared.

// kindMode is the message of a mode set or resumed somewhere.
const kindMode = "mode"

// The mode words of the wire.
const (
	modeIsolated = "isolated"
	modeBypassed = "bypassed"
	modeAuto     = "auto" // resumed: automatic again
)

// modeNote is the value of <prefix>mode:{<name>}.
type modeNote struct {
	V      int    `json:"v"`
	Mode   string `json:"mode"`
	Origin string `json:"origin"`
	Reason string `json:"reason"`
	Seq    uint64 `json:"seq"`
}

// newer reports whether n is a later change than o.
func (n modeNote) newer(o modeNote) bool {
	return n.Seq > o.Seq || n.Seq == o.Seq && n.Origin > o.Origin
}

// knownMode is a mode as this process knows it; pending while a change
// made here is still to be written to Redis at the next resync (Redis was
// away when the publisher had it).
type knownMode struct {
	note    modeNote
	pending bool
}

func modeWord(s runtime.State) string {
	switch s {
	case runtime.Isolated:
		return modeIsolated
	case runtime.Bypassed:
		return modeBypassed
	}
	return modeAuto
}

// modeState is the runtime's state for a mode word: Closed for "auto".
func modeState(w string) (runtime.State, error) {
	switch w {
	case modeIsolated:
		return runtime.Isolated, nil
	case modeBypassed:
		return runtime.Bypassed, nil
	case modeAuto:
		return runtime.Closed, nil
	}
	return 0, fmt.Errorf("unknown mode %q", w)
}

// parseModeNote decodes and checks the value of a mode key.
func parseModeNote(value string) (modeNote, error) {
	var n modeNote
	if err := json.Unmarshal([]byte(value), &n); err != nil {
		return n, fmt.Errorf("not a mode note: %w", err)
	}
	if n.V != version {
		return n, fmt.Errorf("mode note version %d, want %d", n.V, version)
	}
	_, err := modeState(n.Mode)
	return n, err
}

func (f *Fleet) modeKey(name string) string { return f.opt.prefix + "mode:{" + name + "}" }

// Mode queues a mode an operator set (or a Resume) in this process for
// the fleet; see [runtime.ModeSharer]. It is called under the breaker's
// lock: it never blocks.
func (s *sharer) Mode(b *runtime.Breaker, mode runtime.State, reason string) {
	f := (*Fleet)(s)
	f.modeMu.Lock()
	defer f.modeMu.Unlock()
	n := modeNote{V: version, Mode: modeWord(mode), Origin: f.opt.origin, Reason: reason,
		Seq: f.modes[b.Name()].note.Seq + 1}
	f.modes[b.Name()] = knownMode{note: n}
	f.outbox.put(outgoing{name: b.Name(), mode: n.Mode, reason: reason})
}

// modePending marks the mode of name as still to be written, unless a
// newer change replaced it.
func (f *Fleet) modePending(name string, n modeNote) {
	f.modeMu.Lock()
	defer f.modeMu.Unlock()
	if k := f.modes[name]; k.note == n {
		f.modes[name] = knownMode{note: n, pending: true}
	}
}

// publishMode writes the mode of name as this process knows it, and
// tells the fleet; restore writes it only where the key is missing (a
// restarted Redis lost it), and tells no one, so that a change made
// elsewhere meanwhile wins.
func (f *Fleet) publishMode(name string, restore bool) {
	f.modeMu.Lock()
	k, ok := f.modes[name]
	f.modeMu.Unlock()
	if !ok {
		return
	}
	n := k.note
	if n.Origin != f.opt.origin && !restore {
		return // a peer's change came in since: it was published by its origin
	}
	m := message{V: version, Kind: kindMode, Name: name, Origin: n.Origin, Reason: n.Reason, Mode: n.Mode, Seq: n.Seq}
	err := f.do(func(ctx context.Context) error {
		if restore {
			return f.rdb.SetNX(ctx, f.modeKey(name), marshal(n), 0).Err()
		}
		_, err := f.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			p.Set(ctx, f.modeKey(name), marshal(n), 0)
			if n.Mode == modeAuto {
				// A Resume lets the source back everywhere: a trip's note
				// would open the breaker of a process that attaches
				// later, and a process whose window ends reads the closed
				// mark as a probe's success.
				p.Del(ctx, f.noteKey(name))
				p.Set(ctx, f.closedKey(name), f.opt.origin, f.resetOf(name))
			}
			p.Publish(ctx, f.channel, marshal(m))
			return nil
		})
		return err
	})
	if err != nil && !restore {
		f.modePending(name, n) // written at the next resync
	}
}

// applyMode follows a mode a peer set or resumed.
func (f *Fleet) applyMode(b *runtime.Breaker, m message) {
	st, err := modeState(m.Mode)
	if err != nil {
		f.ignore(err, "breaker", m.Name)
		return
	}
	n := modeNote{V: version, Mode: m.Mode, Origin: m.Origin, Reason: m.Reason, Seq: m.Seq}
	f.follow.Lock()
	defer f.follow.Unlock()
	f.modeMu.Lock()
	k, known := f.modes[m.Name]
	if known && !n.newer(k.note) {
		f.modeMu.Unlock()
		return // late, or repeated: this process knows a newer change
	}
	f.modes[m.Name] = knownMode{note: n}
	f.modeMu.Unlock()
	switch {
	case st != runtime.Closed:
		b.PeerMode(m.Origin, st, m.Reason)
	case b.Mode() != runtime.Closed:
		if !known {
			// A mode this process took from its environment (or set
			// before Attach): not shared, so not the fleet's to end.
			return
		}
		b.PeerMode(m.Origin, st, m.Reason)
	default:
		// A Resume lets back a source tripped anywhere in the fleet, as
		// it does in its own process.
		b.PeerClose(m.Origin, m.Reason)
	}
}

// resetOf returns how long the closed mark of name lasts: its breaker's
// OPEN period, at least a second.
func (f *Fleet) resetOf(name string) time.Duration {
	if b, ok := f.reg.Lookup(name); ok {
		return max(b.Config().ResetTimeout, time.Second)
	}
	return time.Second
}

// queueModes adds the reads of bs's mode keys to p.
func (f *Fleet) queueModes(ctx context.Context, p redis.Pipeliner, bs []*runtime.Breaker) []*redis.StringCmd {
	gets := make([]*redis.StringCmd, len(bs))
	for i, b := range bs {
		gets[i] = p.Get(ctx, f.modeKey(b.Name()))
	}
	return gets
}

// followModes follows the mode keys of bs as gets read them (see
// [Fleet.readState]): a mode set elsewhere is taken, a Resume's mark
// ends a mode this process knew, and a key that is missing or older than
// a change made here while Redis was away is written again.
func (f *Fleet) followModes(bs []*runtime.Breaker, gets []*redis.StringCmd) {
	var rewrite, restore []string
	f.follow.Lock()
	for i, b := range bs {
		name := b.Name()
		f.modeMu.Lock()
		k, known := f.modes[name]
		f.modeMu.Unlock()
		val, err := gets[i].Result()
		if err != nil { // no key
			switch {
			case known && k.pending:
				rewrite = append(rewrite, name) // set here while Redis was away
			case known:
				restore = append(restore, name) // lost with a restarted Redis
			}
			continue
		}
		n, err := parseModeNote(val)
		if err != nil {
			f.ignore(err, "breaker", name, "note", cut(val))
			continue
		}
		switch {
		case known && !n.newer(k.note):
			if k.pending && k.note != n {
				rewrite = append(rewrite, name) // set here while Redis was away: the latest word
			}
			continue
		case !known && n.Mode == modeAuto:
			f.modeMu.Lock()
			f.modes[name] = knownMode{note: n} // a mode this process never had, long resumed: only its seq
			f.modeMu.Unlock()
			continue
		}
		f.modeMu.Lock()
		if cur, ok := f.modes[name]; ok && !n.newer(cur.note) {
			f.modeMu.Unlock()
			continue // a newer change came in meanwhile
		}
		f.modes[name] = knownMode{note: n}
		f.modeMu.Unlock()
		st, _ := modeState(n.Mode)
		b.PeerMode(n.Origin, st, n.Reason)
	}
	f.follow.Unlock()
	for _, name := range rewrite {
		f.publishMode(name, false)
	}
	for _, name := range restore {
		f.publishMode(name, true)
	}
}

var _ runtime.ModeSharer = (*sharer)(nil)

// modes2pending marks this process's latest change of name as still to
// be written: the publisher had it while Redis was away.
func (f *Fleet) modes2pending(name string) {
	f.modeMu.Lock()
	defer f.modeMu.Unlock()
	if k, ok := f.modes[name]; ok && k.note.Origin == f.opt.origin {
		f.modes[name] = knownMode{note: k.note, pending: true}
	}
}
