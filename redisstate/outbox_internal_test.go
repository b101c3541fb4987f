package redisstate

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/breakergen/breakergen/runtime"
)

// TestOutboxOrder: the outbox keeps one entry per breaker and kind of
// news; newer news of a breaker replaces what waits and goes to the back,
// after the news of other breakers that came before it, so that a Resume
// and the trip that follows go out in that order; a probe's result that a
// trip replaces keeps its part in the lease (from HALF_OPEN).
func TestOutboxOrder(t *testing.T) {
	b := newOutbox()
	b.put(outgoing{name: "a", to: runtime.Open, from: runtime.Closed})
	b.put(outgoing{name: "a", mode: "resume"})
	b.put(outgoing{name: "b", to: runtime.Open, from: runtime.Closed})
	b.put(outgoing{name: "a", to: runtime.Open, from: runtime.Closed, reason: "again"}) // replaces a's first trip
	b.put(outgoing{name: "c", to: runtime.Closed, from: runtime.HalfOpen})              // c's probe succeeded
	b.put(outgoing{name: "c", to: runtime.Open, from: runtime.Closed})                  // then it tripped again

	var got []string
	var last outgoing
	for {
		o, ok := b.take()
		if !ok {
			break
		}
		kind := "trip"
		if o.mode != "" {
			kind = o.mode
		}
		got = append(got, o.name+":"+kind)
		if o.name == "a" && o.mode == "" {
			assert.Equal(t, "again", o.reason, "the newer trip of a")
		}
		last = o
	}
	assert.Equal(t, []string{"a:resume", "b:trip", "a:trip", "c:trip"}, got)
	require.Equal(t, "c", last.name)
	assert.Equal(t, runtime.HalfOpen, last.from, "c's trip keeps the probe's part in the lease")
	assert.Empty(t, b.at, "nothing left keyed")
}
