package runtime

import (
	"context"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/breakergen/breakergen/runtime/internal/core"
)

// bulkhead is the Config.Concurrency slots of one breaker: at most
// slots.Limit calls in flight. A free slot is taken and freed with one
// atomic each (core.Slots); a call that finds none queues and waits, first
// come first served, for a slot that a finishing call hands over.
//
// A breaker keeps its bulkhead once it has one, whatever Registry.Update
// does to Config.Concurrency: the calls holding a slot give it back to the
// bulkhead they took it from. A new limit applies to new takers (see
// setLimit); without a limit, Limit is unlimited.
type bulkhead struct {
	slots core.Slots            // Waiting is len(waiters), readable without mu
	full  atomic.Uint64         // calls refused with ErrBulkheadFull
	err   atomic.Pointer[error] // the refusal, built once per limit

	mu      sync.Mutex    // guards waiters
	waiters []*slotWaiter // oldest first
}

// slotWaiter is a call queued for a slot; granted and ready are set once,
// under the bulkhead's mu, when a slot is handed to it.
type slotWaiter struct {
	granted bool
	ready   chan struct{}
}

func newBulkhead(name string, limit int) *bulkhead {
	h := &bulkhead{}
	h.slots.Grant = h.grant
	h.setLimit(name, limit)
	return h
}

// setLimit makes limit (0: none) the most slots taken at once from now
// on: calls holding a slot keep it, and a raised limit hands the new
// slots to the calls queued.
func (h *bulkhead) setLimit(name string, limit int) {
	msg := fmt.Sprintf("breaker %s: bulkhead full, all %d slots in use", name, limit)
	if limit == 1 {
		msg = fmt.Sprintf("breaker %s: bulkhead full, its one slot in use", name)
	}
	err := error(&loadError{msg: msg, is: ErrBulkheadFull})
	h.err.Store(&err)
	if limit <= 0 {
		h.slots.Limit.Store(math.MaxInt64)
	} else {
		h.slots.Limit.Store(int64(limit))
	}
	h.grant()
}

// refusal is the error of a call the bulkhead refused.
func (h *bulkhead) refusal() error { return *h.err.Load() }

// take takes a slot, waiting for one up to maxWait (when > 0) or until
// ctx ends. A call that finds others queued queues behind them. The
// refusal matches ErrBulkheadFull, and ctx.Err() too when ctx ended the
// wait.
func (h *bulkhead) take(ctx context.Context, clock Clock, maxWait time.Duration) error {
	if h.slots.Waiting.Load() == 0 && h.slots.Take() { // TryTake, whatever Routed says
		return nil
	}
	return h.wait(ctx, clock, maxWait)
}

func (h *bulkhead) wait(ctx context.Context, clock Clock, maxWait time.Duration) error {
	if err := ctx.Err(); err != nil {
		h.full.Add(1)
		return &waitError{full: h.refusal(), ctx: err}
	}
	w := &slotWaiter{ready: make(chan struct{})}
	h.mu.Lock()
	h.waiters = append(h.waiters, w)
	h.slots.Waiting.Add(1)
	h.grantLocked() // a slot freed before we were counted in Waiting
	h.mu.Unlock()

	var expired chan struct{}
	if maxWait > 0 {
		expired = make(chan struct{})
		t := clock.AfterFunc(maxWait, func() { close(expired) })
		defer t.Stop()
	}
	var err error
	select {
	case <-w.ready:
		return nil
	case <-expired:
		err = h.refusal()
	case <-ctx.Done():
		err = &waitError{full: h.refusal(), ctx: ctx.Err()}
	}
	h.mu.Lock()
	if w.granted {
		// Handed a slot as the wait ended: the call is refused all the
		// same, so the slot goes to the next in line.
		h.mu.Unlock()
		h.slots.Release()
	} else {
		h.removeLocked(w)
		h.mu.Unlock()
	}
	h.full.Add(1)
	return err
}

// grant hands free slots to the oldest waiters.
func (h *bulkhead) grant() {
	h.mu.Lock()
	h.grantLocked()
	h.mu.Unlock()
}

func (h *bulkhead) grantLocked() {
	for len(h.waiters) > 0 && h.slots.Take() {
		w := h.waiters[0]
		h.waiters[0] = nil
		h.waiters = h.waiters[1:]
		h.slots.Waiting.Add(-1)
		w.granted = true
		close(w.ready)
	}
}

// removeLocked takes w, which has not been granted a slot, out of the queue.
func (h *bulkhead) removeLocked(w *slotWaiter) {
	for i, x := range h.waiters {
		if x == w {
			h.waiters = append(h.waiters[:i], h.waiters[i+1:]...)
			h.slots.Waiting.Add(-1)
			return
		}
	}
}

// refused is the outcome of a call the throttle or the bulkhead refused:
// Ignored, but not counted in Stats.Ignored (Throttled and BulkheadFull
// count it).
const refused = Ignored + 1

// unmade is the outcome of a call that was admitted and then not made
// (a limiter's wait that its ctx ended, a limiter's refusal): Ignored, but
// never judged against InFlight, whatever the wait.
const unmade = Ignored + 2

// loadError is the refusal of a bulkhead or a throttle: built once per
// breaker, it names the breaker and matches its sentinel.
type loadError struct {
	msg string
	is  error
}

func (e *loadError) Error() string        { return e.msg }
func (e *loadError) Is(target error) bool { return target == e.is }

