package contend_test

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand"
	mrand "math/rand/v2"
	goruntime "runtime"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/breakergen/breakergen/runtime"

	"github.com/breakergen/breakergen/bench/contend"
	"github.com/breakergen/breakergen/bench/quote"
)

// The cost of breakers per key (SPEC §15, issue 30 point 4): the plain
// generated wrapper (one breaker) called with 10,000 codes, beside the
// keyed wrapper with those 10,000 keys live, keyed by a string and by an
// integer. The string and int rows cycle through the keys in the order
// they were made, every key as often as the others; each -zipf row calls
// them in a skewed order (zipfOrder), as real traffic comes, and each
// -uniform row in a random order (uniformOrder), every key as likely as
// the others. Calls in the order the keys were made read the keys' cells
// in the order they lie in memory, which the CPU fetches ahead, and each
// call's key is the one touched longest ago; calls in a random order
// find no line ahead of them: the -uniform rows are the caches' worst
// case, and cost the most (docs/keys.md, "The order of the calls").
// Under RunParallel each goroutine starts at its own place, as concurrent
// requests for many keys would. Run at -cpu 1,2:
//
//	cd bench && go test -run '^$' -bench 'KeyedSuccess' -benchmem -count 6 -cpu 1,2 ./contend/
//
// Goals: each keyed row at most 3x the plain one, 0 allocations, and a
// RunParallel speedup from 1 to 2 CPUs at least 0.8 of the plain one's.

const liveKeys = 10_000

// keyedRow calls one wrapper with key number i.
type keyedRow func(ctx context.Context, i int)

// keyedCase makes a row's wrapper with n keys live (the plain one with n
// codes), each called once.
type keyedCase struct {
	name string
	make func(tb testing.TB, n int) keyedRow
}

var keyedCases = []keyedCase{
	{"plain", func(tb testing.TB, n int) keyedRow {
		q := quote.NewQuoterBreaker(quote.NewUpstream(nil), contend.Registry(closed))
		codes := keyCodes(n)
		expectSuccess(tb, q)
		return func(ctx context.Context, i int) { q.Quote(ctx, codes[i]) }
	}},
	{"string", func(tb testing.TB, n int) keyedRow { return stringRow(tb, n, n, nil) }},
	{"int", func(tb testing.TB, n int) keyedRow { return intRow(tb, n, n, nil) }},
}

// stringRow makes the wrapper keyed by a string with at most n keys live,
// calls it with made codes in turn, and returns the row over the last n
// of them, the live keys: call i is on key i, or with an order, on key
// order[i]. The row reads its calls' keys from a slice in the order it
// makes the calls, as a service finds each call's key in the request it
// serves: a row in a random order that looked each key up where it was
// made would count a miss of its own on every call. So do the keys'
// bytes (stringsInOrder), which the family hashes and the plain wrapper
// never reads.
func stringRow(tb testing.TB, n, made int, order []int) keyedRow {
	w, fam := contend.NewKeyedQuoter(quote.NewUpstream(nil), keyedRegistry(), n)
	var q quote.KeyedQuoter = w
	codes := keyCodes(made)
	for _, c := range codes {
		expectSuccessOf(tb, func() error { _, err := q.Quote(context.Background(), c); return err })
	}
	checkLive(tb, fam.Len(), n)
	calls := stringsInOrder(codes[made-n:], order)
	return func(ctx context.Context, i int) { q.Quote(ctx, calls[i]) }
}

// intRow is stringRow for the wrapper keyed by an integer.
func intRow(tb testing.TB, n, made int, order []int) keyedRow {
	w, fam := contend.NewKeyedIDQuoter(quote.NewUpstream(nil), keyedRegistry(), n)
	var q quote.IDQuoter = w
	ids := keyIDs(made)
	for _, id := range ids {
		expectSuccessOf(tb, func() error { _, err := q.QuoteID(context.Background(), id); return err })
	}
	checkLive(tb, fam.Len(), n)
	calls := inOrder(ids[made-n:], order)
	return func(ctx context.Context, i int) { q.QuoteID(ctx, calls[i]) }
}

