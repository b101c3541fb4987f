package runtime

import "github.com/breakergen/breakergen/runtime/internal/core"

// SetEnviron replaces the environment NewRegistry reads, for tests, and
// forgets which variables were warned about, as a new process would, so
// that a test that expects a warning passes however often it runs.
func SetEnviron(env []string) (restore func()) {
	old := environ
	environ = func() []string { return env }
	envWarned.Clear()
	return func() {
		environ = old
		envWarned.Clear()
	}
}

// ForgetCallStates clears the flag set by the first WithBudget or
// WithProvenance of the process, for tests that need a process that has used
// neither; restore sets it back. Tests using it must not run in parallel.
func ForgetCallStates() (restore func()) {
	old := core.InUse.Load()
	core.InUse.Store(0)
	return func() { core.InUse.Store(old) }
}

// SetPeriod moves b to state period p (its state unchanged), for tests of
// what happens when the 32-bit period counter wraps.
func (b *Breaker) SetPeriod(p uint32) {
	b.mu.Lock()
	defer b.mu.Unlock()
	w := uint64(p)<<32 | b.state.Load()&0xffffffff
	b.fails.Store(w &^ 0xffffffff)
	b.probes.Store(w &^ 0xffffffff)
	if win := b.win.Load(); win != nil {
		win.mu.Lock()
		win.resetLocked(p)
		win.mu.Unlock()
	}
	b.state.Store(w)
}

// WindowFlagSet reports whether b's state word sends calls through the
// window's slow path.
func (b *Breaker) WindowFlagSet() bool { return b.state.Load()&windowFlag != 0 }

// MaxTracked is how many calls in flight a breaker times at most.
const MaxTracked = maxTracked

// AnchorSkew is how much earlier than the instant it records a time read
// back with the real clock may be (see stamps).
const AnchorSkew = anchorSkew

// SetProbeSeq sets the id of the period's last probe, for tests of what
// happens when the ids run out.
func (b *Breaker) SetProbeSeq(n uint64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.probeSeq = n
}

// ProbeIDs is how many probe ids one HALF_OPEN period gives out.
const ProbeIDs = probeMask >> probeShift

// QueueLen is how many events wait for their log line and hooks.
func (r *Registry) QueueLen() int {
	r.qmu.Lock()
	defer r.qmu.Unlock()
	return r.queue.len()
}

// WithEventQueueCapacity sets the capacity of the event queue (see
// EventQueueCapacity), for tests that fill it with a few transitions.
func WithEventQueueCapacity(n int) Option {
	return func(r *Registry) {
		if n >= 1 {
			r.queue = newEventQueue(n)
		}
	}
}

// LockFreeSuccesses returns how many of the successes in b's time window
// were counted without its lock (core.Window), 0 without such a window.
func (b *Breaker) LockFreeSuccesses() int {
	win := b.win.Load()
	if win == nil || win.fast == nil {
		return 0
	}
	win.mu.Lock()
	defer win.mu.Unlock()
	if !win.tagged {
		return 0
	}
	return win.fast.Sum(win.tagLocked(win.epoch), windowBuckets)
}
