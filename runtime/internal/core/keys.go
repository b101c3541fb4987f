package core

import "sync/atomic"

// KeyEntry is one live key of a family of breakers (package runtime's
// Family, SPEC §15), over T, runtime's Breaker. Its last 32 bytes (from
// Inflight) are what a call on the key reads and writes, the rest is read
// off the fast path. Package breakerimpl embeds the entry at the end of
// the key's route, followed by the route's own fast-path words (16 bytes)
// and then the key's breaker, whose state and fails words come first: a
// call on a key reads its key, holds it, enters its route and its breaker
// and settles its success in one cache line (TestKeyRouteHotLine in
// breakerimpl). Package runtime owns every field: see runtime/family.go.
type KeyEntry[T any] struct {
	// Read off the fast path.
	IKey uint64 // an integer key's bits
	Key  string // the key, or an integer key's decimal form
	B    *T     // the key's breaker
	Val  any    // what the family's attach made of B
	Seen int64  // the use of the key when it was picked as a victim

	// Read (and Inflight written) by every call on the key.
	Inflight atomic.Int32  // calls in flight; very negative once dropped
	Used     atomic.Uint32 // the family's clock of uses at the key's last call, its low 32 bits
	Klen     uint8         // len(Key) when the key is kept in Kbuf, else KeyLong
	Flags    uint8         // which tables hold it and more; set before it is published
	Kbuf     [KeyInline]byte
}

const (
	// KeyInline is the longest key a KeyEntry keeps in Kbuf.
	KeyInline = 22
	// KeyLong is Klen for a key longer than KeyInline.
	KeyLong = 0xff
	// KeyHeld is the flag of an entry a KeyHolder holds.
	KeyHeld = 8
)

// KeyHolder is implemented by a value a family's attach returns that
// holds the key's entry itself (a key's route): the family then uses that
// entry instead of allocating one.
type KeyHolder[T any] interface {
	KeyEntry() *KeyEntry[T]
}

// KeyMaker makes what each new key of a family holds, over T, runtime's
// Breaker: package breakerimpl's families make a key's route, which holds
// the key's entry ([KeyHolder]) and has room for the key's breaker right
// after it. What its functions return is the entry's Val. It is not part
// of runtime's FamilyConfig: only package breakerimpl makes one, through
// [Family].
type KeyMaker[T any] struct {
	// Room is called for each new key before its breaker is made: it
	// returns a zero T, never used, and an attach function. When the
	// key's breaker is new (no breaker has its name yet), the family makes
	// it in that room and calls that function with it; otherwise the room
	// is left unused and Attach is called instead.
	Room func() (room *T, attach func(*T) any)
	// Attach is called with a new key's breaker that existed before the
	// key (made by hand with its name): that breaker stays where it is.
	Attach func(*T) any
}

// Family returns the family of breakers of the *runtime.Registry reg
// named by cfg (a runtime.Config), as runtime's Registry.Family does with
// fc (a runtime.FamilyConfig); when it makes the family, km (a
// *KeyMaker[runtime.Breaker]) makes what each new key holds. Like
// Registry.Family's, a later call with that name returns the same family;
// its km is then used only when that family has none (made by hand), for
// the keys made from then on. It returns a *runtime.Family. Package runtime
// sets it in its init; its arguments are typed any because this package
// cannot name runtime's types.
var Family func(reg, cfg, fc, km any) (family any)
