package contend_test

import (
	"context"
	"testing"

	"github.com/breakergen/breakergen/bench/contend"
	"github.com/breakergen/breakergen/bench/quote"
)

// quoterFunc is a quote.Quoter of a function.
type quoterFunc func(ctx context.Context, code string) (quote.Quote, error)

func (f quoterFunc) Quote(ctx context.Context, code string) (quote.Quote, error) { return f(ctx, code) }

// TestKeyFloorCounts: in each of its ways of counting, with each of its
// tables, KeyFloor finds each key's own cell and counts a call in flight
// on its key only, while it runs, and not after, so that
// BenchmarkKeyedFloor's rows each do the work they are named for.
func TestKeyFloorCounts(t *testing.T) {
	for _, tb := range []contend.FloorTable{contend.TagSlots, contend.FamilySlots, contend.CompactSlots} {
		for _, m := range []contend.FloorMode{contend.InCell, contend.Lanes, contend.PinnedAdds, contend.CallSlots} {
			testKeyFloorCounts(t, tb, m)
		}
	}
}

func testKeyFloorCounts(t *testing.T, tb contend.FloorTable, m contend.FloorMode) {
	codes := []string{"600000", "600001", "AAPL"}
	var w *contend.KeyFloor
	seen := map[string][2]int32{}
	w = contend.NewKeyFloor(quoterFunc(func(_ context.Context, code string) (quote.Quote, error) {
		other := codes[0]
		if code == other {
			other = codes[1]
		}
		seen[code] = [2]int32{w.InFlight(code), w.InFlight(other)}
		return quote.Quote{}, nil
	}), codes, tb)
	w.Count, w.Mode = true, m
	for range 3 {
		for _, c := range codes {
			if _, err := w.Quote(context.Background(), c); err != nil {
				t.Fatalf("table %d, mode %d: %s: %v", tb, m, c, err)
			}
		}
	}
	for _, c := range codes {
		if got := seen[c]; got != [2]int32{1, 0} {
			t.Errorf("table %d, mode %d: during a call on %s: %d in flight on it and %d on another, want 1 and 0", tb, m, c, got[0], got[1])
		}
		if n := w.InFlight(c); n != 0 {
			t.Errorf("table %d, mode %d: %d calls in flight on %s after they returned", tb, m, n, c)
		}
	}
}
