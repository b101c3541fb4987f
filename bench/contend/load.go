package contend

import (
	"context"

	"github.com/failsafe-go/failsafe-go"
	"github.com/failsafe-go/failsafe-go/adaptivethrottler"
	"github.com/failsafe-go/failsafe-go/bulkhead"

	"github.com/breakergen/breakergen/runtime"

	"github.com/breakergen/breakergen/bench/quote"
)

// Load control (SPEC §9): the generated wrapper on a breaker with a
// bulkhead or an adaptive throttle, beside failsafe-go's bulkhead and
// adaptive throttler on the same call. The load benchmarks time the
// success path: a bulkhead that is never full, a throttle whose upstream
// accepts every call, which is what load control costs a healthy call.

// HugeConcurrency is a bulkhead limit no benchmark reaches.
const HugeConcurrency = 1 << 20

// ThrottleK is the K of the throttles the benchmarks build (the SRE book's
// suggestion).
const ThrottleK = 2

// NewBreakergenLoad returns the generated [quote.QuoterBreaker] on reg,
// whose breaker "quotes" it makes with concurrency slots and a throttle of
// K = throttle (0 for none) besides s. The breaker is made before the
// wrapper, so its settings win over the annotation's.
func NewBreakergenLoad(next quote.Quoter, reg *runtime.Registry, s Settings, concurrency int, throttle float64) quote.Quoter {
	reg.Breaker(runtime.Config{Name: "quotes", FailureThreshold: s.Threshold, ResetTimeout: s.Reset,
		Concurrency: concurrency, Throttle: throttle})
	return quote.NewQuoterBreaker(next, reg)
}

// FailsafeBulkhead uses failsafe-go's bulkhead bare: AcquirePermit (which
// waits for a permit until ctx ends, as breakergen's slot does), the call,
// then ReleasePermit, deferred so that a panic frees the permit too.
type FailsafeBulkhead struct {
	BH   bulkhead.Bulkhead[quote.Quote]
	next quote.Quoter
}

// NewFailsafeBulkhead wraps next in a bare failsafe-go bulkhead of limit
// permits.
func NewFailsafeBulkhead(next quote.Quoter, limit uint) *FailsafeBulkhead {
	return &FailsafeBulkhead{BH: bulkhead.New[quote.Quote](limit), next: next}
}

// Quote implements quote.Quoter.
func (w *FailsafeBulkhead) Quote(ctx context.Context, code string) (quote.Quote, error) {
	if err := w.BH.AcquirePermit(ctx); err != nil {
		return quote.Quote{}, err
	}
	defer w.BH.ReleasePermit()
	return w.next.Quote(ctx, code)
}

// FailsafeThrottler uses failsafe-go's adaptive throttler bare:
// TryAcquirePermit, the call, then RecordSuccess or RecordError.
type FailsafeThrottler struct {
	T    adaptivethrottler.AdaptiveThrottler[quote.Quote]
	next quote.Quoter
}

// NewFailsafeThrottler wraps next in a bare failsafe-go adaptive throttler
// with its defaults.
func NewFailsafeThrottler(next quote.Quoter) *FailsafeThrottler {
	return &FailsafeThrottler{T: adaptivethrottler.NewWithDefaults[quote.Quote](), next: next}
}

// Quote implements quote.Quoter.
func (w *FailsafeThrottler) Quote(ctx context.Context, code string) (quote.Quote, error) {
	if !w.T.TryAcquirePermit() {
		return quote.Quote{}, adaptivethrottler.ErrExceeded
	}
	q, err := w.next.Quote(ctx, code)
	if err != nil {
		w.T.RecordError(err)
	} else {
		w.T.RecordSuccess()
	}
	return q, err
}

// FailsafePolicy calls through a failsafe-go executor of one policy built
// once with failsafe.With, whose Get runs the call: the way failsafe-go's
// documentation composes its policies.
type FailsafePolicy struct {
	exec failsafe.Executor[quote.Quote]
	next quote.Quoter
}

// NewFailsafeBulkheadExecutor wraps next in failsafe.With(a bulkhead of
// limit permits).
func NewFailsafeBulkheadExecutor(next quote.Quoter, limit uint) *FailsafePolicy {
	return &FailsafePolicy{exec: failsafe.With[quote.Quote](bulkhead.New[quote.Quote](limit)), next: next}
}

// NewFailsafeThrottlerExecutor wraps next in failsafe.With(an adaptive
// throttler with its defaults).
func NewFailsafeThrottlerExecutor(next quote.Quoter) *FailsafePolicy {
	return &FailsafePolicy{exec: failsafe.With[quote.Quote](adaptivethrottler.NewWithDefaults[quote.Quote]()), next: next}
}

// Quote implements quote.Quoter.
func (w *FailsafePolicy) Quote(ctx context.Context, code string) (quote.Quote, error) {
	return w.exec.GetWithExecution(func(failsafe.Execution[quote.Quote]) (quote.Quote, error) {
		return w.next.Quote(ctx, code)
	})
}
