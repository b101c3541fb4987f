package runtime

import (
	"errors"
	"strings"

	"github.com/breakergen/breakergen/runtime/internal/core"
)

// Fallback is a backup implementation of X for a generated chain
// (NewXChain). Each fallback is guarded by its own breaker,
// "fallback:<Name>", with the settings of the interface's default route
// (overridable by name like any breaker); it gets the route's timeout,
// exclude and valid, one try per call, and no limiter.
type Fallback[X any] struct {
	// Name names the fallback's breaker, "fallback:<Name>". Give every
	// fallback one: the nameless ones share the breaker "fallback:" (the
	// registry warns about it).
	Name string
	// Impl answers when the sources before it could not.
	Impl X
}

// ChainError is the error of a chain call that no source answered. It
// names every source tried and why. errors.Is matches each source's own
// error; it matches [ErrOpen] only when every source was rejected by its
// breaker (OPEN, or ISOLATED by an operator), and [ErrInvalid] when every
// source answered with invalid data. A source that was called and
// answered with an error wrapping a rejection (of a guarded call it made
// itself) failed: its reason is "error", errors.Is and errors.As see its
// error, but not the rejection in it: that was not the chain's.
type ChainError struct {
	Sources []Skip
}

func (e *ChainError) Error() string {
	var b strings.Builder
	b.WriteString("breaker: every source failed: ")
	for i, s := range e.Sources {
		if i > 0 {
			b.WriteString("; ")
		}
		var oe *OpenError
		switch {
		case s.Why == "isolated" && errors.As(s.Err, &oe) && oe.Reason != "":
			b.WriteString(s.Source + ": " + oe.Reason) // "isolated by operator: maintenance"
		case s.Err != nil && !rejected(s.Why):
			b.WriteString(s.Source + ": " + s.Why + ": " + Brief(s.Err))
		default:
			b.WriteString(s.Source + ": " + s.Why)
		}
	}
	if len(e.Sources) == 0 {
		b.WriteString("no source was tried")
	}
	return b.String()
}

// rejected reports whether why says a source's breaker refused it.
func rejected(why string) bool { return why == "open" || why == "isolated" }

// Unwrap returns the sources' own errors (not the rejections, so that
// errors.Is(err, ErrOpen) holds only when every source was open), each
// behind a [sourceError].
func (e *ChainError) Unwrap() []error {
	var errs []error
	for _, s := range e.Sources {
		if s.Err != nil && !rejected(s.Why) {
			errs = append(errs, sourceError{s.Err})
		}
	}
	return errs
}

// sourceError is a source's own error in a ChainError: errors.Is and
// errors.As see through it, except to a rejection (ErrOpen, *OpenError)
// wrapped in it, which a guarded call the source made itself met, not the
// chain (ChainError.Is decides ErrOpen). It has no Unwrap, which would let
// errors.Is past it; the runtime's own walks of an error's tree
// (Retryable, the RetryAfter of an outcome, Brief) look through it.
type sourceError struct{ err error }

func (e sourceError) Error() string { return e.err.Error() }

func (e sourceError) Is(target error) bool { return target != ErrOpen && errors.Is(e.err, target) }

func (e sourceError) As(target any) bool {
	if _, ok := target.(**OpenError); ok {
		return false
	}
	return errors.As(e.err, target)
}

// Is matches ErrOpen when every source was rejected by its breaker, and
// ErrInvalid when every source answered invalid data.
func (e *ChainError) Is(target error) bool {
	var match func(why string) bool
	switch target {
	case ErrOpen:
		match = rejected
	case ErrInvalid:
		match = func(why string) bool { return why == "invalid" }
	default:
		return false
	}
	for _, s := range e.Sources {
		if !match(s.Why) {
			return false
		}
	}
	return len(e.Sources) > 0
}

// ChainAnswer counts how the calls of generated chains were answered: by
// Source (the breaker name that answered, the primary's when none did, or
// "stale"; for a key of a family, the family's name: a family's answers
// are its totals, never one series a key) and Kind: "live" (the primary
// answered), "fallback" (a fallback asked in order answered), "hedged" (a
// source asked as a hedge answered first), "stale" (the stale cache
// answered) or "none" (no source did).
//
// "live" answers are counted only when the registry counts calls
// ([WithCallCounts]), like successes: counting them would cost the chain's
// primary success path a shared write per call. The other kinds are on
// slower paths and always counted.
type ChainAnswer struct {
	Source string `json:"source"`
	Kind   string `json:"kind"`
	Count  uint64 `json:"count"`
}

// ChainAnswers returns the answer counts of every generated chain built on
// the registry since it was created, in source and kind order. Counts of
// zero are left out.
func (r *Registry) ChainAnswers() []ChainAnswer {
	var out []ChainAnswer
	for _, c := range r.answers.Counts() {
		out = append(out, ChainAnswer{Source: c.Source, Kind: c.Kind, Count: c.Count})
	}
	return out
}

func init() {
	core.AnswersOf = func(reg any) (*core.Answers, bool) {
		r := reg.(*Registry)
		return &r.answers, r.countCalls
	}
}
