package redisstate

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/breakergen/breakergen/runtime"
)

// outgoing is a transition of this process's own to tell the fleet about.
type outgoing struct {
	name   string
	to     runtime.State
	from   runtime.State
	reason string
	window time.Duration // OPEN: the window from at
	reset  time.Duration // the breaker's reset window: how long a close stays news
	at     time.Time     // when it happened (monotonic: only for the time elapsed)
	mode   string        // not "": an operator's mode to write instead (see modes.go)
}

// Transition queues a trip or a probe's success for the publisher. It is
// called under the breaker's lock: it never blocks, and the outbox keeps
// the news however much comes at once (see outbox).
func (s *sharer) Transition(b *runtime.Breaker, ev runtime.Event, window time.Duration) {
	f := (*Fleet)(s)
	switch {
	case ev.To == runtime.Open:
	case ev.From == runtime.HalfOpen && ev.To == runtime.Closed:
	default:
		return
	}
	o := outgoing{name: ev.Source, from: ev.From, to: ev.To, reason: ev.Reason, window: window,
		reset: b.Config().ResetTimeout, at: time.Now()}
	f.ownMu.Lock()
	if o.to == runtime.Open {
		f.own[o.name] = o
	} else {
		delete(f.own, o.name)
	}
	f.ownMu.Unlock()
	f.outbox.put(o)
}

// publisher writes this process's trips and probe results to Redis, in
// order, while Redis is up (a trip made while it is away stays local).
func (f *Fleet) publisher() {
	defer f.wg.Done()
	for {
		select {
		case <-f.ctx.Done():
			return
		case <-f.outbox.wake:
		}
		for f.ctx.Err() == nil {
			o, ok := f.outbox.take()
			if !ok {
				break
			}
			switch {
			case !f.up.Load():
				if o.mode != "" {
					f.modes2pending(o.name)
				}
			case o.mode != "":
				f.publishMode(o.name, false)
			default:
				f.publish(o)
			}
		}
	}
}

// publish writes one transition: for a trip, the note with the window
// left as its expiry and an open message; for a probe's success, a close
// message, and a closed mark that tells a peer whose window ends later
// that the fleet has recovered. Either releases the probe lease, after the
// message: a success deletes it, a failure lets it expire with the new
// window.
func (f *Fleet) publish(o outgoing) {
	m := message{V: version, Kind: kindOpen, Name: o.name, Origin: f.opt.origin, Reason: o.reason}
	left := o.window - time.Since(o.at)
	if o.to == runtime.Open {
		if left < time.Millisecond {
			return // over already
		}
		m.MS = left.Milliseconds()
	} else {
		m.Kind = kindClose
	}
	_ = f.do(func(ctx context.Context) error {
		_, err := f.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			if m.Kind == kindOpen {
				p.Set(ctx, f.noteKey(o.name), marshal(note{V: version, Origin: f.opt.origin, Reason: o.reason,
					Instance: f.instance}), left)
				p.Del(ctx, f.closedKey(o.name))
			} else {
				p.Del(ctx, f.noteKey(o.name))
				p.Set(ctx, f.closedKey(o.name), f.opt.origin, max(o.reset, time.Second))
			}
			p.Publish(ctx, f.channel, marshal(m))
			if o.from == runtime.HalfOpen { // our probe's result: the lease is done
				if m.Kind == kindOpen {
					// It ends with the new window, so that no process
					// probes before its own window ends.
					p.PExpire(ctx, f.leaseKey(o.name), left)
				} else {
					p.Del(ctx, f.leaseKey(o.name))
				}
			}
			return nil
		})
		return err
	})
}

// leaseScript takes the probe lease of a name unless the fleet has just
// recovered: the origin of the recovery (a closed mark), -1 for the lease
// taken (or ours already: the holder of a failed probe's lease, which ends
// with the new window, may go on), else the lease's time left in
// milliseconds.
var leaseScript = redis.NewScript(`
local closed = redis.call('GET', KEYS[2])
if closed then return closed end
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return -1 end
if redis.call('GET', KEYS[1]) == ARGV[1] then
	redis.call('PEXPIRE', KEYS[1], ARGV[2])
	return -1
end
return redis.call('PTTL', KEYS[1])
`)

