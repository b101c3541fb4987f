package contend_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/breakergen/breakergen/runtime"

	"github.com/breakergen/breakergen/bench/quote"
)

// The cost of trip conditions over a window (SPEC §8, issue 14 point 6):
// the generated wrapper's success path with no window, with a count window
// (clean: full of successes, so a success takes the plain CLOSED path) and
// with a time window (a success counted on its P's counter of the
// published bucket, no lock or clock read). Run at -cpu 1,2:
//
//	cd bench && go test -run '^$' -bench 'WindowSuccess' -benchmem -count 6 -cpu 1,2 ./contend/
//
// Goals: the count window at most 1.5x no window, and both scaling at -cpu
// 2 (issue 14); the time window at most 2x no window serially, and its
// RunParallel speedup from 1 to 2 CPUs at least 0.8 of no window's (issue 24).

var windowCases = []struct {
	name string
	cfg  runtime.Config
}{
	{"none", runtime.Config{Name: "quotes", ResetTimeout: time.Hour}},
	{"count", runtime.Config{Name: "quotes", WindowCalls: 100, ResetTimeout: time.Hour}},
	{"time", runtime.Config{Name: "quotes", WindowPeriod: time.Minute, ResetTimeout: time.Hour}},
}

// windowed returns the generated wrapper on a registry whose breaker
// "quotes" was created first with cfg (the first settings of a name win),
// after enough successes to fill a count window.
func windowed(tb testing.TB, cfg runtime.Config) quote.Quoter {
	tb.Helper()
	reg := runtime.NewRegistry(runtime.WithoutEnv(), runtime.WithLogger(slog.New(slog.DiscardHandler)))
	br := reg.Breaker(cfg)
	q := quote.NewQuoterBreaker(quote.NewUpstream(nil), reg)
	for range 2 * max(cfg.WindowCalls, 1) {
		expectSuccess(tb, q)
	}
	if st := br.Stats(); cfg.WindowCalls > 0 && (st.WindowCalls != cfg.WindowCalls || st.WindowFailures != 0) {
		tb.Fatalf("the count window is not clean: %+v", st)
	}
	return q
}

func BenchmarkWindowSuccess(b *testing.B) {
	for _, c := range windowCases {
		b.Run(c.name, func(b *testing.B) { quoteSerially(b, windowed(b, c.cfg)) })
	}
}

func BenchmarkWindowSuccessParallel(b *testing.B) {
	for _, c := range windowCases {
		b.Run(c.name, func(b *testing.B) { quoteInParallel(b, windowed(b, c.cfg)) })
	}
}

// TestWindowSuccessAllocatesNothing: with a count window or a time window,
// a success through the generated wrapper allocates nothing.
func TestWindowSuccessAllocatesNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under -race: make allocs runs this test without it")
	}
	ctx := context.Background()
	for _, c := range windowCases {
		q := windowed(t, c.cfg)
		if n := testing.AllocsPerRun(100, func() { q.Quote(ctx, "600519") }); n != 0 {
			t.Errorf("%s: a success allocates %v times", c.name, n)
		}
	}
}
