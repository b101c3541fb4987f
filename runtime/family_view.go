package runtime

import (
	"cmp"
	"slices"
	"strings"
	"sync"

	"github.com/breakergen/breakergen/runtime/internal/core"
)

// This file holds the read-only views of a [Family] that the dashboard,
// the exporters and the fleet use: its live keys, the family a breaker
// name belongs to, and the family's totals, which keep what its dropped
// keys counted so that they never go down when a key is dropped. None of
// it is on a call's path.

// Families returns the registry's families, in name order.
func (r *Registry) Families() []*Family {
	r.mu.RLock()
	fs := slices.Clone(r.families)
	r.mu.RUnlock()
	slices.SortFunc(fs, func(a, b *Family) int { return cmp.Compare(a.name, b.name) })
	return fs
}

// FamilyOf returns the family whose key breaker the breaker called name
// would be, "<family>/<key>", and the key; nil when no family of the
// registry has such a name (the longest family name wins when several
// match). The key need not be live, and may be "" ("<family>/", the key
// of a request without a host, say).
func (r *Registry) FamilyOf(name string) (*Family, string) {
	if strings.IndexByte(name, '/') < 0 {
		return nil, ""
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	var best *Family
	for _, f := range r.families {
		if len(name) > len(f.name) && name[len(f.name)] == '/' && strings.HasPrefix(name, f.name) &&
			(best == nil || len(f.name) > len(best.name)) {
			best = f
		}
	}
	if best == nil {
		return nil, ""
	}
	return best, name[len(best.name)+1:]
}

// PlainBreakers returns every breaker of the registry that is not a
// family's key breaker (see [Registry.FamilyOf]), in name order: the
// breakers a view shows one by one beside its families. A breaker made by
// hand ([Registry.Breaker]) with a family's key name is one of them until
// the key's first call through the family takes it over: listed in
// neither, OPEN, it left a page saying "ok".
func (r *Registry) PlainBreakers() []*Breaker {
	r.mu.RLock()
	fams := make(map[string]bool, len(r.families))
	for _, f := range r.families {
		fams[f.name] = true
	}
	out := make([]*Breaker, 0, len(r.breakers))
	for name, b := range r.breakers {
		if !keyOf(fams, name) || !b.keyed.Load() {
			out = append(out, b)
		}
	}
	r.mu.RUnlock()
	slices.SortFunc(out, func(a, b *Breaker) int { return cmp.Compare(a.cfg().Name, b.cfg().Name) })
	return out
}

// keyOf reports whether name is "<family>/<key>" for a family in fams.
func keyOf(fams map[string]bool, name string) bool {
	for i := range len(name) { // "<family>/" is the key ""
		if name[i] == '/' && fams[name[:i]] {
			return true
		}
	}
	return false
}

// Limit returns how many keys the family keeps live at once (its Keys).
func (f *Family) Limit() int { return f.limit }

// Lookup returns the breaker of key if it is live, without creating it
// nor marking its use.
func (f *Family) Lookup(key string) (*Breaker, bool) {
	if e := f.find(key); e != nil && e.Dead.Load()&core.KeyState != core.KeyGone {
		if c := e.Cold.Load(); c != nil {
			return c.B, true
		}
	}
	return nil, false
}

// Breakers returns the breakers of the live keys, in name order.
func (f *Family) Breakers() []*Breaker {
	es := f.entries()
	out := make([]*Breaker, len(es))
	for i, e := range es {
		out[i] = e.b
	}
	slices.SortFunc(out, func(a, b *Breaker) int { return cmp.Compare(a.cfg().Name, b.cfg().Name) })
	return out
}

// famLive is a live entry and its breaker, as a view read them.
type famLive struct {
	e *famEntry
	b *Breaker
}

// entries returns the live entries, in no order, with their breakers: a
// key dropped after this read them is still in, a key dropped before is
// not (a dropped cell lets go of its breaker).
func (f *Family) entries() []famLive {
	out := make([]famLive, 0, f.live.Load())
	f.each(func(e *famEntry) {
		if e.Dead.Load()&core.KeyState != core.KeyGone {
			if c := e.Cold.Load(); c != nil {
				out = append(out, famLive{e, c.B})
			}
		}
	})
	return out
}

// FamilyTotals is a family's counters summed over its keys, those dropped
// included: each counter is what [Stats] counts, for every key the family
// ever had, so it never goes down when a key is dropped (a key's
// [Breaker.Reset] takes its counts out, as it does for the breaker). Keys
// and ByState are over the live keys only.
type FamilyTotals struct {
	Name string
	// Keys is how many keys are live; ByState[s] how many of them are in
	// state s (ByState[Open] is the count of OPEN keys).
	Keys    int
	ByState [5]int
	// Counted is whether calls are counted ([WithCallCounts]); Calls and
	// Successes are zero without it.
	Counted                                  bool
	Calls, Successes, Rejections             uint64
	Failures, Ignored, Canceled, RateLimited uint64
	Throttled, BulkheadFull, Injected        uint64
	// Transitions[from][to] as in [Stats].
	Transitions [5][5]uint64
}

// add adds the counters of st.
func (t *FamilyTotals) add(st *Stats) {
	t.Calls += st.Calls
	t.Successes += st.Successes
	t.Rejections += st.Rejections
	t.Failures += st.Failures
	t.Ignored += st.Ignored
	t.Canceled += st.Canceled
	t.RateLimited += st.RateLimited
	t.Throttled += st.Throttled
	t.BulkheadFull += st.BulkheadFull
	t.Injected += st.Injected
	for i := range t.Transitions {
		for j := range t.Transitions[i] {
			t.Transitions[i][j] += st.Transitions[i][j]
		}
	}
}

// familyFold keeps the counters of a family's dropped keys.
type familyFold struct {
	mu     sync.Mutex // guards totals, and is held while a key is marked dead and folded
	totals FamilyTotals
}

// foldDead marks e dead, so that no call enters it any more, and folds its
// breaker's counters into the family's, in one step under the fold's lock:
// [Family.Totals] sees each key either live or folded, never both nor
// neither. It reports false, changing nothing, when a call is in flight on e.
func (f *Family) foldDead(e *famEntry) bool {
	f.fold.mu.Lock()
	defer f.fold.mu.Unlock()
	if inFlight(e) != 0 {
		return false
	}
	// The exchange with the calls (see Family.hold): Dead, then the count.
	// A call that finds e dying meanwhile looks the key up again
	// under the family's lock, which the caller holds, and so finds e as
	// this decides.
	id := e.Dead.Load() &^ core.KeyState
	e.Dead.Store(id | core.KeyDying)
	if inFlight(e) != 0 {
		e.Dead.Store(id)
		return false
	}
	e.Dead.Store(id | core.KeyGone)
	st := e.Cold.Load().B.Stats()
	f.fold.totals.add(&st)
	return true
}

// Totals returns the family's counters: the live keys' [Stats] summed, plus
// what the dropped keys had counted. It reads every live key's Stats,
// taking no lock that a call or a new key waits for (a key dropped
// meanwhile waits for the short end of it).
func (f *Family) Totals() FamilyTotals {
	es := f.entries()
	stats := make([]Stats, len(es))
	for i, e := range es {
		stats[i] = e.b.Stats()
	}
	f.fold.mu.Lock()
	t := f.fold.totals
	// A key folded since it was read is in t already; its earlier reading
	// is left out. Every other reading is at most what the key counts now.
	dead := make([]bool, len(es))
	for i, e := range es {
		dead[i] = e.e.Dead.Load()&core.KeyState == core.KeyGone
	}
	f.fold.mu.Unlock()
	t.Name, t.Counted = f.name, f.reg.countCalls
	for i := range stats {
		if dead[i] {
			continue
		}
		t.add(&stats[i])
		t.Keys++
		if s := stats[i].State; int(s) < len(t.ByState) {
			t.ByState[s]++
		}
	}
	return t
}
