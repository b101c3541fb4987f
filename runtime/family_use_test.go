package runtime

import (
	"fmt"
	"testing"
)

// TestFamilyUseAcrossWrap: an entry keeps the low 32 bits of the family's
// clock of uses (so that a call's words fit one cache line, see
// core.KeyEntry), and the least recently used key is still the one
// dropped when the clock passes 2^32 between two uses.
func TestFamilyUseAcrossWrap(t *testing.T) {
	reg := NewRegistry(WithoutEnv())
	f := reg.Family(Config{Name: "wrap"}, FamilyConfig{Keys: 32}) // the clock moves every 2 new keys
	f.tick.Store(1<<32 - 3)
	for i := range 32 {
		f.Breaker(fmt.Sprint("k", i))
	}
	if tick := f.tick.Load(); tick < 1<<32 {
		t.Fatalf("the clock is %d after 32 keys: the test wants it past 2^32", tick)
	}
	f.Breaker("k0") // now the most recently used
	f.Breaker("k32")
	if f.Len() != 32 {
		t.Fatalf("%d live keys, want 32", f.Len())
	}
	if _, ok := reg.Lookup("wrap/k0"); !ok {
		t.Errorf("k0, used last, was dropped")
	}
	if _, ok := reg.Lookup("wrap/k1"); ok {
		t.Errorf("k1, the least recently used, is still live")
	}
	if got, want := f.useOf(f.entry("k0")), f.tick.Load(); got != want {
		t.Errorf("k0's use is %d, want the clock's %d", got, want)
	}
}
