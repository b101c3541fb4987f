package contend_test

import (
	"context"
	"log/slog"
	"math/rand"
	mrand "math/rand/v2"
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
// integer. Every row cycles through the keys in the order they were made,
// every key as often as the others (the worst case for the caches: each
// call's key is the one touched longest ago), and each -zipf row through
// a skewed order of them (zipfOrder), as real traffic comes; under
// RunParallel each goroutine starts at its own place, as concurrent
// requests for many keys would. Run at -cpu 1,2:
//
//	cd bench && go test -run '^$' -bench 'KeyedSuccess' -benchmem -count 6 -cpu 1,2 ./contend/
//
// Goals: each keyed row at most 3x the plain one, 0 allocations, and a
// RunParallel speedup from 1 to 2 CPUs at least 0.8 of the plain one's.

const liveKeys = 10_000

// keyedRow calls one wrapper with key number i.
type keyedRow func(ctx context.Context, i int)

var keyedCases = []struct {
	name string
	make func(tb testing.TB) keyedRow
}{
	{"plain", func(tb testing.TB) keyedRow {
		q := quote.NewQuoterBreaker(quote.NewUpstream(nil), contend.Registry(closed))
		codes := keyCodes()
		expectSuccess(tb, q)
		return func(ctx context.Context, i int) { q.Quote(ctx, codes[i]) }
	}},
	{"string", func(tb testing.TB) keyedRow {
		w := contend.NewKeyedQuoter(quote.NewUpstream(nil), keyedRegistry(), liveKeys)
		var q quote.Quoter = w
		codes := keyCodes()
		for _, c := range codes {
			expectSuccessOf(tb, func() error { _, err := q.Quote(context.Background(), c); return err })
		}
		checkLive(tb, w.Live())
		return func(ctx context.Context, i int) { q.Quote(ctx, codes[i]) }
	}},
	{"int", func(tb testing.TB) keyedRow {
		w := contend.NewKeyedIDQuoter(quote.NewUpstream(nil), keyedRegistry(), liveKeys)
		var q contend.IDQuoter = w
		ids := keyIDs()
		for _, id := range ids {
			expectSuccessOf(tb, func() error { _, err := q.QuoteID(context.Background(), id); return err })
		}
		checkLive(tb, w.Live())
		return func(ctx context.Context, i int) { q.QuoteID(ctx, ids[i]) }
	}},
}

func init() {
	// The same keyed wrappers under skewed traffic: a few keys take most
	// calls, as a few symbols, hosts or tenants do in a real service.
	// Every key is live all the same.
	for _, c := range keyedCases[1:3] {
		keyedCases = append(keyedCases, struct {
			name string
			make func(tb testing.TB) keyedRow
		}{c.name + "-zipf", func(tb testing.TB) keyedRow {
			call, order := c.make(tb), zipfOrder()
			return func(ctx context.Context, i int) { call(ctx, order[i]) }
		}})
	}
}

// zipfOrder is the key numbers a skewed row calls, in turn: liveKeys draws
// from a Zipf distribution over the keys (s = 1.1, v = 1: the key of rank
// k is drawn in proportion to (1+k)^-1.1, the skew measured in web and
// market-data traffic), with a fixed seed, so every run calls the same
// keys in the same order.
func zipfOrder() []int {
	z := rand.NewZipf(rand.New(rand.NewSource(1)), 1.1, 1, liveKeys-1)
	order := make([]int, liveKeys)
	for i := range order {
		order[i] = int(z.Uint64())
	}
	return order
}

func keyedRegistry() *runtime.Registry {
	return runtime.NewRegistry(runtime.WithoutEnv(), runtime.WithLogger(slog.New(slog.DiscardHandler)))
}

// keyIDs are the keys: liveKeys six-digit instrument ids.
func keyIDs() []int64 {
	ids := make([]int64, liveKeys)
	for i := range ids {
		ids[i] = 600000 + int64(i)
	}
	return ids
}

// keyCodes are keyIDs' decimal forms.
func keyCodes() []string {
	codes := make([]string, liveKeys)
	for i, id := range keyIDs() {
		codes[i] = strconv.FormatInt(id, 10)
	}
	return codes
}

func expectSuccessOf(tb testing.TB, call func() error) {
	tb.Helper()
	if err := call(); err != nil {
		tb.Fatalf("a success returned %v", err)
	}
}

func checkLive(tb testing.TB, n int) {
	tb.Helper()
	if n != liveKeys {
		tb.Fatalf("%d live keys, want %d", n, liveKeys)
	}
}

func BenchmarkKeyedSuccess(b *testing.B) {
	for _, c := range keyedCases {
		b.Run(c.name, func(b *testing.B) {
			call := c.make(b)
			ctx := context.Background()
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				call(ctx, i)
				if i++; i == liveKeys {
					i = 0
				}
			}
		})
	}
}

func BenchmarkKeyedSuccessParallel(b *testing.B) {
	for _, c := range keyedCases {
		b.Run(c.name, func(b *testing.B) {
			call := c.make(b)
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

// TestKeyedSuccessAllocs: with 10,000 live keys, a success through the
// keyed wrapper allocates nothing, keyed by a string or by an integer.
func TestKeyedSuccessAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under -race: make allocs runs this test without it")
	}
	ctx := context.Background()
	r := mrand.New(mrand.NewPCG(1, 2))
	for _, c := range keyedCases {
		call := c.make(t)
		if n := testing.AllocsPerRun(1000, func() { call(ctx, r.IntN(liveKeys)) }); n != 0 {
			t.Errorf("%s: a success allocates %v times", c.name, n)
		}
	}
}
