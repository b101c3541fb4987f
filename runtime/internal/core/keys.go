package core

import (
	"sync/atomic"
	"unsafe"
)

// KeyEntry is one live key of a family of breakers (package runtime's
// Family, SPEC §15), over T, runtime's Breaker: the key's cell, one cache
// line of 64 bytes, which package runtime allocates in a chunk of cells
// with the family's other keys' and never moves nor reuses. It holds
// everything a CLOSED success on the key reads but its slot in the
// family's table and its count of calls in flight: the key (its bytes
// when it has at most KeyInline of them), the key's route (package
// breakerimpl's, with its slow word) and the state and fails words of
// the key's breaker. A call on a live key writes nothing here: it counts
// itself in a word of its P's own (runtime's Family.holdAt), so that a key
// called from many CPUs at once keeps its cell in all their caches; only
// a slow path's call, a key's first and one whose word is another key's
// count in the cell's Inflight. Cells of live keys
// lie side by side, so that a family's hot lines share pages (a key's
// breaker and route, a kilobyte and more, would spread them over a page
// each) and use every set of the caches (TestKeyCellLine in breakerimpl). Package runtime owns every
// field but Route and Slow, which package breakerimpl's KeyMaker sets.
type KeyEntry[T any] struct {
	Inflight int32         // atomic: the calls in flight counted in the cell (see runtime's Family.holdAt)
	Used     atomic.Uint32 // the family's clock of uses at the key's last call, its low 32 bits
	Dead     atomic.Uint32 // its low bits (KeyState): KeyDying while the family decides to drop the key, KeyGone once it has; the rest the cell's id (runtime's Family.holdAt)
	Klen     uint8         // len(Key) when the key is kept in Kbuf, else KeyLong
	Flags    uint8         // which tables hold it and more; set before it is published
	Slow     uint8         // the key's route's slow word, coded by package breakerimpl
	Slot     uint8         // the cell's place in its chunk of cells
	Kbuf     [KeyInline]byte

	Cold  atomic.Pointer[KeyCold[T]]             // what is read off the fast path; nil once dropped
	Route unsafe.Pointer                         // the key's route (package breakerimpl), or nil
	_     [16 - 2*unsafe.Sizeof(uintptr(0))]byte // 64 bytes where pointers are 4
	// Words are the key's breaker's state and fails words when the
	// breaker was made for the key (Flags has KeyWords); a breaker made
	// by hand before its key keeps its own.
	Words
}

// KeyCold is what is read of a key off the fast path.
type KeyCold[T any] struct {
	IKey    uint64    // an integer key's bits
	Key     string    // the key, or an integer key's decimal form
	B       *T        // the key's breaker
	Val     any       // what the family's attach made of B
	Buckets [2]uint32 // its buckets of words of counts, of the string table and the integer table (runtime's Family.holdAt)
}

const (
	// KeyInline is the longest key a KeyEntry keeps in Kbuf.
	KeyInline = 16
	// KeyLong is Klen for a key longer than KeyInline.
	KeyLong = 0xff
	// KeyWords is the flag of an entry whose Words are its breaker's.
	KeyWords = 8
	// KeyDying and KeyGone are the values of Dead's state bits (0: live).
	KeyDying = 1
	KeyGone  = 2
	// KeyState is the bits of Dead that say whether the key is dying or
	// gone; the rest are the cell's id, which never changes.
	KeyState = 3
)

// KeyMaker makes what each new key of a family holds, over T, runtime's
// Breaker: package breakerimpl's families make a key's route, with room
// for the key's breaker, and set the entry's Route and Slow. What its
// functions return is the entry's Val. It is not part of runtime's
// FamilyConfig: only package breakerimpl makes one, through [Family].
type KeyMaker[T any] struct {
	// Room is called for each new key before its breaker is made: it
	// returns a zero T, never used, and an attach function. When the
	// key's breaker is new (no breaker has its name yet), the family makes
	// it in that room, with its words in the key's entry, and calls that
	// function with it and the entry; otherwise the room is left unused
	// and Attach is called instead.
	Room func() (room *T, attach func(*T, *KeyEntry[T]) any)
	// Attach is called with a new key's breaker that existed before the
	// key (made by hand with its name), which stays where it is, and the
	// key's entry.
	Attach func(*T, *KeyEntry[T]) any
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
