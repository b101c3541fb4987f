// Hand-written stand-in for breakergen output; replaced by go generate.

package marketdata

import (
	"context"
	"time"

	"github.com/breakergen/breakergen/runtime"
)

// FundFlowSourceBreaker guards every method of a FundFlowSource with circuit breakers:
//
//	FundFlow  breaker "eastmoney", limiter 1.5/s burst 3
type FundFlowSourceBreaker struct {
	next      FundFlowSource
	eastmoney *runtime.Route
}

// NewFundFlowSourceBreaker wraps next; breakers and limiters come from reg, or from
// runtime.Default() when reg is nil.
func NewFundFlowSourceBreaker(next FundFlowSource, reg *runtime.Registry) *FundFlowSourceBreaker {
	if reg == nil {
		reg = runtime.Default()
	}
	return &FundFlowSourceBreaker{
		next:      next,
		eastmoney: reg.Route(runtime.RouteConfig{Breaker: runtime.Config{Name: "eastmoney", FailureThreshold: 5, ResetTimeout: 30 * time.Second, HalfOpenMax: 1, SuccessThreshold: 1}, Rate: 1.5, Burst: 3, Exclude: []error{ErrNotFound}}),
	}
}

var _ FundFlowSource = (*FundFlowSourceBreaker)(nil)

// FundFlow calls next.FundFlow through breaker "eastmoney".
func (w *FundFlowSourceBreaker) FundFlow(ctx context.Context, code string) (_ FundFlow, err error) {
	if w.next == nil {
		err = runtime.ErrNilImpl
		return
	}
	call, err := w.eastmoney.Enter(ctx)
	if err != nil {
		return
	}
	defer call.Exit(ctx, &err)
	err = runtime.ErrInFlight
	return w.next.FundFlow(ctx, code)
}

// StockSourceBreaker guards every method of a StockSource with circuit breakers:
//
//	Changes    breaker "push2ex"
//	Finance    breaker "tdx"
//	Industry   breaker "eastmoney", limiter 1.5/s burst 3
//	Kline      breaker "tdx"
//	Name       unguarded: no error result
//	Ping       unguarded: //breaker:skip
//	Quote      breaker "tencent"
//	QuoteList  breaker "eastmoney", limiter 1.5/s burst 3
//	Search     breaker "eastmoney", limiter 1.5/s burst 3
//	StockInfo  breaker "tencent"
type StockSourceBreaker struct {
	next      StockSource
	eastmoney *runtime.Route
	tencent   *runtime.Route
	tdx       *runtime.Route
	push2ex   *runtime.Route
}

// NewStockSourceBreaker wraps next; breakers and limiters come from reg, or from
// runtime.Default() when reg is nil.
func NewStockSourceBreaker(next StockSource, reg *runtime.Registry) *StockSourceBreaker {
	if reg == nil {
		reg = runtime.Default()
	}
	return &StockSourceBreaker{
		next:      next,
		eastmoney: reg.Route(runtime.RouteConfig{Breaker: runtime.Config{Name: "eastmoney", FailureThreshold: 5, ResetTimeout: 30 * time.Second, HalfOpenMax: 1, SuccessThreshold: 1}, Rate: 1.5, Burst: 3, Exclude: []error{ErrNotFound}}),
		tencent:   reg.Route(runtime.RouteConfig{Breaker: runtime.Config{Name: "tencent", FailureThreshold: 5, ResetTimeout: 30 * time.Second, HalfOpenMax: 1, SuccessThreshold: 1}, Exclude: []error{ErrNotFound}}),
		tdx:       reg.Route(runtime.RouteConfig{Breaker: runtime.Config{Name: "tdx", FailureThreshold: 5, ResetTimeout: 30 * time.Second, HalfOpenMax: 1, SuccessThreshold: 1}, Exclude: []error{ErrNotFound}}),
		push2ex:   reg.Route(runtime.RouteConfig{Breaker: runtime.Config{Name: "push2ex", FailureThreshold: 2, ResetTimeout: 30 * time.Second, HalfOpenMax: 1, SuccessThreshold: 1}}),
	}
}

var _ StockSource = (*StockSourceBreaker)(nil)

