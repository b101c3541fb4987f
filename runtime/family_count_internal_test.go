package runtime

import (
	"sync/atomic"
	"testing"
	"unsafe"

	"github.com/breakergen/breakergen/runtime/internal/core"
)

// TestFamilyCountIn: the count of calls in flight on a key's cell
// (hold, countOut, inFlight), step by step: a call counts and ends, on
// the lane its hold names or in the cell; a cell the family is deciding
// to drop (Dead set) refuses a call and its count stays as it was; the
// family's tombstone, in no chunk, refuses a call without reading a
// chunk; foldDead drops a cell only at zero and leaves a refused drop's
// cell live.
func TestFamilyCountIn(t *testing.T) {
	reg := NewRegistry(WithoutEnv())
	f := reg.Family(Config{Name: "count"}, FamilyConfig{Keys: 4})
	if want := min(famLaneN, 63); famTagN != want {
		t.Errorf("holds name %d lanes of %d: the allocator put a chunk's cells off their lines", famTagN, famLaneN)
	}
	k := f.Enter("a")
	e := untag(k.h)
	if n := inFlight(e); n != 1 {
		t.Fatalf("a held key counts %d in flight, want 1", n)
	}
	h := f.hold(e)
	if h == nil {
		t.Fatal("a live key refused a second call")
	}
	if untag(h) != e {
		t.Fatalf("a hold on cell %p names cell %p", e, untag(h))
	}
	if n := inFlight(e); n != 2 {
		t.Fatalf("two calls count %d in flight", n)
	}
	if f.foldDead(e) {
		t.Fatal("a key with calls in flight was dropped")
	}
	if e.Dead.Load() != 0 {
		t.Fatal("a refused drop left the key dying")
	}
	countOut(h)
	k.Done()
	if n := inFlight(e); n != 0 {
		t.Fatalf("after both calls ended the key counts %d in flight", n)
	}

	// Each lane a hold can name, and the cell (tag 0): counted there and
	// taken off there, whichever P the end runs on.
	for tag := range famTagN + 1 {
		h := unsafe.Add(unsafe.Pointer(e), tag)
		n := &e.Inflight
		if tag > 0 {
			n = (*atomic.Int32)(unsafe.Pointer(laneOf(e, tag-1)))
		}
		n.Add(1)
		if got := inFlight(e); got != 1 {
			t.Fatalf("tag %d: a call counts %d in flight", tag, got)
		}
		countOut(h)
		if got, lane := inFlight(e), n.Load(); got != 0 || lane != 0 {
			t.Fatalf("tag %d: after the call's end %d in flight, %d on its lane", tag, got, lane)
		}
	}

	e.Dead.Store(core.KeyDying)
	if f.hold(e) != nil {
		t.Fatal("a dying key admitted a call")
	}
	if n := inFlight(e); n != 0 {
		t.Fatalf("a refused call left a count of %d", n)
	}
	e.Dead.Store(0)

	if f.hold(famTomb) != nil {
		t.Fatal("the tombstone admitted a call")
	}

	f.wmu.Lock()
	dropped := f.foldDead(e)
	f.wmu.Unlock()
	if !dropped || e.Dead.Load() != core.KeyGone {
		t.Fatalf("an idle key was not dropped (dead %d)", e.Dead.Load())
	}
	if f.hold(e) != nil {
		t.Fatal("a dropped key admitted a call")
	}
}

// TestFamilyChunkLayout: a chunk's cells are on lines of their own and
// its lanes after them, each P's on lines no other P's share, in a chunk
// of each lane count; lanesFor covers the Ps it can.
func TestFamilyChunkLayout(t *testing.T) {
	if off := unsafe.Offsetof(famChunk{}.cells) + famMallocHeader; off%64 != 0 {
		t.Errorf("cells at %d after the block's start, not on a line", off)
	}
	if off := famLanesAt + famMallocHeader; off%64 != 0 || famLaneSize%64 != 0 {
		t.Errorf("lanes at %d, each %d bytes: a P's lane shares a line", off, famLaneSize)
	}
	for _, n := range []int{0, 8, 16, 32, 64} {
		ch := newFamChunk(n)
		for i := range ch.cells {
			ch.cells[i].Slot = uint8(i)
			if chunkOf(&ch.cells[i]) != ch {
				t.Fatalf("%d lanes: chunkOf(cell %d) is not its chunk", n, i)
			}
			if a := uintptr(unsafe.Pointer(&ch.cells[i])); a%64 != 0 {
				t.Fatalf("%d lanes: cell %d at %#x, not on a line", n, i, a)
			}
		}
		for p := range n { // each lane's first and last count: inside the chunk (checkptr, under -race, says if not)
			first, last := laneOf(&ch.cells[0], p), laneOf(&ch.cells[famCells-1], p)
			if a := uintptr(unsafe.Pointer(first)); a%64 != 0 {
				t.Fatalf("%d lanes: lane %d at %#x, not on a line", n, p, a)
			}
			*first, *last = 1, 1
		}
	}
	for procs, want := range map[int]int{1: 8, 2: 8, 8: 8, 9: 16, 16: 16, 17: 32, 33: 64, 64: 64, 65: 64, 512: 64} {
		if got := lanesFor(procs); got != want {
			t.Errorf("lanesFor(%d) = %d, want %d", procs, got, want)
		}
	}
}
