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
// in R. The buckets roll lazily, when a call is admitted or Stats looks.
//
// The counts are atomics: admitting a call reads the clock once and the
// buckets once, and adds one to the current bucket's requests; an accepted
// call adds one to the accepted count of the bucket of the latest
// admission, without reading the clock.
type throttle struct {
	k         float64
	err       error // the refusal, built once
	throttled atomic.Uint64

	epoch    atomic.Int64 // the current bucket: time / throttleBucket
	requests [throttleBuckets]atomic.Uint64
	accepted [throttleBuckets]atomic.Uint64

	mu sync.Mutex // guards rolling: a move of epoch and the buckets it clears
}

func newThrottle(name string, k float64) *throttle {
	return &throttle{
		k:   k,
		err: &loadError{msg: fmt.Sprintf("breaker %s: throttled, upstream accepting too few calls", name), is: ErrThrottled},
	}
}

// admit decides whether a call may go at instant now (nanoseconds) with
// draw as the source of uniform numbers in [0, 1): draw is called only
// when the probability is above zero. A refused call is counted at once;
// the caller counts an admitted one with request when it goes out.
func (t *throttle) admit(now int64, draw func() float64) bool {
	e := t.roll(now)
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

// probability returns the refusal probability at instant now.
func (t *throttle) probability(now int64) float64 {
	t.roll(now)
	return t.probabilityAt()
}

// probabilityAt returns the refusal probability over the buckets as they
// are.
func (t *throttle) probabilityAt() float64 {
	var r, a uint64
	for i := range throttleBuckets {
		r += t.requests[i].Load()
		a += t.accepted[i].Load()
	}
	return max(0, (float64(r)-t.k*float64(a))/float64(r+1))
}

// roll moves the window to instant now, clearing the buckets that left it,
// and returns the current epoch. A clock that went back leaves it as it is.
func (t *throttle) roll(now int64) int64 {
	e := now / int64(throttleBucket)
	cur := t.epoch.Load()
	if e <= cur {
		return cur
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	cur = t.epoch.Load()
	if e <= cur {
		return cur
	}
	for i := cur + 1; i <= e && i <= cur+throttleBuckets; i++ {
		t.requests[i%throttleBuckets].Store(0)
		t.accepted[i%throttleBuckets].Store(0)
	}
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
	t.throttled.Store(0)
}

// WithRand sets the source of the random draws the registry's throttles
// make (Config.Throttle), so that tests can pin them. r is not safe for
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