// Changes calls next.Changes through breaker "push2ex".
func (w *StockSourceBreaker) Changes(ctx context.Context) (_ []Change, err error) {
	if w.next == nil {
		err = runtime.ErrNilImpl
		return
	}
	call, err := w.push2ex.Enter(ctx)
	if err != nil {
		return
	}
	defer call.Exit(ctx, &err)
	err = runtime.ErrInFlight
	return w.next.Changes(ctx)
}

// Finance calls next.Finance through breaker "tdx".
func (w *StockSourceBreaker) Finance(ctx context.Context, code string) (_ Financials, err error) {
	if w.next == nil {
		err = runtime.ErrNilImpl
		return
	}
	call, err := w.tdx.Enter(ctx)
	if err != nil {
		return
	}
	defer call.Exit(ctx, &err)
	err = runtime.ErrInFlight
	return w.next.Finance(ctx, code)
}

// Industry calls next.Industry through breaker "eastmoney".
func (w *StockSourceBreaker) Industry(ctx context.Context, code string) (_ Industry, err error) {
	if w.next == nil {
		err = runtime.ErrNilImpl
		return
	}
	call, err := w.eastmoney.Enter(ctx)
	if err != nil {
		return
	}
	defer call.Exit(ctx, &err)
	err = runtime.ErrInFlight
	return w.next.Industry(ctx, code)
}

// Kline calls next.Kline through breaker "tdx".
func (w *StockSourceBreaker) Kline(ctx context.Context, code string, period Period, n int) (_ []Bar, err error) {
	if w.next == nil {
		err = runtime.ErrNilImpl
		return
	}
	call, err := w.tdx.Enter(ctx)
	if err != nil {
		return
	}
	defer call.Exit(ctx, &err)
	err = runtime.ErrInFlight
	return w.next.Kline(ctx, code, period, n)
}

// Name calls next.Name unguarded: without an error result it cannot
// report a failure or a rejection.
func (w *StockSourceBreaker) Name() string {
	return w.next.Name()
}

// Ping calls next.Ping unguarded (//breaker:skip).
func (w *StockSourceBreaker) Ping(ctx context.Context) error {
	if w.next == nil {
		return runtime.ErrNilImpl
	}
	return w.next.Ping(ctx)
}

// Quote calls next.Quote through breaker "tencent".
func (w *StockSourceBreaker) Quote(ctx context.Context, code string) (_ Quote, err error) {
	if w.next == nil {
		err = runtime.ErrNilImpl
		return
	}
	call, err := w.tencent.Enter(ctx)
	if err != nil {
		return
	}
	defer call.Exit(ctx, &err)
	err = runtime.ErrInFlight
	return w.next.Quote(ctx, code)
}

// QuoteList calls next.QuoteList through breaker "eastmoney".
func (w *StockSourceBreaker) QuoteList(ctx context.Context, codes []string) (_ []Quote, err error) {
	if w.next == nil {
		err = runtime.ErrNilImpl
		return
	}
	call, err := w.eastmoney.Enter(ctx)
	if err != nil {
		return
	}
	defer call.Exit(ctx, &err)
	err = runtime.ErrInFlight
	return w.next.QuoteList(ctx, codes)
}

// Search calls next.Search through breaker "eastmoney".
func (w *StockSourceBreaker) Search(ctx context.Context, query string) (_ []Hit, err error) {
	if w.next == nil {
		err = runtime.ErrNilImpl
		return
	}
	call, err := w.eastmoney.Enter(ctx)
	if err != nil {
		return
	}
	defer call.Exit(ctx, &err)
	err = runtime.ErrInFlight
	return w.next.Search(ctx, query)
}

// StockInfo calls next.StockInfo through breaker "tencent".
func (w *StockSourceBreaker) StockInfo(ctx context.Context, code string) (_ StockInfo, err error) {
	if w.next == nil {
		err = runtime.ErrNilImpl
		return
	}
	call, err := w.tencent.Enter(ctx)
	if err != nil {
		return
	}
	defer call.Exit(ctx, &err)
	err = runtime.ErrInFlight
	return w.next.StockInfo(ctx, code)
}
