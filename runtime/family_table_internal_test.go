package runtime

import (
	"strconv"
	"testing"
	"unsafe"

	"github.com/breakergen/breakergen/runtime/internal/core"
)

// TestFamilyFastSlots: what Enter reads of a family's tables (famFast: the
// slot mask and the first slot, kept in the family) is the table's own
// after every change, and a table is never replaced by a smaller one (a
// lock-free reader may pair a table's slots with an older mask: it must
// stay inside them). The family grows to 2,000 keys and then churns
// through 6,000 more under keys=100, so that drops fill tables with
// tombstones and rebuilds replace them.
func TestFamilyFastSlots(t *testing.T) {
	reg := NewRegistry(WithoutEnv())
	f := reg.Family(Config{Name: "fast"}, FamilyConfig{Keys: 2000})
	var sizes, replaced [2]int
	var last [2]*famTable
	check := func(when string) {
		t.Helper()
		ts := &f.tables
		for j, tab := range [2]struct {
			t *famTable
			v *famFast
		}{{ts.str.Load(), &ts.sv}, {ts.ints.Load(), &ts.iv}} {
			if tab.v.mask.Load() != tab.t.mask || tab.v.first != unsafe.Pointer(&tab.t.slots[0]) {
				t.Fatalf("%s: table %d: Enter reads other slots than the table's", when, j)
			}
			if n := len(tab.t.slots); n < sizes[j] {
				t.Fatalf("%s: table %d shrank from %d slots to %d", when, j, sizes[j], n)
			} else {
				sizes[j] = n
			}
			if tab.t != last[j] {
				last[j] = tab.t
				replaced[j]++
			}
		}
	}
	check("new")
	for i := range 2000 {
		f.Enter(strconv.Itoa(i)).Done()
	}
	check("after 2,000 keys")
	f.limit = 100 // the bound lowered, so that each new key drops one
	replaced = [2]int{}
	for i := range 6000 {
		f.EnterInt(int64(10_000 + i)).Done()
		if i%500 == 499 {
			check("churning")
		}
	}
	for j, n := range replaced {
		if n == 0 { // the churn's tombstones must have made a rebuild
			t.Fatalf("table %d never replaced while churning: no rebuild was checked", j)
		}
	}
	if f.Len() > 100 {
		t.Fatalf("%d keys live under keys=100", f.Len())
	}
	for i := 2000 - 50; i < 2000; i++ { // dropped long ago: made again
		if k := f.Enter(strconv.Itoa(i)); k.Breaker() == nil {
			t.Fatalf("key %d has no breaker", i)
		} else {
			k.Done()
		}
	}
	check("at the end")
}

// TestFamilyChunksGo: a chunk of cells is let go of once none of its keys
// is live and none of its cells waits to be a key's, and not before; a new
// key whose making panics (here, what the family's maker attaches) gives
// its cell up, so that its chunk can still go.
func TestFamilyChunksGo(t *testing.T) {
	reg := NewRegistry(WithoutEnv())
	f := reg.Family(Config{Name: "chunks"}, FamilyConfig{Keys: 4})
	boom := true
	f.maker.Store(&core.KeyMaker[Breaker]{Attach: func(*Breaker, *famEntry) any {
		if boom {
			panic("boom")
		}
		return nil
	}})
	func() {
		defer func() {
			if v := recover(); v != "boom" {
				t.Fatalf("Enter recovered %v, want the attach's panic", v)
			}
		}()
		f.Enter("a")
	}()
	first := f.chunks[0]
	if first.busy != 0 || first.live != 0 {
		t.Fatalf("after the panic the chunk's cells are busy %b, live %b; want none", first.busy, first.live)
	}
	boom = false
	f.Enter("b").Done()
	if first.live == 0 {
		t.Fatal("a live key's cell is not marked live")
	}
	for i := range 4 * famCells { // every key of the first chunk dropped
		f.Enter(strconv.Itoa(i)).Done()
	}
	if f.Len() != 4 {
		t.Fatalf("%d keys live under keys=4", f.Len())
	}
	for _, ch := range f.chunks {
		if ch == first {
			t.Fatal("the first chunk is kept with no live key")
		}
	}
	if n := len(f.chunks); n > 2 {
		t.Fatalf("%d chunks kept for 4 live keys", n)
	}
}

// TestFamilyTableRoom: a rebuilt table is at most a quarter full while
// that takes at most famRoomy slots, and at most 40% full past that, so
// that a family of 100,000 keys keeps 2^18 slots (4 MiB) rather than
// 2^19; either way it has room for more keys before the next rebuild
// (linkLocked rebuilds past half full).
func TestFamilyTableRoom(t *testing.T) {
	slotsFor := func(n int) int {
		t := &famTable{slots: make([]famSlot, famMinSlots)}
		return len(rebuild(t, n).slots)
	}
	for _, n := range []int{1, 100, famRoomy / 4, famRoomy/4 + 1, 100_000, 1_000_000} {
		size := slotsFor(n)
		switch {
		case 4*n <= famRoomy && size < 4*n:
			t.Errorf("%d keys: %d slots, more than a quarter full", n, size)
		case 5*n > 2*size:
			t.Errorf("%d keys: %d slots, more than 40%% full", n, size)
		case 2*(n+1) > size:
			t.Errorf("%d keys: %d slots, no room for one more key", n, size)
		case size >= 2*famRoomy && size >= 8*n:
			t.Errorf("%d keys: %d slots, twice the room the rule gives", n, size)
		}
	}
	if got := slotsFor(100_000); got != 1<<18 {
		t.Errorf("100,000 keys: %d slots, want 2^18", got)
	}
}