// inOrder returns keys in order: keys[order[0]], keys[order[1]] and so
// on; keys itself when order is nil.
func inOrder[K any](keys []K, order []int) []K {
	if order == nil {
		return keys
	}
	out := make([]K, len(order))
	for i, k := range order {
		out[i] = keys[k]
	}
	return out
}

// stringsInOrder is inOrder for string keys, with their bytes too in
// call order, in one buffer: call i's key's bytes follow call i-1's, as
// each request's key lies in the request just read. With the bytes where
// the keys were made, a row in a skewed or random order read each call's
// key at a random place in a buffer of 60 KB, past the L1 cache: before
// the hash, so before the table and the cell, on every call.
func stringsInOrder(keys []string, order []int) []string {
	keys = inOrder(keys, order)
	var buf []byte
	for _, k := range keys {
		buf = append(buf, k...)
	}
	all, out := string(buf), make([]string, len(keys))
	for i, k := range keys {
		out[i], all = all[:len(k)], all[len(k):]
	}
	return out
}

func init() {
	// The same keyed wrappers under skewed traffic: a few keys take most
	// calls, as a few symbols, hosts or tenants do in a real service; and
	// under traffic spread evenly, in no order. Every key is live all the
	// same.
	for _, o := range []struct {
		suffix string
		order  func(n int) []int
	}{{"-zipf", zipfOrder}, {"-uniform", uniformOrder}} {
		keyedCases = append(keyedCases,
			keyedCase{"string" + o.suffix, func(tb testing.TB, n int) keyedRow { return stringRow(tb, n, n, o.order(n)) }},
			keyedCase{"int" + o.suffix, func(tb testing.TB, n int) keyedRow { return intRow(tb, n, n, o.order(n)) }})
	}
}

// zipfOrder is the key numbers a skewed row calls, in turn: n draws from
// a Zipf distribution over n keys (s = 1.1, v = 1: the key of rank
// k is drawn in proportion to (1+k)^-1.1, the skew measured in web and
// market-data traffic), with a fixed seed, so every run calls the same
// keys in the same order.
func zipfOrder(n int) []int {
	z := rand.NewZipf(rand.New(rand.NewSource(1)), 1.1, 1, uint64(n-1))
	order := make([]int, n)
	for i := range order {
		order[i] = int(z.Uint64())
	}
	return order
}

// uniformOrder is the key numbers a -uniform row calls, in turn: n draws,
// each key as likely as any other, with a fixed seed.
func uniformOrder(n int) []int {
	r := rand.New(rand.NewSource(2))
	order := make([]int, n)
	for i := range order {
		order[i] = r.Intn(n)
	}
	return order
}

func keyedRegistry() *runtime.Registry {
	return runtime.NewRegistry(runtime.WithoutEnv(), runtime.WithLogger(slog.New(slog.DiscardHandler)))
}

// keyIDs are the keys: n instrument ids of six digits and more.
func keyIDs(n int) []int64 {
	ids := make([]int64, n)
	for i := range ids {
		ids[i] = 600000 + int64(i)
	}
	return ids
}

// keyCodes are keyIDs' decimal forms.
//
// Their bytes lie side by side in one buffer, in the keys' order: a
// service's key comes in the request it serves, already in the caches,
// and a row that reads its keys' bytes from 10,000 allocations of their
// own, in a random order, would count a miss on each that a service does
// not pay.
func keyCodes(n int) []string {
	var buf []byte
	ends := make([]int, n)
	for i, id := range keyIDs(n) {
		buf = strconv.AppendInt(buf, id, 10)
		ends[i] = len(buf)
	}
	all, codes, from := string(buf), make([]string, n), 0
	for i, end := range ends {
		codes[i], from = all[from:end], end
	}
	return codes
}

func expectSuccessOf(tb testing.TB, call func() error) {
	tb.Helper()
	if err := call(); err != nil {
		tb.Fatalf("a success returned %v", err)
	}
}

func checkLive(tb testing.TB, live, want int) {
	tb.Helper()
	if live != want {
		tb.Fatalf("%d live keys, want %d", live, want)
	}
}

// callKeys calls case c's wrapper with n keys live, serially, each call
// on the next key in turn.
func callKeys(b *testing.B, c keyedCase, n int) {
	call := c.make(b, n)
	settle()
	ctx := context.Background()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		call(ctx, i)
		if i++; i == n {
			i = 0
		}
	}
}

