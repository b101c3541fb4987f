package redisstate

import (
	"container/list"
	"sync"

	"github.com/breakergen/breakergen/runtime"
)

// The outbox holds what this process has to tell the fleet, for the
// publisher: its own trips and probe results, and the modes its operators
// set. The breakers hand their news over under their locks, so handing
// it over never waits on Redis; and the news is never dropped while Redis
// answers, however much comes at once. A queue of fixed length dropped
// what came past it: an outage that tripped 1,000 keys of a family at
// once reached the peers as 258 trips, and 600 Isolates as 256, the rest
// waiting for a resync that only an outage brings.
//
// It holds one entry per breaker and kind of news (a transition, a
// mode), so that it never holds more entries than twice the breakers
// that have news to tell: newer news of a breaker that the publisher has
// not taken yet replaces the older, which the peers no longer need, and
// goes to the back of the queue, after the news of other breakers that
// came before it (a Resume and the trip that follows it go out in that
// order).
type outbox struct {
	mu    sync.Mutex // guards queue and at
	queue list.List  // of outgoing, oldest first
	at    map[outKey]*list.Element
	wake  chan struct{} // the outbox has news
}

// outKey is what an entry of the outbox is about: a breaker's
// transitions, or its mode.
type outKey struct {
	name string
	mode bool
}

func newOutbox() *outbox {
	return &outbox{at: map[outKey]*list.Element{}, wake: make(chan struct{}, 1)}
}

// put adds o, replacing the news of its breaker and kind that waits. A
// probe's result that is replaced keeps its part in the lease: the
// publisher still ends the lease that the probe held, with the trip's
// window or at once (see [Fleet.publish]), so that a trip right after a
// probe's success does not leave the lease to run its full length. It
// never blocks.
func (b *outbox) put(o outgoing) {
	k := outKey{name: o.name, mode: o.mode != ""}
	b.mu.Lock()
	if e, ok := b.at[k]; ok {
		if old := e.Value.(outgoing); old.from == runtime.HalfOpen && o.mode == "" {
			o.from = runtime.HalfOpen
		}
		e.Value = o
		b.queue.MoveToBack(e)
	} else {
		b.at[k] = b.queue.PushBack(o)
	}
	b.mu.Unlock()
	select {
	case b.wake <- struct{}{}:
	default:
	}
}

// take removes and returns the oldest news, if any.
func (b *outbox) take() (outgoing, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	e := b.queue.Front()
	if e == nil {
		return outgoing{}, false
	}
	o := b.queue.Remove(e).(outgoing)
	delete(b.at, outKey{name: o.name, mode: o.mode != ""})
	return o, true
}
