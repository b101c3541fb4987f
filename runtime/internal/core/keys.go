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
