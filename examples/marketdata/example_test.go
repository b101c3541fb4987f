package marketdata_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/breakergen/breakergen/examples/marketdata"
	"github.com/breakergen/breakergen/examples/marketdata/fakeupstream"
	"github.com/breakergen/breakergen/runtime"
)

// The generated wrapper goes between the client and its callers; after
// five failures tdx is refused without a request being sent.
func ExampleNewStockSourceBreaker() {
	up := fakeupstream.New() // in-process; Start serves it on loopback
	reg := runtime.NewRegistry(runtime.WithLogger(slog.New(slog.DiscardHandler)))
	src := marketdata.NewStockSourceBreaker(up.Client(), reg)
	ctx := context.Background()

	up.Fail(marketdata.TDX, 503)
	for range 5 {
		_, err := src.Kline(ctx, "600519", marketdata.PeriodDay, 20)
		fmt.Println(err)
	}
	_, err := src.Kline(ctx, "600519", marketdata.PeriodDay, 20)
	fmt.Println("open:", errors.Is(err, runtime.ErrOpen), "requests sent:", up.Requests(marketdata.TDX))

	q, err := src.Quote(ctx, "600519") // tencent has its own breaker
	fmt.Println(q.Name, q.Price, err)
	// Output:
	// tdx: HTTP 503 Service Unavailable
	// tdx: HTTP 503 Service Unavailable
	// tdx: HTTP 503 Service Unavailable
	// tdx: HTTP 503 Service Unavailable
	// tdx: HTTP 503 Service Unavailable
	// open: true requests sent: 5
	// 贵州茅台 1688 <nil>
}

// A 429's Retry-After and a 403's ban are data on the error, for retry
// policies and cooldowns to read.
func ExampleStatusError() {
	up := fakeupstream.New()
	c := up.Client()
	up.Throttle(marketdata.Push2ex, 30*time.Second)
	_, err := c.Changes(context.Background())
	var se *marketdata.StatusError
	if errors.As(err, &se) {
		fmt.Println(se.Code, se.Retryable(), se.Wait)
	}
	up.Ban(marketdata.Eastmoney)
	_, err = c.Search(context.Background(), "gzmt")
	if errors.As(err, &se) {
		fmt.Println(se.Code, se.Retryable(), se.Wait)
	}
	// Output:
	// 429 true 30s
	// 403 false 30s
}
