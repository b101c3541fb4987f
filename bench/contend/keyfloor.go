package contend

import (
	"context"
	"sync/atomic"
	"unsafe"

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
//
// The count in the cell is what a key called from several CPUs at once
// cannot afford: every call writes the line that every other call reads
// (docs/keys.md). Mode Lanes counts as a family did until df56863: in
// its P's lane, pinned to the P, with a plain load and store, and with
// what a family's fast path checks besides: the key's length, the cell's
// dying mark before and after the count, and the clock of uses, stamped
// when it moved. Mode PinnedAdds counts as a family does since (runtime's
// Family.hold): the P read once, pinned only for that read, and an
// atomic add on its lane in and on the same lane out (no fence needed),
// one pin instead of two but two locked instructions. Mode
// CallSlots notes each call in one of its P's few slots of calls in
// flight rather than in a line of its key's: one pin, a line that stays
// in the P's caches, and an end that needs no pin (see CallSlots).
//
// The table that finds a key's cell is one of three (FloorTable): the
// floor's own 4-byte slots (TagSlots), a family's 16-byte slots sized as
// a family sizes them (FamilySlots), or 4-byte slots over a dense array
// of a family's 16-byte entries, in the keys' order (CompactSlots): how
// much of a keyed call at many keys is the table's size in the caches.
type KeyFloor struct {
	next  quote.Quoter
	Count bool      // count calls in flight, as a family must
	Mode  FloorMode // how to count them
	table FloorTable
	seed  uint64
	mask  uint64
	index []uint32    // tag<<20 | cell number + 1 (or, CompactSlots, entry number + 1); 0 is empty
	wide  []floorSlot // FamilySlots: the slots; CompactSlots: the entries
	cells []floorCell
	lanes [floorLanes][]int32 // P p's counts, one per cell
	calls [floorLanes]floorCallSlots
	_     [64]byte
	tick  atomic.Uint32 // the clock of uses
}

// FloorMode is how a KeyFloor with Count counts a call in flight.
type FloorMode int

const (
	InCell     FloorMode = iota // atomic adds in the key's cell
	Lanes                       // a family's way until df56863: the P's lane, pinned, plain stores
	PinnedAdds                  // the P's lane, read pinned, with atomic adds (a family's way until the P's own words)
	// CallSlots: the P's slots of calls in flight, a few lines of the P's
	// own that every call of the P uses, whatever its key: a call pinned
	// to its P writes its key's cell into a free slot (a plain store) and
	// ends by clearing it, unpinned, wherever it ends (only the call
	// clears its slot, only the P's pinned goroutine fills a clear one);
	// the family would scan every P's slots for a key. No line of the
	// key's own is written, and no lane a key.
	CallSlots
)

// floorCallSlots are a P's slots of calls in flight, with the next one
// to look at: 576 bytes a P, so that the Ps' slots share no line but at
// their ends (the floor's rows run on one CPU).
type floorCallSlots struct {
	next uint32
	_    [60]byte
	s    [floorSlotN]uintptr
}

const floorSlotN = 64

const floorLanes = 8

// FloorTable is the table a KeyFloor finds a key's cell with.
type FloorTable int

const (
	// TagSlots: slots of 4 bytes (a 12-bit tag and the cell's number), at
	// most half full.
	TagSlots FloorTable = iota
	// FamilySlots: a family's slots of 16 bytes (the cell's pointer and
	// the key's hash), as many as a family's table has once it grew to
	// the keys (runtime's Family.linkLocked and rebuild): 32,768 for
	// 10,000 keys, 512 KiB.
	FamilySlots
	// CompactSlots: as many slots as FamilySlots, of 4 bytes each (a
	// 12-bit tag and an entry's number), over a dense array of entries of
	// 16 bytes (the cell's pointer and the key's hash), one per key, in
	// the order the keys were made: 128 KiB and 160 KiB for 10,000 keys.
	CompactSlots
)

// floorSlot is a family's slot: the cell and the key's hash.
type floorSlot struct {
	c *floorCell
	h uint64
}

// familySlots returns how many slots a family's table has once n keys
// were made in it, none dropped: it starts at famMinSlots (8) and, when
// one more key would make it more than half full, is rebuilt at least
// four times as large as its keys (runtime's Family.linkLocked).
func familySlots(n int) int {
	size := 8
	for k := 1; k <= n; k++ {
		if 2*k > size {
			for size < 4*k {
				size *= 2
			}
		}
	}
	return size
}

type floorCell struct {
	h        uint64
	inflight atomic.Int32
	dead     atomic.Uint32
	state    atomic.Uint64
	fails    atomic.Uint64
	used     atomic.Uint32
	klen     uint8
	_        [27]byte
}

//go:linkname procPin runtime.procPin
func procPin() int

//go:linkname procUnpin runtime.procUnpin
func procUnpin()

// NewKeyFloor returns a KeyFloor for the keys codes (fewer than 2^20),
// found with table t.
func NewKeyFloor(next quote.Quoter, codes []string, t FloorTable) *KeyFloor {
	if len(codes) >= 1<<20 {
		panic("KeyFloor: 2^20 keys or more")
	}
	size := 1
	for size < 2*len(codes) {
		size *= 2
	}
	if t != TagSlots {
		size = familySlots(len(codes))
	}
	w := &KeyFloor{next: next, table: t, seed: 0x9e3779b97f4a7c15, mask: uint64(size - 1),
		cells: make([]floorCell, len(codes))}
	switch t {
	case FamilySlots:
		w.wide = make([]floorSlot, size)
	case CompactSlots:
		w.wide = make([]floorSlot, len(codes))
		fallthrough
	default:
		w.index = make([]uint32, size)
	}
	for p := range w.lanes {
		w.lanes[p] = make([]int32, len(codes))
	}
	for i, c := range codes {
		h := w.hash(c)
		w.cells[i].h = h
		w.cells[i].klen = uint8(len(c))
		if t == FamilySlots {
			for j := h; ; j++ {
				if s := &w.wide[j&w.mask]; s.c == nil {
					*s = floorSlot{&w.cells[i], h}
					break
				}
			}
			continue
		}
		if t == CompactSlots {
			w.wide[i] = floorSlot{&w.cells[i], h}
		}
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
	switch w.table {
	case FamilySlots:
		for i := h; ; i++ {
			s := &w.wide[i&w.mask]
			if s.c == nil {
				panic("KeyFloor: a key it was not made with")
			}
			if s.h == h && int(s.c.klen) == len(code) {
				return s.c
			}
		}
	case CompactSlots:
		tag := uint32(h>>52) << 20
		for i := h; ; i++ {
			v := w.index[i&w.mask]
			if v == 0 {
				panic("KeyFloor: a key it was not made with")
			}
			if v&^(1<<20-1) == tag {
				if s := &w.wide[v&(1<<20-1)-1]; s.h == h && int(s.c.klen) == len(code) {
					return s.c
				}
			}
		}
	}
	tag := uint32(h>>52) << 20
	for i := h; ; i++ {
		v := w.index[i&w.mask]
		if v == 0 {
			panic("KeyFloor: a key it was not made with")
		}
		if v&^(1<<20-1) == tag {
			if c := &w.cells[v&(1<<20-1)-1]; c.h == h && int(c.klen) == len(code) {
				return c
			}
		}
	}
}

// in counts a call in flight on c as its Mode says, and returns what out
// needs to end it: the lane PinnedAdds counted in, or where CallSlots'
// slot is (its offset from the first P's first slot).
//
//go:norace
func (w *KeyFloor) in(c *floorCell) int {
	if c.dead.Load() != 0 {
		panic("KeyFloor drops no key")
	}
	p := 0
	switch w.Mode {
	case InCell:
		c.inflight.Add(1)
	case Lanes:
		n := &w.lanes[procPin()&(floorLanes-1)][w.cellNo(c)]
		*n++
		if c.dead.Load() != 0 {
			panic("KeyFloor drops no key")
		}
		procUnpin()
	case PinnedAdds:
		p = procPin() & (floorLanes - 1)
		procUnpin()
		atomic.AddInt32(&w.lanes[p][w.cellNo(c)], 1)
	case CallSlots:
		cs := &w.calls[procPin()&(floorLanes-1)]
		j := cs.next
		for cs.s[j%floorSlotN] != 0 {
			if j++; j-cs.next == floorSlotN {
				panic("KeyFloor: a P's call slots are full") // a family would count in the cell
			}
		}
		cs.s[j%floorSlotN] = uintptr(unsafe.Pointer(c))
		cs.next = j + 1
		if c.dead.Load() != 0 {
			panic("KeyFloor drops no key")
		}
		procUnpin()
		p = int(uintptr(unsafe.Pointer(&cs.s[j%floorSlotN])) - uintptr(unsafe.Pointer(&w.calls[0].s[0])))
	}
	if c.dead.Load() != 0 {
		panic("KeyFloor drops no key")
	}
	if t := w.tick.Load(); c.used.Load() != t {
		c.used.Store(t)
	}
	return p
}

// out ends a call that in counted, with what in returned.
//
//go:norace
func (w *KeyFloor) out(c *floorCell, p int) {
	switch w.Mode {
	case InCell:
		c.inflight.Add(-1)
	case Lanes:
		w.lanes[procPin()&(floorLanes-1)][w.cellNo(c)]--
		procUnpin()
	case PinnedAdds:
		atomic.AddInt32(&w.lanes[p][w.cellNo(c)], -1)
	case CallSlots:
		*(*uintptr)(unsafe.Add(unsafe.Pointer(&w.calls[0].s[0]), p)) = 0
	}
}

func (w *KeyFloor) cellNo(c *floorCell) uintptr {
	return (uintptr(unsafe.Pointer(c)) - uintptr(unsafe.Pointer(&w.cells[0]))) / unsafe.Sizeof(floorCell{})
}

// Quote implements quote.Quoter, for a key made by NewKeyFloor only.
func (w *KeyFloor) Quote(ctx context.Context, code string) (_ quote.Quote, err error) {
	c := w.cell(code)
	p := 0
	if w.Count {
		p = w.in(c)
	}
	if c.state.Load()&63 != 0 {
		panic("KeyFloor has no slow path")
	}
	defer func() {
		if err != nil || uint32(c.fails.Load()) != 0 {
			floorUnreturned(context.Background(), recover())
		}
		if w.Count {
			w.out(c, p)
		}
	}()
	err = breakerimpl.PanicGuard // stays only if the call panics
	return w.next.Quote(ctx, code)
}

// InFlight returns the count of calls in flight on code, a key NewKeyFloor
// was made with: the cell's and the lanes' sum.
func (w *KeyFloor) InFlight(code string) int32 {
	c := w.cell(code)
	n := c.inflight.Load()
	for p := range w.lanes {
		n += atomic.LoadInt32(&w.lanes[p][w.cellNo(c)])
	}
	for p := range w.calls {
		for j := range w.calls[p].s {
			if atomic.LoadUintptr(&w.calls[p].s[j]) == uintptr(unsafe.Pointer(c)) {
				n++
			}
		}
	}
	return n
}
