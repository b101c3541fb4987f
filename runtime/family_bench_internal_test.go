package runtime

import (
	"fmt"
	"log/slog"
	"strconv"
	"testing"
)

// BenchmarkFamilyLookup takes a keyed call's family part apart, at 1,000
// and 10,000 live keys, each called in turn (BenchmarkKeyedLiveKeys's
// order, in bench/contend): the hash alone; the hash and the load of the
// slot it picks (slot); the lookup (hash, the table, the slot,
// the cell's compare; find); the count in flight in and out on each key's
// cell in turn, with no lookup (count, as a slow path's call counts); and
// Enter with Done, the lookup with the count in the P's word of the key's
// bucket. What the keyed wrapper adds to the plain one is the last row and
// the glue of breakerimpl.Keyed:
//
//	go test -run '^$' -bench FamilyLookup -count 6 -cpu 1 ./runtime/
func BenchmarkFamilyLookup(b *testing.B) {
	for _, n := range []int{1_000, 10_000} {
		reg := NewRegistry(WithoutEnv(), WithLogger(slog.New(slog.DiscardHandler)))
		f := reg.Family(Config{Name: "quotes", FailureThreshold: 5}, FamilyConfig{Keys: n})
		keys := make([]string, n)
		for i := range keys {
			keys[i] = strconv.Itoa(600000 + i)
			f.Enter(keys[i]).Done()
		}
		loop := func(b *testing.B, call func(key string)) {
			if f.Len() != n {
				b.Fatalf("%d live keys, want %d", f.Len(), n)
			}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				call(keys[i])
				if i++; i == n {
					i = 0
				}
			}
		}
		var sink uint64
		b.Run(fmt.Sprintf("keys=%d/hash", n), func(b *testing.B) {
			loop(b, func(key string) { sink += f.hashString(key) })
		})
		b.Run(fmt.Sprintf("keys=%d/slot", n), func(b *testing.B) {
			var empty int
			loop(b, func(key string) {
				h := f.hashString(key)
				if f.tables.sv.slot(h).e.Load() == nil {
					empty++
				}
			})
			if empty != 0 {
				b.Fatalf("%d of the keys' first slots were empty", empty)
			}
		})
		b.Run(fmt.Sprintf("keys=%d/find", n), func(b *testing.B) {
			loop(b, func(key string) {
				if f.find(key) == nil {
					b.Fatalf("key %s not found", key)
				}
			})
		})
		inOrder := make([]*famEntry, n) // the keys' cells
		for i, key := range keys {
			inOrder[i] = f.find(key)
		}
		b.Run(fmt.Sprintf("keys=%d/count", n), func(b *testing.B) {
			j := 0
			loop(b, func(string) {
				if k := f.hold(inOrder[j]); k.e != nil {
					k.Done()
				}
				if j++; j == n {
					j = 0
				}
			})
		})
		b.Run(fmt.Sprintf("keys=%d/enter-done", n), func(b *testing.B) {
			loop(b, func(key string) { f.Enter(key).Done() })
		})
		_ = sink
	}
}

// BenchmarkFamilyPauses is what a call making a new key may wait for
// while another holds the family's lock (a call on a live key never
// waits), at 1,000, 10,000 and 100,000 live keys: a rebuild of the string
// table (rebuild: every live key copied into a fresh table, once the
// table is half full of keys and tombstones, so about once every Keys to
// 3*Keys new keys past the bound up to 16,383 keys, and once every
// 0.25*Keys to 1.5*Keys past that, where tables are kept at most 40%
// full: famRoom) and the scan for the least recently
// used keys (scan: every live key looked at and the droppable ones
// sorted, once every Keys/16 drops). Not part of make bench:
//
//	go test -run '^$' -bench FamilyPauses -count 6 -cpu 1 ./runtime/
func BenchmarkFamilyPauses(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 100_000} {
		reg := NewRegistry(WithoutEnv(), WithLogger(slog.New(slog.DiscardHandler)))
		f := reg.Family(Config{Name: "quotes"}, FamilyConfig{Keys: n})
		for i := range n {
			f.Enter(strconv.Itoa(600000 + i)).Done()
		}
		t := f.tables.str.Load()
		if t.live != n {
			b.Fatalf("%d keys in the table, want %d", t.live, n)
		}
		b.Run(fmt.Sprintf("keys=%d/rebuild", n), func(b *testing.B) {
			for b.Loop() {
				if next := rebuild(t, t.live); next.live != n {
					b.Fatalf("the rebuilt table has %d keys, want %d", next.live, n)
				}
			}
		})
		b.Run(fmt.Sprintf("keys=%d/scan", n), func(b *testing.B) {
			f.wmu.Lock()
			defer f.wmu.Unlock()
			for b.Loop() {
				f.scanLocked(true)
				if len(f.victims) != max(n/16, 1) {
					b.Fatalf("%d victims, want %d", len(f.victims), max(n/16, 1))
				}
			}
		})
	}
}
