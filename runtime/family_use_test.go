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
	if got, want := f.useOf(f.find("k0")), f.tick.Load(); got != want {
		t.Errorf("k0's use is %d, want the clock's %d", got, want)
	}
}

// TestFamilyShortKeyHash: Family.Enter takes a string key of at most
// famWord bytes for the live key whose slot has its hash and whose length
// is its length, reading no byte of it, since hashString is one to one on
// such keys of one length. Keys that share their overlapping words (abcd
// and abcdabcd, ab and abb) or differ in one byte anywhere have other
// hashes, and a family told them apart.
func TestFamilyShortKeyHash(t *testing.T) {
	reg := NewRegistry(WithoutEnv())
	f := reg.Family(Config{Name: "short"}, FamilyConfig{Keys: 100000})
	keys := []string{"", "a", "b", "ab", "abb", "aab", "abc", "abcd", "abcdabcd", "abcde", "abcdbcde", "bcde",
		"600519", "600518", "700519", "1234567", "12345678", "12345679", "02345678"}
	for n := 1; n <= famWord; n++ { // one byte changed at each place, in keys of every length
		base := []byte("0123456789")[:n]
		keys = append(keys, string(base))
		for i := range n {
			k := []byte(string(base))
			k[i] ^= 0x80
			keys = append(keys, string(k))
		}
	}
	seen := map[[2]uint64]string{}
	for _, k := range keys {
		h := [2]uint64{f.hashString(k), uint64(len(k))}
		if other, dup := seen[h]; dup && other != k {
			t.Errorf("%q and %q, of one length, have one hash", other, k)
		}
		seen[h] = k
	}
	for _, k := range keys {
		if got := f.Breaker(k).Name(); got != "short/"+k {
			t.Errorf("key %q reached breaker %q", k, got)
		}
	}
	for _, k := range keys {
		e := f.Enter(k)
		if got := e.Breaker().Name(); got != "short/"+k {
			t.Errorf("key %q, live, reached breaker %q", k, got)
		}
		f.Exit(e)
	}
}