// waitError is the refusal of a call whose ctx ended while it waited for a
// slot: it matches ErrBulkheadFull and the ctx's error.
type waitError struct{ full, ctx error }

func (e *waitError) Error() string   { return e.full.Error() + ": " + e.ctx.Error() }
func (e *waitError) Unwrap() []error { return []error{e.full, e.ctx} }

// enterLoad is the admission's last steps for a breaker with a throttle or
// a bulkhead, after the breaker (and the limiter) admitted the call as w:
// the throttle, then a slot. A refusal frees the breaker's admission and
// counts as neither success nor failure (nor as ignored: Stats counts it in
// Throttled or BulkheadFull). It returns the admission, timed from now
// when the breaker times its calls from their slot (slotTracked).
func (b *Breaker) enterLoad(ctx context.Context, w uint64, maxWait time.Duration) (uint64, error) {
	t := b.throttle.Load()
	if t != nil && !t.admit(b.reg.draw) {
		b.refuse(w)
		return 0, t.err
	}
	if h := b.bulkhead.Load(); h != nil && b.holdsSlot(w) {
		if ctx == nil {
			ctx = context.Background()
		}
		if err := h.take(ctx, b.reg.clock, maxWait); err != nil {
			b.refuse(w)
			return 0, err
		}
	}
	if t != nil {
		t.request()
	}
	if b.slotTracked.Load() && w&windowFlag == 0 { // else timed from its admission (see admitTracked)
		w = b.trackSlot(w)
	}
	return w, nil
}

// refuse frees the breaker's admission w of a call the throttle or the
// bulkhead refused, and takes it back out of Stats.Calls, which admit
// counted it in (WithCallCounts), never below zero (a Reset may have
// zeroed Calls since).
func (b *Breaker) refuse(w uint64) {
	b.outcome(w, refused, nil)
	for b.count {
		n := b.calls.Load()
		if n == 0 || b.calls.CompareAndSwap(n, n-1) {
			break
		}
	}
}

// exitLoad frees the slot of the call admitted as w, if it took one, and
// counts an accepted request for the throttle.
func (b *Breaker) exitLoad(w uint64, o Outcome) {
	if h := b.bulkhead.Load(); h != nil && b.holdsSlot(w) {
		h.slots.Release()
	}
	if t := b.throttle.Load(); t != nil && o == Success {
		t.accept()
	}
}

// load is what a breaker keeps for Config.Concurrency and Config.Throttle:
// nil for what it does not have. Registry.Update swaps them (see
// update.go): the bulkhead, once there, stays (unlimited when Concurrency
// is turned off); the throttle goes when it is turned off.
type load struct {
	bulkhead atomic.Pointer[bulkhead]
	throttle atomic.Pointer[throttle]
	// throttledBefore counts the refusals of throttles that
	// Registry.Update turned off, so that Stats.Throttled stays a total
	// since the breaker was made (or Reset), as a metric's counter must.
	throttledBefore atomic.Uint64
}

// resetLoad clears the load counts for Breaker.Reset; slots in use stay
// taken until their calls end.
func (b *Breaker) resetLoad() {
	if h := b.bulkhead.Load(); h != nil {
		h.full.Store(0)
	}
	if t := b.throttle.Load(); t != nil {
		t.reset()
	}
	b.throttledBefore.Store(0)
}

// loadStats fills the load figures of st.
func (b *Breaker) loadStats(st *Stats) {
	if h := b.bulkhead.Load(); h != nil {
		if b.cfg().Concurrency > 0 { // else turned off by Registry.Update
			st.InFlight = int(h.slots.InUse.Load())
			st.Concurrency = b.cfg().Concurrency
		}
		st.BulkheadFull = h.full.Load()
	}
	st.Throttled = b.throttledBefore.Load()
	if t := b.throttle.Load(); t != nil {
		st.Throttle = t.K()
		st.ThrottleProbability = t.probability()
		st.Throttled += t.throttled.Load()
	}
}

// bareSlots returns the slots of a breaker with a bulkhead and no throttle,
// which generated code takes and frees itself (core.Breaker.Slots), or nil.
func (b *Breaker) bareSlots() *core.Slots {
	h := b.bulkhead.Load()
	if h == nil || b.throttle.Load() != nil || b.slotTracked.Load() {
		return nil
	}
	return &h.slots
}

// newLoad sets up the bulkhead and the throttle of cfg, if any, and marks
// the breaker's state word so that its calls leave the fast paths.
func (b *Breaker) newLoad() {
	if n := b.cfg().Concurrency; n > 0 {
		b.bulkhead.Store(newBulkhead(b.cfg().Name, n))
	}
	if k := b.cfg().Throttle; k > 0 && k <= maxThrottleK {
		b.throttle.Store(newThrottle(b.cfg().Name, max(k, 1), &b.stamps, b.reg.clock))
	}
	b.loadFlagsLocked()
}

// loadFlagsLocked sets the state word flags and slot timing that the
// breaker's bulkhead, throttle and window call for; b.mu is held (or b is
// being made).
func (b *Breaker) loadFlagsLocked() {
	b.flags &^= core.LoadFlag
	if b.cfg().Concurrency > 0 || b.throttle.Load() != nil {
		b.flags |= core.LoadFlag
	}
	win := b.win.Load()
	b.slotTracked.Store(b.cfg().Concurrency > 0 && win != nil && win.tracking)
}
