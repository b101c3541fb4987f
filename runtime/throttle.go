package runtime

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"
)

// The throttle's window: two minutes of ten-second buckets.
const (
	throttleBucket  = 10 * time.Second
	throttleBuckets = 12
)

// maxThrottleK is the largest K a throttle takes; NaN, infinite and
// non-positive values mean no throttle.
const maxThrottleK = math.MaxFloat64

// throttle is adaptive client-side throttling (Config.Throttle), as the
// Google SRE book describes it: over the window, with requests R and
// accepted A, a new call is refused with probability
// max(0, (R − K·A) / (R + 1)), before it is counted; a refused call counts
// in R.
//
// The buckets roll lazily, on the registry's clock, without a clock read
// per call: the first call of a bucket reads the clock, rolls the window
// and arms a timer for the end of the bucket; until the timer has fired,
// calls count in the current bucket as they are. The timer is not re-armed
// by itself, so an idle throttle holds no timer. The counts are atomics:
// admitting a call reads the sums of the past buckets (summed when the
// window rolls) and the current bucket's counts, and adds one to the
// current bucket's requests; an accepted call adds one to its accepted
// count. A call that races a roll may see the window without the bucket
// that just ended.
type throttle struct {
	k         atomic.Uint64 // K's float64 bits; Registry.Update changes it
	err       error         // the refusal, built once
	stamps    *stamps
	clock     Clock
	throttled atomic.Uint64

	epoch    atomic.Int64 // the current bucket: time / throttleBucket
	armed    atomic.Bool  // a timer will roll the window at the bucket's end
	requests [throttleBuckets]atomic.Uint64
	accepted [throttleBuckets]atomic.Uint64
	pastR    atomic.Uint64 // the requests of every bucket but the current one
	pastA    atomic.Uint64 // the accepted calls of every bucket but the current one

	mu sync.Mutex // guards rolling (a move of epoch, the buckets it clears) and arming
}

func newThrottle(name string, k float64, stamps *stamps, clock Clock) *throttle {
	t := &throttle{
		stamps: stamps,
		clock:  clock,
		err:    &loadError{msg: fmt.Sprintf("breaker %s: throttled, upstream accepting too few calls", name), is: ErrThrottled},
	}
	t.setK(k)
	return t
}

// setK makes k the throttle's K from the next call on; the counts stay.
func (t *throttle) setK(k float64) { t.k.Store(math.Float64bits(k)) }

// K returns the throttle's K.
func (t *throttle) K() float64 { return math.Float64frombits(t.k.Load()) }

// admit decides whether a call may go, with draw as the source of uniform
// numbers in [0, 1): draw is called only when the probability is above
// zero. A refused call is counted at once; the caller counts an admitted
// one with request when it goes out.
func (t *throttle) admit(draw func() float64) bool {
	e := t.epoch.Load()
	if !t.armed.Load() {
		e = t.rollArm()
	}
	p := t.probabilityAt()
	if p <= 0 || draw() >= p {
		return true
	}
	t.requests[e%throttleBuckets].Add(1)
	t.throttled.Add(1)
	return false
}

// request counts an admitted call in the current bucket.
func (t *throttle) request() {
	t.requests[t.epoch.Load()%throttleBuckets].Add(1)
}

// accept counts an accepted call (a success) in the current bucket.
func (t *throttle) accept() {
	t.accepted[t.epoch.Load()%throttleBuckets].Add(1)
}

// probability returns the current refusal probability.
func (t *throttle) probability() float64 {
	t.mu.Lock()
	t.rollLocked(t.stamps.now())
	t.mu.Unlock()
	return t.probabilityAt()
}

// rollArm rolls the window to the clock's time and arms the timer that
// rolls it at the end of the bucket; it returns the current epoch.
func (t *throttle) rollArm() int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.stamps.now()
	e := t.rollLocked(now)
	if !t.armed.Load() {
		t.armed.Store(true)
		next := time.Duration((e+1)*int64(throttleBucket) - now)
		t.clock.AfterFunc(max(next, 1), func() {
			t.mu.Lock()
			t.armed.Store(false)
			t.rollLocked(t.stamps.now())
			t.mu.Unlock()
		})
	}
	return e
}

// probabilityAt returns the refusal probability over the buckets as they
// are.
func (t *throttle) probabilityAt() float64 {
	i := t.epoch.Load() % throttleBuckets
	r := t.pastR.Load() + t.requests[i].Load()
	a := t.pastA.Load() + t.accepted[i].Load()
	excess := float64(r) - t.K()*float64(a)
	if excess <= 0 {
		return 0 // the common case, without a division
	}
	return excess / float64(r+1)
}

// rollLocked moves the window to instant now (nanoseconds), clearing the
// buckets that left it, and returns the current epoch. A clock that went
// back leaves it as it is.
func (t *throttle) rollLocked(now int64) int64 {
	e := now / int64(throttleBucket)
	cur := t.epoch.Load()
	if e <= cur {
		return cur
	}
	for i := cur + 1; i <= e && i <= cur+throttleBuckets; i++ {
		t.requests[i%throttleBuckets].Store(0)
		t.accepted[i%throttleBuckets].Store(0)
	}
	var r, a uint64
	for i := range throttleBuckets {
		if i != int(e%throttleBuckets) {
			r += t.requests[i].Load()
			a += t.accepted[i].Load()
		}
	}
	t.pastR.Store(r)
	t.pastA.Store(a)
	t.epoch.Store(e)
	return e
}

// reset forgets every count.
func (t *throttle) reset() {
	t.mu.Lock()
	defer t.mu.Unlock()
	for i := range throttleBuckets {
		t.requests[i].Store(0)
		t.accepted[i].Store(0)
	}
	t.pastR.Store(0)
	t.pastA.Store(0)
	t.throttled.Store(0)
}

// WithRand sets the source of the random draws the registry's throttles
// (Config.Throttle) and jittered OPEN periods (Config.ResetJitter) make,
// so that tests can pin them. r is not safe for
// concurrent use: the registry guards it with a mutex. Default: the
// package-level functions of math/rand/v2. A nil r is ignored.
func WithRand(r *rand.Rand) Option {
	return func(reg *Registry) {
		if r == nil {
			return
		}
		var mu sync.Mutex
		reg.draw = func() float64 {
			mu.Lock()
			defer mu.Unlock()
			return r.Float64()
		}
	}
}
