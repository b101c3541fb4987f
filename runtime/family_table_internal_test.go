package runtime

import (
	"strconv"
	"testing"
	"unsafe"
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
