package runtime

import (
	"sync"
	"time"
)

// Event is one state transition of one breaker: an entry of the degradation
// log.
type Event struct {
	// Time is when the transition happened.
	Time time.Time `json:"timestamp"`
	// Source is the breaker's name.
	Source string `json:"source"`
	// From and To are the states before and after.
	From State `json:"from_state"`
	To   State `json:"to_state"`
	// Reason says why, in one line of at most 200 characters, with no
	// control character and no URL credentials (see [Brief]); never empty.
	Reason string `json:"reason"`
}

// defaultEventLimit is what Events(limit <= 0) returns at most.
const defaultEventLimit = 50

// ring is a fixed-capacity buffer of the newest events.
type ring struct {
	mu       sync.Mutex // guards buf, next
	buf      []Event    // grows up to capacity, then wraps
	capacity int
	next     int // index the next event goes to, once buf is full
}

// ringPrealloc is how many events a ring makes room for up front; a larger
// capacity grows as events come, so that WithEventCapacity(math.MaxInt)
// costs what the log holds, not a crash at NewRegistry.
const ringPrealloc = 1024

func newRing(capacity int) *ring {
	return &ring{buf: make([]Event, 0, min(capacity, ringPrealloc)), capacity: capacity}
}

func (r *ring) add(ev Event) {
	r.mu.Lock()
	if len(r.buf) < r.capacity {
		r.buf = append(r.buf, ev)
		r.next = len(r.buf) % r.capacity
	} else {
		r.buf[r.next] = ev
		r.next = (r.next + 1) % len(r.buf)
	}
	r.mu.Unlock()
}

// newest returns up to limit events, newest first.
func (r *ring) newest(limit int) []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := len(r.buf)
	limit = min(limit, n)
	out := make([]Event, 0, limit)
	for i := 1; i <= limit; i++ {
		out = append(out, r.buf[(r.next-i+len(r.buf))%len(r.buf)])
	}
	return out
}

// eventQueue is a fixed-capacity FIFO of events waiting for their log line
// and hooks, in the order the registry recorded them. An event is queued
// when it is recorded, and may be delivered once it is ready: a
// transition's Event is recorded before its breaker's new state is stored
// and is ready after (see Breaker.transitionLocked), so that a hook reads
// the state its Event brought, and the events behind it wait. Its buffer
// is allocated at the first push. It is guarded by its registry's qmu.
type eventQueue struct {
	buf        []queued
	capacity   int
	head, size int    // buf[head] is the oldest of size events
	pushed     uint64 // events ever pushed: the number of the next one
}

// queued is an event in an eventQueue.
type queued struct {
	ev    Event
	ready bool
}

func newEventQueue(capacity int) eventQueue { return eventQueue{capacity: capacity} }

func (q *eventQueue) len() int { return q.size }

// push appends ev, dropping the oldest event if the queue is full; it
// returns ev's number (for ready) and reports whether it dropped one.
func (q *eventQueue) push(ev Event, ready bool) (n uint64, dropped bool) {
	if q.buf == nil {
		q.buf = make([]queued, q.capacity)
	}
	if q.size == len(q.buf) {
		q.pop()
		dropped = true
	}
	q.buf[(q.head+q.size)%len(q.buf)] = queued{ev, ready}
	q.size++
	n = q.pushed
	q.pushed++
	return n, dropped
}

// ready lets event number n be delivered; nothing if it was dropped.
func (q *eventQueue) ready(n uint64) {
	first := q.pushed - uint64(q.size)
	if n >= first && n < q.pushed {
		q.buf[(q.head+int(n-first))%len(q.buf)].ready = true
	}
}

// headReady reports whether the oldest event may be delivered; the queue
// must not be empty.
func (q *eventQueue) headReady() bool { return q.buf[q.head].ready }

// pop removes and returns the oldest event; the queue must not be empty.
func (q *eventQueue) pop() Event {
	ev := q.buf[q.head].ev
	q.buf[q.head] = queued{} // let its strings go
	q.head = (q.head + 1) % len(q.buf)
	q.size--
	return ev
}

// reasonOf is the reason of a transition caused by err: Brief(err), or for a
// panic "panic: <value>", made as safe to show as a Brief line; "" (the
// transition's default) for nil.
func reasonOf(err error) string {
	if pe := panicOf(err); pe != nil {
		msg := pe.Error()
		if e, ok := pe.value.(error); ok {
			msg = redactURLErrors(msg, e)
		}
		return redactWords(foldSpace(msg))
	}
	return Brief(err)
}

// panicOf returns the first *panicError in err's tree, or nil. Its walk
// is bounded (walkErrors): a failed probe's reason is made with the
// breaker's lock held, so an error that unwraps to itself, on which
// errors.As never returns, or an Unwrap that panics must not stop it.
func panicOf(err error) (pe *panicError) {
	walkErrors(err, func(e error) {
		if p, ok := e.(*panicError); ok && pe == nil {
			pe = p
		}
	})
	return pe
}

// defaultReason is the reason of a transition whose caller gave none;
// period is how long the state that ends lasted, as set when it began (an
// OPEN period: the reset, or a cooldown).
func defaultReason(from, to State, period time.Duration) string {
	switch {
	case from == Open && to == HalfOpen && period > 0:
		return "reset " + period.String() + " elapsed, probing"
	case from == Open && to == HalfOpen:
		return "reset elapsed, probing"
	case from == HalfOpen && to == Closed:
		return "probe succeeded, recovered"
	case from == HalfOpen && to == Open:
		return "probe failed, re-opened"
	case from == Open && to == Closed:
		return "reset, recovered"
	case from == Closed && to == Open:
		return "failure threshold reached"
	case from == Closed && to == HalfOpen:
		return "probing"
	case to.isMode():
		return operatorReason(to, "")
	case from.isMode():
		return operatorReason(Closed, "")
	}
	return from.String() + " → " + to.String()
}
