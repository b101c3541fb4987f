package prometheus

import (
	"sync"

	"github.com/breakergen/breakergen/runtime"
)

// failureSeries keeps the failure outcome of each breaker and family a
// counter. Outcomes are disjoint, so it is Failures − Injected: two
// counters that a snapshot cannot read at one instant. A snapshot taken
// while a fault is being counted may hold it in Injected and not yet in
// Failures (never the other way round), so the difference may dip below
// what an earlier scrape reported, or below zero; reported as it is, a
// dip reads as a counter reset to rate(), and an unsigned one wraps to
// 1.8e19. The series reports instead the most the difference has been
// since the breaker was created or reset: the difference never runs ahead
// of the failures that were not injected, so that value is exact once the
// fault is counted. A reset shows as one of the breaker's counters going
// down, and is reported as the counter reset it is.
//
// The zero value is ready to use; it is safe for concurrent use.
type failureSeries struct {
	mu   sync.Mutex // guards last; held while a scrape reads the registry
	last map[seriesKey]failureMark
}

// seriesKey names a breaker, or a family (runtime.Family) of per-key
// breakers, which may share a name.
type seriesKey struct {
	family bool
	name   string
}

// failureMark is what a series' last scrape read and reported.
type failureMark struct {
	counters [9]uint64 // see resetCounters
	reported uint64
}

// resetCounters are the counters of a breaker or family that only a reset
// turns down: Failures, Injected, Ignored, Canceled, RateLimited, Calls,
// Successes, Rejections and the transitions. The more of them, the less
// likely a reset goes unseen because every one grew past its earlier
// value before the next scrape.
func resetCounters(failures, injected, ignored, canceled, rateLimited, calls, successes, rejections uint64, transitions *[5][5]uint64) [9]uint64 {
	var moves uint64
	for _, row := range transitions {
		for _, n := range row {
			moves += n
		}
	}
	return [9]uint64{failures, injected, ignored, canceled, rateLimited, calls, successes, rejections, moves}
}

func statsCounters(st *runtime.Stats) [9]uint64 {
	return resetCounters(st.Failures, st.Injected, st.Ignored, st.Canceled, st.RateLimited,
		st.Calls, st.Successes, st.Rejections, &st.Transitions)
}

func totalsCounters(t *runtime.FamilyTotals) [9]uint64 {
	return resetCounters(t.Failures, t.Injected, t.Ignored, t.Canceled, t.RateLimited,
		t.Calls, t.Successes, t.Rejections, &t.Transitions)
}

// notInjected is the failure outcome read from one snapshot: its failures
// that were not injected, at least 0.
func notInjected(failures, injected uint64) uint64 {
	if injected >= failures {
		return 0
	}
	return failures - injected
}

// scrape runs read, one scrape at a time, with a func that returns the
// failure series' value of the series k whose counters read now are c
// (failures c[0], injected faults c[1]). The series read stand in for all:
// the others are forgotten (their breakers were dropped).
func (s *failureSeries) scrape(read func(failures func(k seriesKey, c [9]uint64) uint64)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	next := make(map[seriesKey]failureMark, len(s.last))
	read(func(k seriesKey, c [9]uint64) uint64 {
		v := notInjected(c[0], c[1])
		if p, ok := s.last[k]; ok && !wentDown(p.counters, c) {
			v = max(v, p.reported)
		}
		next[k] = failureMark{counters: c, reported: v}
		return v
	})
	s.last = next
}

// wentDown reports whether a counter of now is below its value in before:
// the breaker was reset in between.
func wentDown(before, now [9]uint64) bool {
	for i := range now {
		if now[i] < before[i] {
			return true
		}
	}
	return false
}
