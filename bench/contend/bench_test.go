package contend_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/afex/hystrix-go/hystrix"

	"github.com/breakergen/breakergen/bench/contend"
	"github.com/breakergen/breakergen/bench/quote"
)

func init() { hystrix.SetLogger(hystrix.NoopLogger{}) }

// A contender builds a quote.Quoter around next with settings s.
type contender struct {
	name string
	make func(next quote.Quoter, s contend.Settings) quote.Quoter
}

var (
	direct = contender{"direct", func(next quote.Quoter, _ contend.Settings) quote.Quoter { return next }}

	// baselines are not breakers (see floor.go), timed in the success
	// scenario only: forward is one more dynamic call, floor the generated
	// wrapper's shape with its panic guard and no breaker.
	baselines = []contender{
		{"forward", func(next quote.Quoter, _ contend.Settings) quote.Quoter { return &contend.Forward{Next: next} }},
		{"floor", func(next quote.Quoter, _ contend.Settings) quote.Quoter { return &contend.Floor{Next: next} }},
	}

	// chain is the generated chain whose primary answers, timed in the
	// success scenario only.
	chain = contender{"breakergen-chain", func(next quote.Quoter, s contend.Settings) quote.Quoter {
		return contend.NewBreakergenChain(next, contend.Registry(s))
	}}

	// guarded are the contenders that have a breaker, breakergen first.
	guarded = []contender{
		{"breakergen", func(next quote.Quoter, s contend.Settings) quote.Quoter {
			return contend.NewBreakergen(next, contend.Registry(s), s)
		}},
		{"gobreaker-execute", func(next quote.Quoter, s contend.Settings) quote.Quoter {
			return contend.NewGobreakerExecute(next, s)
		}},
		{"gobreaker-twostep", func(next quote.Quoter, s contend.Settings) quote.Quoter {
			return contend.NewGobreakerTwoStep(next, s)
		}},
		{"failsafe-executor", func(next quote.Quoter, s contend.Settings) quote.Quoter {
			return contend.NewFailsafeExecutor(next, s)
		}},
		{"failsafe-breaker", func(next quote.Quoter, s contend.Settings) quote.Quoter {
			return contend.NewFailsafeBreakerBare(next, s)
		}},
		{"resiliency", func(next quote.Quoter, s contend.Settings) quote.Quoter {
			return contend.NewResiliency(next, s)
		}},
		{"hystrix", func(next quote.Quoter, s contend.Settings) quote.Quoter {
			return contend.NewHystrix(next, s)
		}},
	}
)

// closed is how every contender is configured unless a scenario says
// otherwise: it trips after 5 consecutive failures and stays open an hour,
// far longer than any benchmark.
var closed = contend.Settings{Threshold: 5, Reset: time.Hour}

// A scenario is one row of the comparison: the upstream's answer, the
// settings, and what must hold before timing starts.
type scenario struct {
	err      error
	settings contend.Settings
	direct   bool                                // the direct call is a baseline here
	prepare  func(tb testing.TB, q quote.Quoter) // makes (and afterwards checks) the state the scenario times
}

var scenarios = map[string]scenario{
	"Success":   {settings: closed, direct: true, prepare: expectSuccess},
	"Rejection": {err: quote.ErrUpstream, settings: closed, prepare: trip},
	"Failure": {err: quote.ErrUpstream, direct: true,
		settings: contend.Settings{Threshold: contend.Never, Reset: time.Hour}, prepare: expectFailure},
	"Limited": {settings: contend.Settings{Threshold: 5, Reset: time.Hour, Limited: true}, prepare: expectSuccess},
}

func expectSuccess(tb testing.TB, q quote.Quoter) {
	tb.Helper()
	if _, err := q.Quote(context.Background(), "600519"); err != nil {
		tb.Fatalf("a success returned %v", err)
	}
}

func expectFailure(tb testing.TB, q quote.Quoter) {
	tb.Helper()
	for range 10 {
		if _, err := q.Quote(context.Background(), "600519"); !errors.Is(err, quote.ErrUpstream) {
			tb.Fatalf("a failure returned %v, want the upstream's error", err)
		}
	}
}

// trip makes failing calls until the contender rejects one (an error that
// is not the upstream's). hystrix counts asynchronously, so this polls, for
// at most two seconds.
func trip(tb testing.TB, q quote.Quoter) {
	tb.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for time.Now().Before(deadline) {
		_, err := q.Quote(context.Background(), "600519")
		if err == nil {
			tb.Fatal("a failing upstream answered nil")
		}
		if !errors.Is(err, quote.ErrUpstream) {
			return
		}
		time.Sleep(time.Millisecond)
	}
	tb.Fatal("the breaker did not open")
}

func run(b *testing.B, name string, parallel bool) {
	sc := scenarios[name]
	var cs []contender
	if sc.direct {
		cs = append(cs, direct)
	}
	cs = append(cs, guarded...)
	if name == "Success" {
		cs = append(append(cs, chain), baselines...)
	}
	for _, c := range cs {
		b.Run(c.name, func(b *testing.B) {
			q := c.make(quote.NewUpstream(sc.err), sc.settings)
			sc.prepare(b, q)
			b.ReportAllocs()
			if parallel {
				b.ResetTimer() // b.Loop does this for the serial case
				b.RunParallel(func(pb *testing.PB) {
					ctx := context.Background()
					for pb.Next() {
						q.Quote(ctx, "600519")
					}
				})
				b.StopTimer()
				sc.prepare(b, q)
				return
			}
			ctx := context.Background()
			for b.Loop() {
				q.Quote(ctx, "600519")
			}
			b.StopTimer()
			sc.prepare(b, q) // still in the state the scenario times
		})
	}
}

func BenchmarkSuccess(b *testing.B)           { run(b, "Success", false) }
func BenchmarkSuccessParallel(b *testing.B)   { run(b, "Success", true) }
func BenchmarkRejection(b *testing.B)         { run(b, "Rejection", false) }
func BenchmarkRejectionParallel(b *testing.B) { run(b, "Rejection", true) }
func BenchmarkFailure(b *testing.B)           { run(b, "Failure", false) }
func BenchmarkFailureParallel(b *testing.B)   { run(b, "Failure", true) }
func BenchmarkLimited(b *testing.B)           { run(b, "Limited", false) }
func BenchmarkLimitedParallel(b *testing.B)   { run(b, "Limited", true) }

// quoteSerially times q.Quote's success on one goroutine.
func quoteSerially(b *testing.B, q quote.Quoter) {
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		q.Quote(ctx, "600519")
	}
}

// quoteInParallel times q.Quote's success under RunParallel.
func quoteInParallel(b *testing.B, q quote.Quoter) {
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		ctx := context.Background()
		for pb.Next() {
			q.Quote(ctx, "600519")
		}
	})
}
