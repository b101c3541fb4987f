package readme

import (
	"context"

	"github.com/breakergen/breakergen/runtime"
)

// NewQuotes asks primary first and backup when primary cannot answer: the
// chain breakergen generates for QuoteSource.
func NewQuotes(primary, backup QuoteSource, reg *runtime.Registry) *QuoteSourceChain {
	return NewQuoteSourceChain(primary, reg,
		runtime.Fallback[QuoteSource]{Name: "sina", Impl: backup})
}

// QuoteFrom returns the quote of code and where it came from: "live",
// "fallback:sina (eastmoney open)", "stale 12s (...)".
func QuoteFrom(ctx context.Context, quotes *QuoteSourceChain, code string) (Quote, string, error) {
	ctx, p := runtime.WithProvenance(ctx)
	q, err := quotes.Quote(ctx, code)
	return q, p.String(), err
}
