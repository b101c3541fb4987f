package contend

import (
	"context"
	"sync/atomic"

	"github.com/breakergen/breakergen/bench/quote"
	"github.com/breakergen/breakergen/runtime/breakerimpl"
)

// KeyFloor is the least a keyed wrapper of the generated shape could cost
// on the machine, as Floor is for the plain wrapper: not a breaker, but
// a bound from below for SPEC §15's keyed cost (issue 30). Each key has a
// 64-byte cell in one dense array, holding the key's hash, its count of
// calls in flight and its breaker's state and fails words; a table of
// 4-byte slots (a tag and the cell's number, at most half full) finds it
// from a hash computed inline. A call hashes its key, finds the cell,
// counts itself in flight with an atomic add (or, without Count, does
// not: nothing keeps a key with a call in flight then), reads the state
// word, and on its way out reads the fails word and counts itself out.
// It has no eviction, no integer table, no key compare beyond the hash,
// no operator modes and no slow path: whatever a real family needs on
// top of this costs more.
type KeyFloor struct {
	next  quote.Quoter
	Count bool // count calls in flight, as a family must
	seed  uint64
	mask  uint64
	index []uint32 // tag<<20 | cell number + 1; 0 is empty
	cells []floorCell
}

type floorCell struct {
	h        uint64
	inflight atomic.Int32
	_        uint32
	state    atomic.Uint64
	fails    atomic.Uint64
	_        [32]byte
}

// NewKeyFloor returns a KeyFloor for the keys codes, each called once.
func NewKeyFloor(next quote.Quoter, codes []string) *KeyFloor {
	size := 1
	for size < 2*len(codes) {
		size *= 2
	}
	w := &KeyFloor{next: next, seed: 0x9e3779b97f4a7c15, mask: uint64(size - 1),
		index: make([]uint32, size), cells: make([]floorCell, len(codes))}
	for i, c := range codes {
		h := w.hash(c)
		w.cells[i].h = h
		for j := h; ; j++ {
			if w.index[j&w.mask] == 0 {
				w.index[j&w.mask] = uint32(h>>52)<<20 | uint32(i+1)
				break
			}
		}
	}
	return w
}

// hash is a family's hash of a key of up to 8 bytes (runtime's
// hashString), written inline.
func (w *KeyFloor) hash(s string) uint64 {
	var x uint64
	if n := len(s); n >= 4 {
		x = uint64(uint32(s[0])|uint32(s[1])<<8|uint32(s[2])<<16|uint32(s[3])<<24) |
			uint64(uint32(s[n-4])|uint32(s[n-3])<<8|uint32(s[n-2])<<16|uint32(s[n-1])<<24)<<32
	}
	x = (x ^ uint64(len(s))) * w.seed
	x ^= x >> 32
	x *= 0xbf58476d1ce4e5b9
	return x ^ x>>29
}

func (w *KeyFloor) cell(code string) *floorCell {
	h := w.hash(code)
	tag := uint32(h>>52) << 20
	for i := h; ; i++ {
		v := w.index[i&w.mask]
		if v == 0 {
			panic("KeyFloor: a key it was not made with")
		}
		if v&^(1<<20-1) == tag {
			if c := &w.cells[v&(1<<20-1)-1]; c.h == h {
				return c
			}
		}
	}
}

// Quote implements quote.Quoter, for a key made by NewKeyFloor only.
func (w *KeyFloor) Quote(ctx context.Context, code string) (_ quote.Quote, err error) {
	c := w.cell(code)
	if w.Count {
		c.inflight.Add(1)
	}
	if c.state.Load()&63 != 0 {
		panic("KeyFloor has no slow path")
	}
	defer func() {
		if err != nil || uint32(c.fails.Load()) != 0 {
			floorPanicked(recover())
		}
		if w.Count {
			c.inflight.Add(-1)
		}
	}()
	err = breakerimpl.PanicGuard // stays only if the call panics
	return w.next.Quote(ctx, code)
}