// settle finishes the garbage collection that making 10,000 keys' breakers
// set off, before the timed loop: a collection still marking when it
// starts takes one of 2 Ps from RunParallel's goroutines for part of the
// run, which made a keyed row's speedup on 2 CPUs come out at 1.4x in
// about a third of the runs and 2x in the rest (with GOGC=off, 2x in
// every run).
func settle() { goruntime.GC() }

func BenchmarkKeyedSuccess(b *testing.B) {
	for _, c := range keyedCases {
		b.Run(c.name, func(b *testing.B) { callKeys(b, c, liveKeys) })
	}
}

func BenchmarkKeyedSuccessParallel(b *testing.B) {
	for _, c := range keyedCases {
		b.Run(c.name, func(b *testing.B) {
			call := c.make(b, liveKeys)
			settle()
			var starts atomic.Int64
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				ctx := context.Background()
				i := int(starts.Add(1)*7919) % liveKeys
				for pb.Next() {
					call(ctx, i)
					if i++; i == liveKeys {
						i = 0
					}
				}
			})
		})
	}
}

// BenchmarkKeyedHotKeyParallel is BenchmarkKeyedSuccessParallel's first
// rows (plain, string, int) with every goroutine calling one key, of the 10,000 live, as when
// one symbol or one host takes all the traffic: each call counts itself
// in its own P's word of the key's bucket (runtime's Family.holdAt), so
// that the key's cell is only read and a hot key scales like the plain
// wrapper.
// make bench reports each row's speedup from 1 to 2 CPUs against plain's;
// by hand:
//
//	cd bench && go test -run '^$' -bench 'KeyedHotKeyParallel' -count 6 -cpu 1,2 ./contend/
func BenchmarkKeyedHotKeyParallel(b *testing.B) {
	for _, c := range keyedCases[:3] {
		b.Run(c.name, func(b *testing.B) {
			call := c.make(b, liveKeys)
			settle()
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				ctx := context.Background()
				for pb.Next() {
					call(ctx, 42)
				}
			})
		})
	}
}

// BenchmarkKeyedLiveKeys is BenchmarkKeyedSuccess's first rows (plain,
// string, int, called in the order the keys were made) at 100, 1,000,
// 10,000 and 100,000 live keys: what a keyed call costs as its keys
// outgrow the caches. Compare keyed with plain at one count, in one run
// (make bench runs it but does not report it):
//
//	cd bench && go test -run '^$' -bench 'KeyedLiveKeys' -benchmem -count 6 -cpu 1 ./contend/
func BenchmarkKeyedLiveKeys(b *testing.B) {
	for _, n := range []int{100, 1_000, 10_000, 100_000} {
		for _, c := range keyedCases[:3] {
			b.Run(fmt.Sprintf("keys=%d/%s", n, c.name), func(b *testing.B) { callKeys(b, c, n) })
		}
	}
}

// BenchmarkKeyedAtBound is BenchmarkKeyedLiveKeys's rows on a family that
// has been at its bound a while, as a bounded family in service is: 3n
// other keys went through it first, and were dropped for the n that the
// row then calls in turn. Its key tables have been rebuilt under churn,
// tombstones and all, where BenchmarkKeyedLiveKeys's only grew; the
// -uniform rows call the same keys in a random order, where nothing is
// fetched ahead (see BenchmarkKeyedSuccess). make
// bench runs it (and keeps its raw output) but does not report it:
//
//	cd bench && go test -run '^$' -bench 'KeyedAtBound' -count 6 -cpu 1 ./contend/
func BenchmarkKeyedAtBound(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprintf("keys=%d/plain", n), func(b *testing.B) { callKeys(b, keyedCases[0], n) })
		cases := []keyedCase{
			{"string", func(tb testing.TB, n int) keyedRow { return stringRow(tb, n, 4*n, nil) }},
			{"int", func(tb testing.TB, n int) keyedRow { return intRow(tb, n, 4*n, nil) }},
			{"string-uniform", func(tb testing.TB, n int) keyedRow { return stringRow(tb, n, 4*n, uniformOrder(n)) }},
			{"int-uniform", func(tb testing.TB, n int) keyedRow { return intRow(tb, n, 4*n, uniformOrder(n)) }},
		}
		for _, c := range cases {
			b.Run(fmt.Sprintf("keys=%d/%s", n, c.name), func(b *testing.B) { callKeys(b, c, n) })
		}
	}
}

