package contend

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/afex/hystrix-go/hystrix"
	"github.com/eapache/go-resiliency/breaker"
	"github.com/failsafe-go/failsafe-go"
	"github.com/failsafe-go/failsafe-go/circuitbreaker"
	"github.com/sony/gobreaker/v2"

	"github.com/breakergen/breakergen/bench/quote"
)

// GobreakerSettings are s in gobreaker's terms: ReadyToTrip after
// s.Threshold consecutive failures, one probe in HALF_OPEN.
func GobreakerSettings(name string, s Settings) gobreaker.Settings {
	th := uint32(s.Threshold)
	return gobreaker.Settings{
		Name:        name,
		MaxRequests: 1,
		Timeout:     s.Reset,
		ReadyToTrip: func(c gobreaker.Counts) bool { return c.ConsecutiveFailures >= th },
	}
}

// GobreakerExecute calls through gobreaker's CircuitBreaker.Execute.
type GobreakerExecute struct {
	CB   *gobreaker.CircuitBreaker[quote.Quote]
	next quote.Quoter
}

// NewGobreakerExecute wraps next in a gobreaker.CircuitBreaker.
func NewGobreakerExecute(next quote.Quoter, s Settings) *GobreakerExecute {
	return &GobreakerExecute{
		CB:   gobreaker.NewCircuitBreaker[quote.Quote](GobreakerSettings("quotes", s)),
		next: upstreamFor(next, s),
	}
}

// Quote implements quote.Quoter.
func (w *GobreakerExecute) Quote(ctx context.Context, code string) (quote.Quote, error) {
	return w.CB.Execute(func() (quote.Quote, error) { return w.next.Quote(ctx, code) })
}

// GobreakerTwoStep calls through gobreaker's TwoStepCircuitBreaker: Allow,
// then the call, then done with its error.
type GobreakerTwoStep struct {
	CB   *gobreaker.TwoStepCircuitBreaker[quote.Quote]
	next quote.Quoter
}

// NewGobreakerTwoStep wraps next in a gobreaker.TwoStepCircuitBreaker.
func NewGobreakerTwoStep(next quote.Quoter, s Settings) *GobreakerTwoStep {
	return &GobreakerTwoStep{
		CB:   gobreaker.NewTwoStepCircuitBreaker[quote.Quote](GobreakerSettings("quotes", s)),
		next: upstreamFor(next, s),
	}
}

// Quote implements quote.Quoter.
func (w *GobreakerTwoStep) Quote(ctx context.Context, code string) (quote.Quote, error) {
	done, err := w.CB.Allow()
	if err != nil {
		return quote.Quote{}, err
	}
	q, err := w.next.Quote(ctx, code)
	done(err)
	return q, err
}

// NewFailsafeBreaker builds a failsafe-go breaker from s: open after
// s.Threshold consecutive failures for s.Reset, one probe success closes it.
func NewFailsafeBreaker(s Settings) circuitbreaker.CircuitBreaker[quote.Quote] {
	return circuitbreaker.NewBuilder[quote.Quote]().
		WithFailureThreshold(uint(s.Threshold)).
		WithDelay(s.Reset).
		WithSuccessThreshold(1).
		Build()
}

// FailsafeExecutor calls through a failsafe-go executor built once with
// failsafe.With(cb), whose Get runs the call.
type FailsafeExecutor struct {
	CB   circuitbreaker.CircuitBreaker[quote.Quote]
	exec failsafe.Executor[quote.Quote]
	next quote.Quoter
}

// NewFailsafeExecutor wraps next in failsafe.With(cb).
func NewFailsafeExecutor(next quote.Quoter, s Settings) *FailsafeExecutor {
	cb := NewFailsafeBreaker(s)
	return &FailsafeExecutor{CB: cb, exec: failsafe.With(cb), next: upstreamFor(next, s)}
}

// Quote implements quote.Quoter.
func (w *FailsafeExecutor) Quote(ctx context.Context, code string) (quote.Quote, error) {
	return w.exec.Get(func() (quote.Quote, error) { return w.next.Quote(ctx, code) })
}

// FailsafeBreaker uses failsafe-go's breaker bare: TryAcquirePermit, the
// call, then RecordSuccess or RecordError.
type FailsafeBreaker struct {
	CB   circuitbreaker.CircuitBreaker[quote.Quote]
	next quote.Quoter
}

// NewFailsafeBreakerBare wraps next in a bare failsafe-go breaker.
func NewFailsafeBreakerBare(next quote.Quoter, s Settings) *FailsafeBreaker {
	return &FailsafeBreaker{CB: NewFailsafeBreaker(s), next: upstreamFor(next, s)}
}

// Quote implements quote.Quoter.
func (w *FailsafeBreaker) Quote(ctx context.Context, code string) (quote.Quote, error) {
	if !w.CB.TryAcquirePermit() {
		return quote.Quote{}, circuitbreaker.ErrOpen
	}
	q, err := w.next.Quote(ctx, code)
	if err != nil {
		w.CB.RecordError(err)
	} else {
		w.CB.RecordSuccess()
	}
	return q, err
}

// Resiliency calls through eapache/go-resiliency's breaker.Run.
type Resiliency struct {
	B    *breaker.Breaker
	next quote.Quoter
}

// NewResiliency wraps next in a go-resiliency breaker: s.Threshold errors
// open it (go-resiliency counts errors within a minute), one success
// closes it.
func NewResiliency(next quote.Quoter, s Settings) *Resiliency {
	return &Resiliency{B: breaker.New(s.Threshold, 1, s.Reset), next: upstreamFor(next, s)}
}

// Quote implements quote.Quoter.
func (w *Resiliency) Quote(ctx context.Context, code string) (quote.Quote, error) {
	var q quote.Quote
	err := w.B.Run(func() error {
		var err error
		q, err = w.next.Quote(ctx, code)
		return err
	})
	return q, err
}

// Hystrix calls through afex/hystrix-go's hystrix.Do. hystrix keeps its
// circuits in a process-wide table by name, so every Hystrix gets a name
// of its own.
type Hystrix struct {
	Name string
	next quote.Quoter
}

var hystrixSeq atomic.Int64

// NewHystrix configures a fresh hystrix command: it opens when, within its
// rolling 10 s window, at least s.Threshold requests were made and every one
// failed (hystrix trips on an error percentage over a request volume, not
// on consecutive failures); the command timeout is a minute, so that it
// never fires, and up to 1024 calls may run at once (more than any
// benchmark or behaviour test makes; hystrix fills a channel with that many
// tickets per command, so it is not larger).
func NewHystrix(next quote.Quoter, s Settings) *Hystrix {
	name := fmt.Sprintf("quotes-%d", hystrixSeq.Add(1))
	hystrix.ConfigureCommand(name, HystrixConfig(s))
	return &Hystrix{Name: name, next: upstreamFor(next, s)}
}

// HystrixConfig is s in hystrix's terms.
func HystrixConfig(s Settings) hystrix.CommandConfig {
	return hystrix.CommandConfig{
		Timeout:                int(time.Minute / time.Millisecond),
		MaxConcurrentRequests:  1024,
		RequestVolumeThreshold: s.Threshold,
		SleepWindow:            int(s.Reset / time.Millisecond),
		ErrorPercentThreshold:  100,
	}
}

// Quote implements quote.Quoter.
func (w *Hystrix) Quote(ctx context.Context, code string) (quote.Quote, error) {
	var q quote.Quote
	err := hystrix.Do(w.Name, func() error {
		var err error
		q, err = w.next.Quote(ctx, code)
		return err
	}, nil)
	return q, err
}
