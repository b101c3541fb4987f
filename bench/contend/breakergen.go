package contend

import (
	"log/slog"

	"github.com/breakergen/breakergen/runtime"

	"github.com/breakergen/breakergen/bench/quote"
)

// Registry returns a registry whose breakers "quotes" and "limited" (the
// names annotated on [quote.Quoter] and [quote.LimitedQuoter]) have the
// threshold and reset of s, that ignores the environment and logs
// nowhere; opts come last.
func Registry(s Settings, opts ...runtime.Option) *runtime.Registry {
	base := []runtime.Option{
		runtime.WithoutEnv(),
		runtime.WithLogger(slog.New(slog.DiscardHandler)),
		runtime.WithConfig(
			runtime.Config{Name: "quotes", FailureThreshold: s.Threshold, ResetTimeout: s.Reset},
			runtime.Config{Name: "limited", FailureThreshold: s.Threshold, ResetTimeout: s.Reset},
		),
	}
	return runtime.NewRegistry(append(base, opts...)...)
}

// NewBreakergen returns the generated wrapper around next, on reg:
// [quote.LimitedQuoterBreaker] when s.Limited, else [quote.QuoterBreaker].
func NewBreakergen(next quote.Quoter, reg *runtime.Registry, s Settings) quote.Quoter {
	if s.Limited {
		return quote.NewLimitedQuoterBreaker(next, reg)
	}
	return quote.NewQuoterBreaker(next, reg)
}

// NewBreakergenChain returns the generated chain around primary, on reg,
// with one fallback ("backup", the same upstream): [quote.QuoterChain]. In
// the success scenario the primary answers every call, the case SPEC §7
// bounds at 2x the plain wrapper.
func NewBreakergenChain(primary quote.Quoter, reg *runtime.Registry) *quote.QuoterChain {
	return quote.NewQuoterChain(primary, reg, runtime.Fallback[quote.Quoter]{Name: "backup", Impl: primary})
}