// Probe is ProbeLease without the lease's length; the runtime calls
// ProbeLease.
func (s *sharer) Probe(b *runtime.Breaker) (probe bool, retry time.Duration) {
	probe, _, retry = s.ProbeLease(b)
	return probe, retry
}

// ProbeLease decides who probes when b's OPEN period ends: the process
// that takes the lease, held for twice the longest a probe may run
// (b.ProbeWindow: the reset window, or a route's longer timeout). The
// holder admits probes for one such window and goes back to OPEN when it
// had no call to probe with (LeaseLapsed), so that every probe it admits
// ends inside the lease: a lease that ran out under a holder still
// HALF_OPEN let the next process take it and probe too. The others wait
// for its result, asking again when the holder stops admitting probes
// (and gives the lease back, if it had no call) and when its lease runs
// out (a holder that died). With Redis away, every process probes for
// itself, with no lease.
func (s *sharer) ProbeLease(b *runtime.Breaker) (probe bool, lease, retry time.Duration) {
	f := (*Fleet)(s)
	name := b.Name()
	if !f.up.Load() {
		f.probesAlone(name)
		return true, 0, 0
	}
	hold := b.ProbeWindow() // the reset window, or a longer route timeout
	lease = 2 * hold
	var res any
	err := f.do(func(ctx context.Context) error {
		var err error
		res, err = leaseScript.Run(ctx, f.rdb, []string{f.leaseKey(name), f.closedKey(name)},
			f.opt.origin, max(lease.Milliseconds(), 1)).Result()
		return err
	})
	if err != nil {
		f.probesAlone(name)
		return true, 0, 0
	}
	switch v := res.(type) {
	case string: // recovered while our window ran
		b.PeerClose(cut(v), "probe succeeded, recovered")
		return false, 0, hold
	case int64:
		if v == -1 {
			f.opt.logger.Debug("redisstate: took the probe lease", "origin", f.opt.origin, "breaker", name,
				"lease", lease)
			return true, lease, 0
		}
		if v >= 0 {
			return false, 0, retryAfter(time.Duration(v)*time.Millisecond, hold)
		}
	}
	return false, 0, hold // a lease with no expiry is not ours: ask again later
}

// retryAfter is when to ask again for a lease that another process holds
// for left: a little after the holder stops admitting probes, one hold
// before the lease ends, as it gives the lease back then if it had no
// call to probe with; or, past that, a little after the lease ends.
func retryAfter(left, hold time.Duration) time.Duration {
	if left > hold {
		return left - hold + max(hold/8, 10*time.Millisecond)
	}
	return left + 5*time.Millisecond
}

// releaseScript deletes the probe lease if it is still ours.
var releaseScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`)

// LeaseLapsed gives back the probe lease of b, which went back to OPEN
// with no call to probe with, so that a process whose window ends before
// the lease would have may take it at once. A lease that Redis does not
// release now runs out by itself.
func (s *sharer) LeaseLapsed(b *runtime.Breaker) {
	f := (*Fleet)(s)
	if !f.up.Load() {
		return
	}
	name := b.Name()
	_ = f.do(func(ctx context.Context) error {
		return releaseScript.Run(ctx, f.rdb, []string{f.leaseKey(name)}, f.opt.origin).Err()
	})
	f.opt.logger.Debug("redisstate: gave the probe lease back, no call to probe with", "origin", f.opt.origin,
		"breaker", name)
}

// probesAlone logs a probe this process decides on alone, Redis away.
func (f *Fleet) probesAlone(name string) {
	f.opt.logger.Debug("redisstate: probing alone, Redis is away", "origin", f.opt.origin, "breaker", name)
}

// republish sends again this process's trips whose window still runs,
// when Redis comes back: those made while it was away never went out,
// and a restarted Redis has lost the notes of the others.
func (f *Fleet) republish() {
	f.ownMu.Lock()
	var again []outgoing
	for name, o := range f.own {
		b, ok := f.reg.Lookup(name)
		if !ok || o.window-time.Since(o.at) < time.Millisecond || b.State() != runtime.Open {
			delete(f.own, name)
			continue
		}
		again = append(again, o)
	}
	f.ownMu.Unlock()
	for _, o := range again {
		f.outbox.put(o)
	}
}
