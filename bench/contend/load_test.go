package contend_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/breakergen/breakergen/bench/contend"
	"github.com/breakergen/breakergen/bench/quote"
)

// loadContenders are timed on the success path (BenchmarkLoad): the plain
// generated wrapper first, the baseline of every ratio; then the same
// wrapper with a bulkhead that is never full, with a throttle, with both;
// then failsafe-go's bulkhead and adaptive throttler, bare and through an
// executor.
var loadContenders = []contender{
	{"breakergen", func(next quote.Quoter, s contend.Settings) quote.Quoter {
		return contend.NewBreakergen(next, contend.Registry(s), s)
	}},
	{"breakergen-concurrency", func(next quote.Quoter, s contend.Settings) quote.Quoter {
		return contend.NewBreakergenLoad(next, contend.Registry(s), s, contend.HugeConcurrency, 0)
	}},
	{"breakergen-throttle", func(next quote.Quoter, s contend.Settings) quote.Quoter {
		return contend.NewBreakergenLoad(next, contend.Registry(s), s, 0, contend.ThrottleK)
	}},
	{"breakergen-both", func(next quote.Quoter, s contend.Settings) quote.Quoter {
		return contend.NewBreakergenLoad(next, contend.Registry(s), s, contend.HugeConcurrency, contend.ThrottleK)
	}},
	{"failsafe-bulkhead", func(next quote.Quoter, _ contend.Settings) quote.Quoter {
		return contend.NewFailsafeBulkhead(next, contend.HugeConcurrency)
	}},
	{"failsafe-bulkhead-executor", func(next quote.Quoter, _ contend.Settings) quote.Quoter {
		return contend.NewFailsafeBulkheadExecutor(next, contend.HugeConcurrency)
	}},
	{"failsafe-throttler", func(next quote.Quoter, _ contend.Settings) quote.Quoter {
		return contend.NewFailsafeThrottler(next)
	}},
	{"failsafe-throttler-executor", func(next quote.Quoter, _ contend.Settings) quote.Quoter {
		return contend.NewFailsafeThrottlerExecutor(next)
	}},
}

func runLoad(b *testing.B, parallel bool) {
	for _, c := range loadContenders {
		b.Run(c.name, func(b *testing.B) {
			q := c.make(quote.NewUpstream(nil), closed)
			expectSuccess(b, q)
			b.ReportAllocs()
			if parallel {
				b.ResetTimer()
				b.RunParallel(func(pb *testing.PB) {
					ctx := context.Background()
					for pb.Next() {
						q.Quote(ctx, "600519")
					}
				})
				b.StopTimer()
				expectSuccess(b, q)
				return
			}
			ctx := context.Background()
			for b.Loop() {
				q.Quote(ctx, "600519")
			}
			b.StopTimer()
			expectSuccess(b, q)
		})
	}
}

// BenchmarkLoad is the success path with load control (issue 15 point 5).
func BenchmarkLoad(b *testing.B)         { runLoad(b, false) }
func BenchmarkLoadParallel(b *testing.B) { runLoad(b, true) }

// TestLoadContenders: every load contender answers, and the generated
// wrapper's breaker has the load settings the benchmark asks for.
func TestLoadContenders(t *testing.T) {
	for _, c := range loadContenders {
		q := c.make(quote.NewUpstream(nil), closed)
		for range 3 {
			_, err := q.Quote(context.Background(), "600519")
			require.NoError(t, err, c.name)
		}
	}
	reg := contend.Registry(closed)
	q := contend.NewBreakergenLoad(quote.NewUpstream(nil), reg, closed, 3, contend.ThrottleK)
	_, err := q.Quote(context.Background(), "600519")
	require.NoError(t, err)
	b, ok := reg.Lookup("quotes")
	require.True(t, ok)
	st := b.Stats()
	assert.Equal(t, 3, st.Concurrency)
	assert.Zero(t, st.InFlight)
	assert.Zero(t, st.ThrottleProbability, "one request, accepted")
	assert.Equal(t, float64(contend.ThrottleK), b.Config().Throttle)
}
