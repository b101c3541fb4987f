package core

import (
	"context"
	"time"
)

// Injector is implemented by the Ops of a breaker whose settings inject
// faults or latency (runtime.Config.Fault, Latency). A route asks once,
// when it is made, whether Injecting is true, and then sends every call
// off the fast path through Inject; a route of a breaker that injects
// nothing never calls it, so injection costs nothing when off.
type Injector interface {
	// Injecting reports whether the breaker injects anything.
	Injecting() bool
	// Inject runs the injection step of the call admitted as w, after
	// every admission step: the latency wait, honouring ctx and the
	// route's per-try timeout (0: none), then the fault draw. It returns
	// w, or an error after which the call is settled and the upstream
	// must not be called: an injected fault (matching
	// runtime.ErrInjected), counted as a failure; ctx's error when it
	// ended the wait, settled as that error; or, when the timeout ended
	// it, an injected failure that matches context.DeadlineExceeded too,
	// as the timeout would end an upstream that slow.
	Inject(ctx context.Context, w uint64, timeout time.Duration) (uint64, error)
	// InjectStaged is Inject for a recorded call: with the error, it
	// also returns how the call is to be recorded, as it was settled
	// (Failed for a delay that ctx's deadline cut short, Refused for an
	// injected fault or a caller's cancel, ...).
	InjectStaged(ctx context.Context, w uint64, timeout time.Duration) (uint64, Stage, error)
}

// InjectorOf returns b's Injector when its breaker injects, else nil.
func InjectorOf(b *Breaker) Injector {
	if inj, ok := b.Ops.(Injector); ok && inj.Injecting() {
		return inj
	}
	return nil
}
