// Package readme holds the code of the repository's README and docs/
// pages, so that every snippet there is compiled and run by `go test` (see
// readme_test.go, which checks that their code blocks marked
// <!-- from examples/readme/... --> are found here verbatim; the README's
// "Five minutes" files are built by fiveminutes_test.go).
package readme

import "context"

//go:generate go tool breakergen

// Quote is one stock's last price.
type Quote struct {
	Code  string
	Price float64
}

// Bar is one day of a k-line.
type Bar struct {
	Open, High, Low, Close float64
}

// QuoteSource is where quotes and k-lines come from.
//
//breaker:name=eastmoney threshold=5 reset=30s ratelimit=1.5/3 chain
//breaker:name=tdx threshold=5 reset=30s concurrency=4 methods=Kline*
type QuoteSource interface {
	Quote(ctx context.Context, code string) (Quote, error)
	Kline(ctx context.Context, code string, days int) ([]Bar, error)
}
