package sim

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/breakergen/breakergen/runtime"
)

// Result is what one candidate setting did on a recording.
type Result struct {
	Candidate Candidate
	Calls     int // the breaker's recorded calls
	Trips     int // CLOSED → OPEN transitions
	Refused   int // calls the candidate's breaker refused
	Open      time.Duration
	// ToTrip are, for each outage (see [Outages]), the calls from its
	// first to the candidate's trip, the tripping call included; -1 for
	// an outage it did not trip in, 0 for one that began while it was not
	// CLOSED.
	ToTrip []int
	// FirstReason is the first trip's reason; "" without a trip.
	FirstReason string
	// Bands are the candidate's states over time: each from its At to
	// the next's (the last to End).
	Bands []Band
	End   time.Duration
}

// Band is a state from an instant on.
type Band struct {
	At    time.Duration
	State runtime.State
}

// errFailed is a recorded upstream failure, errInjected a recorded
// injected fault; the reason of the transitions they cause says which.
var (
	errFailed   = errors.New("recorded failure")
	errInjected = errors.New("recorded injected fault")
)

// cooldown asks for a recorded failure's cooldown; recordedCooldown wraps
// it in the failure's words, so that the reason (runtime.Brief) reads
// "retry after 30ms: recorded failure asking for 30ms" and names no type
// of this package's.
type cooldown time.Duration

func (cooldown) Error() string               { return "" }
func (c cooldown) RetryAfter() time.Duration { return time.Duration(c) }

func recordedCooldown(what string, d time.Duration) error {
	return fmt.Errorf("%s asking for %s%w", what, d, cooldown(d))
}

// pending is a call admitted and not yet ended.
type pending struct {
	end   time.Duration
	seq   int
	token runtime.Token
	call  Call
}

type pendingHeap []pending

