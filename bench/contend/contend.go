// Package contend wraps one typed method, [quote.Quoter.Quote], with each
// circuit-breaker library the benchmark compares, in the way that library's
// documentation shows. Every contender calls the same [quote.Upstream].
//
// A contender is a [quote.Quoter]; the breakergen one is the generated
// [quote.QuoterBreaker] itself. Each constructor takes a [Settings] so that
// every library is configured alike: a threshold of consecutive failures, an
// reset, and (for the limiter scenario) a token bucket whose token is
// always there.
package contend

import (
	"context"
	"time"

	"golang.org/x/time/rate"

	"github.com/breakergen/breakergen/bench/quote"
)

// Settings are the breaker settings every contender is built with.
type Settings struct {
	// Threshold is how many consecutive failures open the breaker.
	Threshold int
	// Reset is how long the breaker stays open before it probes.
	Reset time.Duration
	// Limited puts a limiter of HugeRate tokens a second (burst HugeBurst)
	// in front of the upstream, after the breaker admitted the call.
	Limited bool
}

// HugeRate and HugeBurst configure the limiters of the limiter scenario: a
// token is always there, so the scenario measures the cost of taking one.
// They match the ratelimit annotation of [quote.LimitedQuoter].
const (
	HugeRate  = 1e9
	HugeBurst = 1_000_000
)

// Never is a threshold no benchmark reaches (a failing call costs at least
// 50 ns, so it takes almost a second of failures at full speed; benchmarks
// run 100 ms and check afterwards that the breaker is still closed). It is
// not larger because failsafe-go's count-based breaker allocates a bit per
// counted call when it is built: 1<<30 would cost 128 MB per breaker.
const Never = 1 << 24

// limited is the upstream behind an x/time/rate limiter, used by every peer
// in the limiter scenario: the breaker admits the call, then it waits for
// a token, as in breakergen's runtime.
type limited struct {
	lim  *rate.Limiter
	next quote.Quoter
}

func (l *limited) Quote(ctx context.Context, code string) (quote.Quote, error) {
	if err := l.lim.Wait(ctx); err != nil {
		return quote.Quote{}, err
	}
	return l.next.Quote(ctx, code)
}

// upstreamFor returns next, behind a limiter when s asks for one.
func upstreamFor(next quote.Quoter, s Settings) quote.Quoter {
	if !s.Limited {
		return next
	}
	return &limited{lim: rate.NewLimiter(HugeRate, HugeBurst), next: next}
}
