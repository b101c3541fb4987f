package runtime

import (
	"strconv"
	"testing"
	"unsafe"
)

// TestFamilyFastSlots: what Enter reads of a shard's tables (famFast: the
// slot mask and the first slot, kept in the shard) is the table's own
// after every change, and a table is never replaced by a smaller one (a
// lock-free reader may pair a table's slots with an older mask: it must
// stay inside them). The family grows to 2,000 keys and then churns
// through 6,000 more under keys=100, so that drops fill tables with
// tombstones and rebuilds replace them.
func TestFamilyFastSlots(t *testing.T) {
	reg := NewRegistry(WithoutEnv())
	f := reg.Family(Config{Name: "fast"}, FamilyConfig{Keys: 2000})
	sizes := make([][2]int, familyShards)
	check := func(when string) {
		t.Helper()
		for i := range f.shards {
			sh := &f.shards[i]
			for j, tab := range [2]struct {
				t *famTable
				v *famFast
			}{{sh.str.Load(), &sh.sv}, {sh.ints.Load(), &sh.iv}} {
				if tab.v.mask.Load() != tab.t.mask || tab.v.first != unsafe.Pointer(&tab.t.slots[0]) {
					t.Fatalf("%s: shard %d table %d: Enter reads other slots than the table's", when, i, j)
				}
				if n := len(tab.t.slots); n < sizes[i][j] {
					t.Fatalf("%s: shard %d table %d shrank from %d slots to %d", when, i, j, sizes[i][j], n)
				} else {
					sizes[i][j] = n
				}
			}
		}
	}
	check("new")
	for i := range 2000 {
		f.Enter(strconv.Itoa(i)).Done()
	}
	check("after 2,000 keys")
	f.limit = 100 // the bound lowered, so that each new key drops one
	for i := range 6000 {
		f.EnterInt(int64(10_000 + i)).Done()
		if i%500 == 499 {
			check("churning")
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
