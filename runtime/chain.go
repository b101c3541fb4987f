package runtime

import (
	"strings"
)

// Fallback is a backup implementation of X for a generated chain
// (NewXChain). Each fallback is guarded by its own breaker,
// "fallback:<Name>", with the settings of the interface's default route
// (overridable by name like any breaker); it gets the route's timeout,
// exclude and valid, one try per call, and no limiter.
type Fallback[X any] struct {
	// Name names the fallback's breaker, "fallback:<Name>".
	Name string
	// Impl answers when the sources before it could not.
	Impl X
}

// ChainError is the error of a chain call that no source answered. It
// names every source tried and why. errors.Is matches each source's own
// error; it matches [ErrOpen] only when every source was rejected by its
// breaker, and [ErrInvalid] when every source answered with invalid data.
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
		b.WriteString(s.Source + ": " + s.Why)
		if s.Err != nil && s.Why != "open" {
			b.WriteString(": " + Brief(s.Err))
		}
	}
	if len(e.Sources) == 0 {
		b.WriteString("no source was tried")
	}
	return b.String()
}

// Unwrap returns the sources' own errors (not the rejections, so that
// errors.Is(err, ErrOpen) holds only when every source was open).
func (e *ChainError) Unwrap() []error {
	var errs []error
	for _, s := range e.Sources {
		if s.Err != nil && s.Why != "open" {
			errs = append(errs, s.Err)
		}
	}
	return errs
}

// Is matches ErrOpen when every source was rejected by its breaker, and
// ErrInvalid when every source answered invalid data.
func (e *ChainError) Is(target error) bool {
	var why string
	switch target {
	case ErrOpen:
		why = "open"
	case ErrInvalid:
		why = "invalid"
	default:
		return false
	}
	for _, s := range e.Sources {
		if s.Why != why {
			return false
		}
	}
	return len(e.Sources) > 0
}
