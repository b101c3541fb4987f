package marketdata

import (
	"context"
	"errors"

	"github.com/breakergen/breakergen/runtime"
)

// Service builds the stock page from several sources. It expects them
// wrapped in breakers ([NewStockSourceBreaker], [NewFundFlowSourceBreaker]),
// and degrades section by section: a section whose source fails, or whose
// breaker is open, is left empty and listed in [Overview.Gaps], so one
// upstream down never takes the whole page with it.
//
// A Service is safe for concurrent use when its sources are.
type Service struct {
	stocks StockSource
	flows  FundFlowSource
}

// NewService returns a service reading from stocks and flows.
func NewService(stocks StockSource, flows FundFlowSource) *Service {
	return &Service{stocks: stocks, flows: flows}
}

// Overview is the stock page: the sections that could be filled, and why
// the others could not.
type Overview struct {
	Quote   Quote      // from tencent
	Bars    []Bar      // the last 20 daily bars, from tdx
	Finance Financials // from tdx
	Flow    FundFlow   // from eastmoney
	Gaps    []Gap      // the sections left empty, in page order
}

// Gap is a section of an [Overview] that could not be filled.
type Gap struct {
	// Section is "quote", "kline", "finance" or "fundflow".
	Section string
	// Skipped is true when the section's breaker was open: the upstream
	// was not called at all.
	Skipped bool
	// Err is the error the source returned.
	Err error
}

// Overview fills the stock page of code. It returns an error only when no
// section could be filled; the error then joins every section's error.
func (s *Service) Overview(ctx context.Context, code string) (Overview, error) {
	var ov Overview
	var errs []error
	note := func(section string, err error) {
		if err != nil {
			ov.Gaps = append(ov.Gaps, Gap{Section: section, Skipped: errors.Is(err, runtime.ErrOpen), Err: err})
			errs = append(errs, err)
		}
	}
	var err error
	ov.Quote, err = s.stocks.Quote(ctx, code)
	note("quote", err)
	ov.Bars, err = s.stocks.Kline(ctx, code, PeriodDay, 20)
	note("kline", err)
	ov.Finance, err = s.stocks.Finance(ctx, code)
	note("finance", err)
	ov.Flow, err = s.flows.FundFlow(ctx, code)
	note("fundflow", err)
	if len(errs) == 4 {
		return ov, errors.Join(errs...)
	}
	return ov, nil
}
