// Package failseries keeps the exporters' outcome="failure" series a
// counter: what package exporters/prometheus and exporters/otel report as
// the failures that were not injected (SPEC §10, §13), read the same way
// by both.
//
// Outcomes are disjoint, so the series is Stats.Failures − Stats.Injected:
// two counters that a snapshot cannot read at one instant. A snapshot
// taken while a fault is being counted may hold it in Injected and not yet
// in Failures (never the other way round: see runtime's injectStats), so
// the difference may dip below what an earlier collection reported, or
// below zero; reported as it is, a dip reads as a counter reset (to
// Prometheus's rate()), and below zero an unsigned one wraps to 1.8e19
// and a signed one goes negative. The series reports instead the most the
// difference has been since the breaker was created or reset: the
// difference never runs ahead of the failures that were not injected, so
// that value is exact once the fault is counted. A reset shows as one of
// the breaker's counters going down, and is reported as the counter reset
// it is.
package failseries

import (
	"sync"

	"github.com/breakergen/breakergen/runtime"
)

// Series is the failure series of a registry's breakers and families, for
// one exporter. The zero value is ready to use; it is safe for concurrent
// use.
type Series struct {
	mu   sync.Mutex // guards last; held while a Read reads the registry
	last map[key]mark
}

// key names a breaker, or a family (runtime.Family) of per-key breakers,
// which may share a name.
type key struct {
	family bool
	name   string
}

// mark is what a series' last Read read and reported.
type mark struct {
	counters [9]uint64 // see resetCounters
	reported uint64
}

// Snapshot is what one Read read: the Stats of the breakers and the
// totals of the families, in the order given, and the failure series'
// value of each.
type Snapshot struct {
	Stats          []runtime.Stats
	Failures       []uint64 // of Stats[i]
	Totals         []runtime.FamilyTotals
	FamilyFailures []uint64 // of Totals[i]
}

// Read reads bs's Stats and fams' totals, one Read at a time, and the
// failure series of each. The series not read stand in for none: they are
// forgotten (their breakers were dropped).
func (s *Series) Read(bs []*runtime.Breaker, fams []*runtime.Family) Snapshot {
	n := Snapshot{
		Stats: make([]runtime.Stats, len(bs)), Failures: make([]uint64, len(bs)),
		Totals: make([]runtime.FamilyTotals, len(fams)), FamilyFailures: make([]uint64, len(fams)),
	}
	s.scrape(func(failure func(key, [9]uint64) uint64) {
		for i, b := range bs {
			n.Stats[i] = b.Stats()
			n.Failures[i] = failure(key{name: n.Stats[i].Name}, statsCounters(&n.Stats[i]))
		}
		for i, f := range fams {
			n.Totals[i] = f.Totals()
			n.FamilyFailures[i] = failure(key{family: true, name: n.Totals[i].Name}, totalsCounters(&n.Totals[i]))
		}
	})
	return n
}

// resetCounters are the counters of a breaker or family that only a reset
// turns down: Failures, Injected, Ignored, Canceled, RateLimited, Calls,
// Successes, Rejections and the transitions. The more of them, the less
// likely a reset goes unseen because every one grew past its earlier
// value before the next read.
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

// scrape runs read, one at a time, with a func that returns the
// failure series' value of the series k whose counters read now are c
// (failures c[0], injected faults c[1]). The series read stand in for all:
// the others are forgotten (their breakers were dropped).
func (s *Series) scrape(read func(failures func(k key, c [9]uint64) uint64)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	next := make(map[key]mark, len(s.last))
	read(func(k key, c [9]uint64) uint64 {
		v := notInjected(c[0], c[1])
		if p, ok := s.last[k]; ok && !wentDown(p.counters, c) {
			v = max(v, p.reported)
		}
		next[k] = mark{counters: c, reported: v}
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
