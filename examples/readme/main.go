package readme

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/breakergen/breakergen/runtime"
	"github.com/breakergen/breakergen/runtime/httphealth"
)

// HTTPQuoteSource stands for a real client of the quote API; it answers
// from a map, or with the error set for a code.
type HTTPQuoteSource struct {
	BaseURL string
	Errs    map[string]error
}

// NewHTTPQuoteSource returns a client of the API at baseURL.
func NewHTTPQuoteSource(baseURL string) *HTTPQuoteSource {
	return &HTTPQuoteSource{BaseURL: baseURL, Errs: map[string]error{}}
}

// Quote returns the quote of code.
func (s *HTTPQuoteSource) Quote(ctx context.Context, code string) (Quote, error) {
	if err := s.Errs[code]; err != nil {
		return Quote{}, err
	}
	return Quote{Code: code, Price: 1688}, nil
}

// Kline returns days bars of code.
func (s *HTTPQuoteSource) Kline(ctx context.Context, code string, days int) ([]Bar, error) {
	return make([]Bar, days), nil
}

// Service is the user's code: it depends on a QuoteSource, nothing else.
type Service struct{ src QuoteSource }

// NewService returns a service reading from src.
func NewService(src QuoteSource) *Service { return &Service{src: src} }

// Wire builds the service the way the README shows, makes one call and
// describes its outcome; it returns the mux serving the health endpoints.
func Wire(ctx context.Context, baseURL string) (string, *http.ServeMux) {
	reg := runtime.NewRegistry()
	var src QuoteSource = NewQuoteSourceBreaker(NewHTTPQuoteSource(baseURL), reg)
	svc := NewService(src) // your code sees a QuoteSource, as before

	var outcome string
	q, err := svc.src.Quote(ctx, "600519")
	switch {
	case errors.Is(err, runtime.ErrOpen):
		// the breaker is open: serve something else, don't retry now
	case errors.Is(err, runtime.ErrRateLimited):
		// no token before the deadline or maxwait
	case err != nil:
		// the upstream's own error, as it returned it
	}
	if err != nil {
		outcome = runtime.Brief(err)
	} else {
		outcome = fmt.Sprintf("%s %.2f", q.Code, q.Price)
	}

	mux := http.NewServeMux()
	mux.Handle("/ops/", http.StripPrefix("/ops", httphealth.New(reg,
		httphealth.WithDisplayName("eastmoney", "东方财富 East Money"))))
	return outcome, mux
}