func (h pendingHeap) Len() int { return len(h) }
func (h pendingHeap) Less(i, j int) bool {
	if h[i].end != h[j].end {
		return h[i].end < h[j].end
	}
	return h[i].seq < h[j].seq
}
func (h pendingHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *pendingHeap) Push(x any)   { *h = append(*h, x.(pending)) }
func (h *pendingHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// Options say how to replay.
type Options struct {
	// Outage is the run of failures that makes an outage (see [Outages]).
	Outage int
	// CarryLast gives a call that never reached the upstream (the recorded
	// breaker or its load control refused it), when the candidate admits
	// it, the outcome of the last call of that breaker that did; without
	// it such a call counts as neither, as a refusal counted live.
	CarryLast bool
}

// Replay plays the calls of rec made through c's breaker against c's
// setting, on a fresh registry with a synthetic clock that starts at the
// recording's start; the jitter's draws are seeded, so a replay is
// deterministic.
//
// A call starts at its recorded start and ends at its start plus its
// duration; at one instant ends come before starts, and calls keep the
// recording's order. A call whose recorded class says what the upstream
// did (success, failure, ignored, invalid, injected: a failure) is
// offered to the breaker and, if admitted, ends with that outcome. A call
// the recorded breaker or its load control refused never reached the
// upstream: it is offered all the same and, if admitted, counts as
// neither, or with o.CarryLast takes the outcome of the last call of that
// breaker that did reach it (a success when none did). A call the
// candidate refuses is counted in Refused.
func Replay(rec *Recording, c Candidate, o Options) Result {
	clk := newClock(rec.Start)
	var (
		mu     sync.Mutex // guards events and opened (hooks run outside the breaker's lock)
		events []runtime.Event
		opened int // CLOSED → OPEN transitions so far
	)
	reg := runtime.NewRegistry(runtime.WithoutEnv(), runtime.WithClock(clk),
		runtime.WithLogger(slog.New(slog.DiscardHandler)),
		runtime.WithRand(rand.New(rand.NewPCG(1, 2))),
		runtime.OnStateChange(func(ev runtime.Event) {
			mu.Lock()
			events = append(events, ev)
			if ev.From == runtime.Closed && ev.To == runtime.Open {
				opened++
			}
			mu.Unlock()
		}))
	b := reg.Breaker(c.Config)
	res := Result{Candidate: c, End: rec.End()}
	name := slices.Index(rec.Names, c.Name)

	var (
		ends  pendingHeap
		last  = Call{Class: Success} // the last upstream outcome
		trips []int                  // the index (among the breaker's calls) of each tripping call
		ctx   = context.Background()
		idx   int // the breaker's calls so far
	)
	// tripped attributes the trips since the last look to call i.
	tripped := func(i int) {
		mu.Lock()
		for len(trips) < opened {
			trips = append(trips, i)
		}
		mu.Unlock()
	}
	finish := func(p pending) {
		clk.advanceTo(p.end)
		switch p.call.Class {
		case Success:
			b.Release(p.token, nil)
		case Failure, Injected:
			err := errFailed
			if p.call.Class == Injected {
				err = errInjected
			}
			if p.call.Retry > 0 {
				err = recordedCooldown(err.Error(), p.call.Retry)
			}
			b.Release(p.token, err)
		default:
			b.Record(p.token, runtime.Ignored, nil)
		}
		tripped(p.seq)
	}
	var states []runtime.State // the state before each call of the breaker, for the outages
	for _, call := range rec.Calls {
		if call.Name != name {
			continue
		}
		for len(ends) > 0 && ends[0].end <= call.Start {
			finish(heap.Pop(&ends).(pending))
		}
		clk.advanceTo(call.Start)
		if call.Class.Upstream() {
			last = call
		} else if o.CarryLast {
			r := last
			r.Start, r.Dur, r.Line = call.Start, call.Dur, call.Line
			call = r
		}
		states = append(states, b.State())
		idx++
		t, err := b.Acquire(ctx)
		tripped(idx - 1)
		if err != nil {
			res.Refused++
			continue
		}
		p := pending{end: call.Start + call.Dur, seq: idx - 1, token: t, call: call}
		if call.Dur == 0 {
			finish(p)
			continue
		}
		heap.Push(&ends, p)
	}
	for len(ends) > 0 {
		finish(heap.Pop(&ends).(pending))
	}
	clk.advanceTo(res.End)
	res.Calls = idx

	mu.Lock()
	defer mu.Unlock()
	res.Bands = []Band{{0, runtime.Closed}}
	var openedAt time.Duration = -1
	for _, ev := range events {
		at := ev.Time.Sub(rec.Start)
		res.Bands = append(res.Bands, Band{at, ev.To})
		if ev.From == runtime.Closed && ev.To == runtime.Open {
			res.Trips++
			if res.FirstReason == "" {
				res.FirstReason = ev.Reason
			}
		}
		if ev.To == runtime.Open && openedAt < 0 {
			openedAt = at
		} else if ev.From == runtime.Open && ev.To != runtime.Open && openedAt >= 0 {
			res.Open += at - openedAt
			openedAt = -1
		}
	}
	if openedAt >= 0 {
		res.Open += max(res.End-openedAt, 0)
	}
	res.ToTrip = toTrip(Outages(rec, name, o.Outage), states, trips)
	return res
}

// Outages returns, for the breaker with index name in rec.Names, the
// index among its calls of the first call of each outage: a run of at
// least n of its calls in a row that failed upstream (failure or
// injected), calls refused before the upstream between them neither
// breaking nor lengthening the run.
func Outages(rec *Recording, name, n int) []int {
	var out []int
	run, first, i := 0, 0, 0
	for _, c := range rec.Calls {
		if c.Name != name {
			continue
		}
		switch {
		case c.Class == Failure || c.Class == Injected:
			if run == 0 {
				first = i
			}
			run++
			if run == n {
				out = append(out, first)
			}
		case c.Class.Upstream():
			run = 0
		}
		i++
	}
	return out
}

// toTrip returns, for each outage starting at call index o, the calls from
// o to the first trip at or after it (the tripping call included), -1 when
// none came before the next outage began, 0 when the breaker was not
// CLOSED at o.
func toTrip(outages []int, states []runtime.State, trips []int) []int {
	out := make([]int, len(outages))
	for k, o := range outages {
		if o < len(states) && states[o] != runtime.Closed {
			continue
		}
		out[k] = -1
		next := int(^uint(0) >> 1)
		if k+1 < len(outages) {
			next = outages[k+1]
		}
		for _, t := range trips {
			if t >= o && t < next {
				out[k] = t - o + 1
				break
			}
		}
	}
	return out
}

// itoa is strconv.Itoa, for the report.
func itoa(n int) string { return strconv.Itoa(n) }
