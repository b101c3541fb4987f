package runtime

import (
	"context"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/breakergen/breakergen/runtime/internal/core"
)

// Limiter is a token bucket: it refills at a rate of tokens per second up to
// a burst, and each call takes one token. Limiters are shared by name through
// [Registry.Limiter]; the zero value is not usable. A Limiter is safe for
// concurrent use.
//
// The clock is read under the limiter's lock, so a goroutine descheduled
// between looking at the time and claiming a token cannot be refused on a
// stale reading.
type Limiter struct {
	name      string
	clock     Clock
	unlimited atomic.Bool     // rate is +Inf: what the paths test without the lock
	err       *RateLimitError // preallocated refusal
	reg       *Registry       // its registry's Sharer may take waits over; nil in tests

	mu     sync.Mutex // guards rate, burst, tokens and last (Registry.UpdateRateLimit changes the first two)
	rate   float64    // tokens per second; +Inf for no limit
	burst  int
	tokens float64   // may be negative: tokens reserved by waiting calls
	last   time.Time // when tokens was last brought up to date
}

func newLimiter(name string, clock Clock, rate float64, burst int) *Limiter {
	rate, burst = normRate(rate, burst)
	l := &Limiter{name: name, clock: clock, rate: rate, burst: burst,
		tokens: float64(burst), err: &RateLimitError{Name: name}}
	l.unlimited.Store(math.IsInf(rate, 1))
	return l
}

// set makes rate and burst the limiter's settings from now on (see
// [Registry.UpdateRateLimit]), the tokens it holds cut to the new burst,
// and returns the old ones.
func (l *Limiter) set(rate float64, burst int) (oldRate float64, oldBurst int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	oldRate, oldBurst = l.rate, l.burst
	if math.IsInf(oldRate, 1) {
		l.tokens, l.last = float64(burst), time.Time{} // a new bucket, full
	} else {
		l.advanceLocked(l.clock.Now())
		l.tokens = min(l.tokens, float64(burst))
	}
	l.rate, l.burst = rate, burst
	l.unlimited.Store(math.IsInf(rate, 1))
	return oldRate, oldBurst
}

// Name returns the limiter's name.
func (l *Limiter) Name() string { return l.name }

// Rate returns the refill rate in tokens per second and the burst.
func (l *Limiter) Rate() (perSecond float64, burst int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.rate, l.burst
}

// advanceLocked brings tokens up to now.
func (l *Limiter) advanceLocked(now time.Time) {
	if l.last.IsZero() {
		l.last = now
		return
	}
	if el := now.Sub(l.last); el > 0 {
		l.tokens = min(float64(l.burst), l.tokens+el.Seconds()*l.rate)
		l.last = now
	}
}

// Allow takes a token if one is available now, without waiting.
func (l *Limiter) Allow() bool {
	if l.unlimited.Load() {
		return true
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.advanceLocked(l.clock.Now())
	if l.tokens >= 1 {
		l.tokens--
		return true
	}
	return false
}

// Wait takes a token, waiting for one if needed. The wait is bounded by ctx's
// deadline and, when maxWait > 0, by maxWait: when the token cannot arrive
// within maxWait, or strictly before the deadline, Wait returns an error matching [ErrRateLimited] at once,
// without taking anything. When ctx ends during the wait, Wait gives the
// token back and returns ctx.Err(). With neither bound the wait is unbounded.
func (l *Limiter) Wait(ctx context.Context, maxWait time.Duration) error {
	if l.unlimited.Load() {
		return nil
	}
	if ctx == nil {
		ctx = context.Background()
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if ok, err := l.shareWait(ctx, maxWait); ok {
		return err
	}
	l.mu.Lock()
	now := l.clock.Now()
	l.advanceLocked(now)
	if l.tokens >= 1 {
		l.tokens--
		l.mu.Unlock()
		return nil
	}
	// At a tiny rate the token may be centuries away: past the largest
	// Duration, a conversion would come out negative and admit at once.
	wait := time.Duration(math.MaxInt64)
	if w := math.Ceil((1 - l.tokens) / l.rate * float64(time.Second)); w < float64(math.MaxInt64) {
		wait = time.Duration(w)
	}
	if maxWait > 0 && wait > maxWait {
		l.mu.Unlock()
		return l.err
	}
	if dl, ok := ctx.Deadline(); ok && !now.Add(wait).Before(dl) {
		l.mu.Unlock()
		return l.err
	}
	l.tokens-- // reserved: the token that arrives after wait is ours
	l.mu.Unlock()

	if core.Sleep(ctx, wait, l.clock.AfterFunc) {
		return nil
	}
	l.Refund() // the reserved token: the call is not made
	return ctx.Err()
}

// Refund gives back a token that Allow or Wait took for a call that was
// not made after all (a later step refused it), up to the burst. With a
// fleet that shares the limiter's bucket ([Registry.Share], a
// [TokenRefunder]), the token goes back to the fleet's bucket.
func (l *Limiter) Refund() {
	if l.unlimited.Load() || l.shareRefund() {
		return
	}
	l.mu.Lock()
	l.advanceLocked(l.clock.Now())
	l.tokens = min(float64(l.burst), l.tokens+1)
	l.mu.Unlock()
}
