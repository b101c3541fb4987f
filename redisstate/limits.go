package redisstate

import (
	"context"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
	"golang.org/x/time/rate"

	"github.com/breakergen/breakergen/runtime"
)

// limit is one shared name's local fallback: a bucket at the local share
// of the limiter's rate, made at the first wait that needs it, and set to
// the limiter's current rate and burst at every wait (an operator's
// [runtime.Registry.UpdateRateLimit] applies while Redis is away, too).
type limit struct {
	mu     sync.Mutex    // guards local's creation and its changes of rate and burst
	local  *rate.Limiter // nil until the first wait that needs it
	credit atomic.Int64  // tokens given back while Redis was away, taken first
}

// bucket returns the fallback bucket, at rate r and burst from now on.
// A change keeps the tokens the bucket holds, brought up to date at the
// old rate and cut to the new burst, as the runtime's own limiter does:
// raising the rate or the burst hands out no tokens at once, lowering
// the burst leaves no more than it.
func (lim *limit) bucket(r float64, burst int) *rate.Limiter {
	lim.mu.Lock()
	defer lim.mu.Unlock()
	switch {
	case lim.local == nil:
		lim.local = rate.NewLimiter(rate.Limit(r), burst)
	case lim.local.Limit() != rate.Limit(r) || lim.local.Burst() != burst:
		now := time.Now()
		lim.local.SetLimitAt(now, rate.Limit(r))
		lim.local.SetBurstAt(now, burst) // the next reservation cuts the tokens to it
		for {
			n := lim.credit.Load() // tokens given back count against the burst too
			if n <= int64(burst) || lim.credit.CompareAndSwap(n, int64(burst)) {
				break
			}
		}
	}
	return lim.local
}

// gcraScript is the generic cell rate algorithm on the server's clock:
// KEYS[1] holds the theoretical arrival time (TAT, in microseconds of
// Redis TIME). ARGV: the emission interval (1/rate) and the burst in
// interval units, both microseconds, and the longest wait the caller
// accepts (-1: any). It returns the wait before the caller's token, after
// reserving it, or -1 (nothing taken) when that wait is longer.
var gcraScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local interval = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local maxwait = tonumber(ARGV[3])
local tat = tonumber(redis.call('GET', KEYS[1]) or now)
if tat < now then tat = now end
local wait = tat + interval - now - burst
if wait < 0 then wait = 0 end
if maxwait >= 0 and wait > maxwait then return -1 end
local newtat = tat + interval
redis.call('SET', KEYS[1], string.format('%d', newtat), 'PX', math.ceil((newtat - now) / 1000) + 1000)
return wait
`)

// refundScript gives back a token reserved by a call that gave up.
var refundScript = redis.NewScript(`
local tat = tonumber(redis.call('GET', KEYS[1]))
if tat then redis.call('SET', KEYS[1], string.format('%d', tat - tonumber(ARGV[1])), 'KEEPTTL') end
return 0
`)

// Wait takes a token of a shared name from the fleet's bucket in Redis,
// or, while Redis is away, from the local fallback bucket. The wait is
// bounded by maxWait (when > 0) and ends strictly before ctx's deadline;
// a refused call or one whose ctx ends takes no token.
func (s *sharer) Wait(ctx context.Context, l *runtime.Limiter, maxWait time.Duration) (handled bool, err error) {
	f := (*Fleet)(s)
	lim, ok := f.limits[l.Name()]
	if !ok {
		return false, nil
	}
	r, burst := l.Rate()
	if math.IsInf(r, 1) {
		return true, nil
	}
	bound := time.Duration(-1) // no bound
	if maxWait > 0 {
		bound = maxWait
	}
	if dl, ok := ctx.Deadline(); ok {
		left := time.Until(dl) - time.Microsecond // strictly before
		if left < 0 {
			return true, runtime.ErrRateLimited
		}
		if bound < 0 || left < bound {
			bound = left
		}
	}
	if f.up.Load() {
		start := time.Now()
		wait, err := f.reserve(l.Name(), r, burst, bound)
		if err == nil {
			if wait < 0 {
				return true, runtime.ErrRateLimited
			}
			if bound >= 0 && wait > bound-time.Since(start) {
				// A slow answer: the wait would end past the bound.
				go func() { _ = f.refund(l.Name(), r) }()
				return true, runtime.ErrRateLimited
			}
			if !sleep(ctx, wait) {
				go func() { _ = f.refund(l.Name(), r) }()
				return true, ctx.Err()
			}
			return true, nil
		}
		// Redis did not answer, up to the timeout: that time counts
		// against maxWait and the deadline.
		if bound >= 0 {
			if bound -= time.Since(start); bound < 0 {
				return true, runtime.ErrRateLimited
			}
		}
	}
	return true, lim.wait(ctx, r*f.opt.share, burst, bound)
}

var _ runtime.TokenRefunder = (*sharer)(nil)

// RefundToken gives back a token that Wait took for a call that was not
// made after all ([runtime.Limiter.Refund]): to the fleet's bucket in
// Redis, or, while Redis is away, to the local fallback bucket (up to its
// burst). It reports false for a name the fleet does not share.
func (s *sharer) RefundToken(l *runtime.Limiter) bool {
	f := (*Fleet)(s)
	lim, ok := f.limits[l.Name()]
	if !ok {
		return false
	}
	r, burst := l.Rate()
	if math.IsInf(r, 1) {
		return true
	}
	if f.up.Load() && f.refund(l.Name(), r) == nil {
		return true
	}
	for {
		n := lim.credit.Load()
		if n >= int64(burst) || lim.credit.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// reserve runs the GCRA script; wait < 0 is a refusal.
func (f *Fleet) reserve(name string, r float64, burst int, bound time.Duration) (wait time.Duration, err error) {
	interval := 1e6 / r
	maxwait := int64(-1)
	if bound >= 0 {
		maxwait = bound.Microseconds()
	}
	var us int64
	err = f.do(func(ctx context.Context) error {
		var err error
		us, err = gcraScript.Run(ctx, f.rdb, []string{f.opt.prefix + "rate:" + name},
			int64(math.Ceil(interval)), int64(float64(burst)*interval), maxwait).Int64()
		return err
	})
	if err != nil {
		return 0, err
	}
	if us < 0 {
		return -1, nil
	}
	return time.Duration(us) * time.Microsecond, nil
}

func (f *Fleet) refund(name string, r float64) error {
	return f.do(func(ctx context.Context) error {
		return refundScript.Run(ctx, f.rdb, []string{f.opt.prefix + "rate:" + name}, int64(math.Ceil(1e6/r))).Err()
	})
}

// wait takes a token from the local fallback bucket, at rate r and burst.
func (lim *limit) wait(ctx context.Context, r float64, burst int, bound time.Duration) error {
	local := lim.bucket(r, burst)
	for n := lim.credit.Load(); n > 0; n = lim.credit.Load() {
		if lim.credit.CompareAndSwap(n, n-1) {
			return nil // a token given back
		}
	}
	res := local.Reserve()
	d := res.Delay()
	if !res.OK() || (bound >= 0 && d > bound) {
		res.Cancel()
		return runtime.ErrRateLimited
	}
	if !sleep(ctx, d) {
		res.Cancel()
		return ctx.Err()
	}
	return nil
}

// sleep waits d or until ctx ends; it reports whether d ran its course.
func sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
