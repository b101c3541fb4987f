package marketdata

import (
	"context"
)

// StockSource is where the stock service gets quotes, k-lines, financials,
// search results and intraday changes. Each method goes to the upstream that
// serves it best, through that upstream's breaker. An unknown stock code is
// an answer, not an outage: [ErrNotFound] counts as a success. Eastmoney's
// calls make up to two tries and at most six upstream tries per call, as
// the origin service's stop_after_attempt(2) and RETRY_BUDGET_MAX=6 did.
// Tencent serves the busiest calls, where a few failures in a row happen by
// bad luck: its breaker trips on the failure rate of its last 50 calls
// instead of a consecutive count. Tdx is slow when it struggles: at most 4
// calls wait on it at once, and a fifth fails after 50ms rather than pile
// up behind them.
//
//breaker:name=eastmoney threshold=5 reset=30s ratelimit=1.5/3 exclude=ErrNotFound attempts=2 budget=6
//breaker:name=tencent reset=30s window=50 failrate=50% minimum=20 methods=Stock*,Quote exclude=ErrNotFound
//breaker:name=tdx threshold=5 reset=30s methods=Kline*,Finance* exclude=ErrNotFound concurrency=4 maxwait=50ms
type StockSource interface {
	// Quote returns the real-time quote of the stock code (tencent).
	Quote(ctx context.Context, code string) (Quote, error)
	// StockInfo returns the static description of the stock code (tencent).
	StockInfo(ctx context.Context, code string) (StockInfo, error)
	// QuoteList returns the quotes of several stocks in one request
	// (eastmoney).
	QuoteList(ctx context.Context, codes []string) ([]Quote, error)
	// Search finds stocks by code, name or pinyin initials (eastmoney).
	Search(ctx context.Context, query string) ([]Hit, error)
	// Industry returns the industry board of the stock code (eastmoney).
	Industry(ctx context.Context, code string) (Industry, error)
	// Kline returns the last n bars of the stock code (tdx).
	Kline(ctx context.Context, code string, period Period, n int) ([]Bar, error)
	// Finance returns the latest report's figures of the stock code (tdx).
	Finance(ctx context.Context, code string) (Financials, error)
	// Changes returns today's intraday change events, newest first
	// (push2ex). Its breaker trips after two failures and a call makes one
	// try: the monitor that polls it has stale data to show, and a full
	// failure chain on every poll costs more than a missed update. When it
	// fails often without failing twice in a row, adaptive throttling
	// (throttle=1.5) sheds the polls it cannot answer.
	//
	//breaker:name=push2ex threshold=2 reset=30s attempts=1 throttle=1.5
	Changes(ctx context.Context) ([]Change, error)
	// Ping reports whether every upstream answers. It is a health check, so
	// it must neither trip a breaker nor be refused by one.
	//
	//breaker:skip
	Ping(ctx context.Context) error
	// Name describes the implementation, for logs. It cannot fail, so
	// there is nothing to guard: skip says so, and keeps breakergen from
	// warning that a method is left unguarded.
	//
	//breaker:skip
	Name() string
}

// FundFlowSource gives a stock's money flow. It is served by eastmoney's
// API, so it shares the eastmoney breaker and limiter with [StockSource]:
// the annotation names the breaker without repeating its settings (they
// belong to the name) and gives only its own line keys. An empty answer is
// no data ([validFlow]); the last valid one per stock is kept for a day and
// served when every source fails, as the origin service's DB fallback did.
// [NewFundFlowSourceChain] puts a backup provider ([Client.Sina]) behind it,
// and asks the backup as well when eastmoney has not answered within 200ms.
//
//breaker:name=eastmoney exclude=ErrNotFound attempts=2 budget=6 valid=validFlow stale=24h chain hedge=200ms
type FundFlowSource interface {
	// FundFlow returns today's money flow of the stock code.
	FundFlow(ctx context.Context, code string) (FundFlow, error)
}

// validFlow reports whether f is data: an upstream that has nothing to say
// answers 200 with an empty object, which must neither count as a success
// nor be kept.
func validFlow(f FundFlow) bool { return f.Code != "" && !f.Time.IsZero() }
