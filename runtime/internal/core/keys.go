package core

import "sync/atomic"

// KeyEntry is one live key of a family of breakers (package runtime's
// Family, SPEC §15), over T, runtime's Breaker. Its first 40 bytes are
// what a call on the key reads and writes; package breakerimpl embeds the
// entry in the key's route right after the route's own fast-path words
// (24 bytes), so that a call on a key reads its key, holds it and enters
// its route in one cache line (TestKeyRouteHotLine in breakerimpl).
// Package runtime owns every field: see runtime/family.go.
type KeyEntry[T any] struct {
	// Read (and Inflight written) by every call on the key.
	Inflight atomic.Int64 // calls in flight; very negative once dropped
	Used     atomic.Int64 // the family's clock of uses at the key's last call
	Klen     uint8        // len(Key) when the key is kept in Kbuf, else KeyLong
	Flags    uint8        // which tables hold it and more; set before it is published
	Kbuf     [KeyInline]byte

	// Read off the fast path.
	IKey uint64 // an integer key's bits
	Key  string // the key, or an integer key's decimal form
	B    *T     // the key's breaker
	Val  any    // what the family's attach made of B
	Seen int64  // Used when it was picked as a victim
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