// BenchmarkKeyedFloor is BenchmarkKeyedLiveKeys's rows for contend's
// KeyFloor, the least a keyed wrapper could cost (see KeyFloor), beside
// the plain wrapper: how much of SPEC §15's 3x a family's own work may
// take. Its rows: no count of calls in flight (count=false), atomic adds
// in the cell (count=true, which a hot key on many CPUs cannot afford),
// per-P lanes with a family's checks, pinned twice a call (lanes, a
// family's way until df56863), one pin with atomic adds on the lane
// (pinned-adds, a family's way from then until the P's own words of
// docs/keys.md's "The count of calls in flight"), and
// the P's slots of calls in flight (call-slots, see CallSlots), each with
// the floor's 4-byte slots; then lanes again with a family's
// 16-byte slots (lanes-family-slots) and with 4-byte slots over dense
// 16-byte entries (lanes-compact-slots): what the table's size costs.
// The rows keys=10000/uniform/... are the same at 10,000 keys called in a
// random order. make bench reports the rows at 10,000 keys:
//
//	cd bench && go test -run '^$' -bench 'KeyedLiveKeys|KeyedFloor' -benchmem -count 6 -cpu 1 ./contend/
func BenchmarkKeyedFloor(b *testing.B) {
	modes := []struct {
		name  string
		count bool
		mode  contend.FloorMode
		table contend.FloorTable
	}{
		{"count=true", true, contend.InCell, contend.TagSlots},
		{"count=false", false, contend.InCell, contend.TagSlots},
		{"lanes", true, contend.Lanes, contend.TagSlots},
		{"pinned-adds", true, contend.PinnedAdds, contend.TagSlots},
		{"call-slots", true, contend.CallSlots, contend.TagSlots},
		{"lanes-family-slots", true, contend.Lanes, contend.FamilySlots},
		{"lanes-compact-slots", true, contend.Lanes, contend.CompactSlots},
	}
	row := func(name string, count bool, mode contend.FloorMode, table contend.FloorTable, order func(int) []int) keyedCase {
		return keyedCase{name, func(tb testing.TB, n int) keyedRow {
			codes := keyCodes(n)
			w := contend.NewKeyFloor(quote.NewUpstream(nil), codes, table)
			w.Count, w.Mode = count, mode
			var q quote.Quoter = w
			for _, c := range codes {
				expectSuccessOf(tb, func() error { _, err := q.Quote(context.Background(), c); return err })
			}
			var o []int
			if order != nil {
				o = order(n)
			}
			calls := stringsInOrder(codes, o)
			return func(ctx context.Context, i int) { q.Quote(ctx, calls[i]) }
		}}
	}
	for _, n := range []int{100, 1_000, 10_000, 100_000} {
		for _, m := range modes {
			c := row(fmt.Sprintf("keys=%d/%s", n, m.name), m.count, m.mode, m.table, nil)
			b.Run(c.name, func(b *testing.B) { callKeys(b, c, n) })
		}
	}
	// The same rows at 10,000 keys called in a random order, as the keyed
	// -uniform rows are: each call's key's lines are where the CPU fetched
	// nothing ahead.
	for _, m := range modes {
		c := row(fmt.Sprintf("keys=%d/uniform/%s", liveKeys, m.name), m.count, m.mode, m.table, uniformOrder)
		b.Run(c.name, func(b *testing.B) { callKeys(b, c, liveKeys) })
	}
}

// TestKeyedSuccessAllocs: with 10,000 live keys, a success through the
// keyed wrapper allocates nothing, keyed by a string or by an integer.
func TestKeyedSuccessAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under -race: make allocs runs this test without it")
	}
	ctx := context.Background()
	r := mrand.New(mrand.NewPCG(1, 2))
	for _, c := range keyedCases {
		call := c.make(t, liveKeys)
		if n := testing.AllocsPerRun(1000, func() { call(ctx, r.IntN(liveKeys)) }); n != 0 {
			t.Errorf("%s: a success allocates %v times", c.name, n)
		}
	}
}
