package runtime

import (
	"cmp"
	"fmt"
	"hash/maphash"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
)

// DefaultFamilyKeys is how many per-key breakers a [Family] keeps live at
// once unless told otherwise (the `keys` annotation key).
const DefaultFamilyKeys = 1000

// familyShards is the number of independently locked parts of a family's
// key table. Readers take no lock at all (each shard's map is replaced, not
// changed), so the shards only spread the writers.
const familyShards = 64

// Family is a set of breakers, one per key, with one configuration: the
// breaker of key k is named "<name>/<k>" and shows in [Registry.Health],
// [Registry.Events] and [Registry.Lookup] like any other. At most Keys of
// them live at once: past that, the least recently used CLOSED breaker with
// no call in flight is dropped (a HALF_OPEN one with none only when no
// CLOSED one can go), and an OPEN breaker is never dropped, so a key whose
// breaker is OPEN stays refused until its OPEN period ends. When every live
// breaker is OPEN or busy, the family holds more than Keys until one can
// go. With MaxOpen P > 0, at most P% of the live keys (and at least one)
// are out of CLOSED at once: a key that would trip past that stays CLOSED,
// with a fresh count, and an Event from CLOSED to CLOSED says why.
//
// Get one from [Registry.Family]. A Family is safe for concurrent use. The
// lookup of a live key takes no lock and allocates nothing.
type Family struct {
	reg     *Registry
	name    string
	cfg     Config // final settings; Name is the family's
	limit   int
	maxOpen int
	rate    float64
	burst   int
	seed    maphash.Seed
	attach  func(*Breaker) any

	tick      atomic.Int64 // the LRU clock: advances on every new key
	live      atomic.Int64
	notClosed atomic.Int64 // live breakers out of CLOSED
	drops     atomic.Uint64
	refused   atomic.Uint64 // trips maxopen kept CLOSED

	shards [familyShards]famShard

	emu     sync.Mutex  // one evictor at a time; guards victims
	victims []*famEntry // the oldest droppable entries at the last scan, oldest last

	fold familyFold // the dropped keys' counters (family_view.go)
}

type famShard struct {
	m  atomic.Pointer[map[string]*famEntry]
	mu sync.Mutex // writers
	_  [48]byte
}

// famEntry is one live key.
type famEntry struct {
	key      string
	b        *Breaker
	val      any          // what the family's attach made of b
	used     atomic.Int64 // the family's tick at the key's last call
	inflight atomic.Int64 // calls in flight; dead (very negative) once dropped
	seen     int64        // used when it was picked as a victim
}

const famDead = -1 << 40

// FamilyConfig is a family's bound and its cap on OPEN keys.
type FamilyConfig struct {
	// Keys is how many per-key breakers live at once; 0 means
	// [DefaultFamilyKeys].
	Keys int
	// MaxOpen is the most keys out of CLOSED at once, as a percentage of
	// the live keys (1..100); 0 means no cap.
	MaxOpen int
	// Rate and Burst give the family one limiter, shared by its keys, named
	// like the family; Rate 0 means none.
	Rate  float64
	Burst int
	// Attach, when set, is called once for each new key's breaker; what it
	// returns is [FamilyKey.Value]. Generated code (package breakerimpl)
	// keeps its route there.
	Attach func(*Breaker) any
}

// Family returns a new family of breakers named cfg.Name: each key's
// breaker takes cfg's settings, with the run-time settings ([WithConfig],
// BREAKER_<NAME>_* of the family's name) applied once, here.
func (r *Registry) Family(cfg Config, fc FamilyConfig) *Family {
	return r.family(cfg, fc, fc.Attach)
}

func (r *Registry) family(cfg Config, fc FamilyConfig, attach func(*Breaker) any) *Family {
	s := r.settings(cfg, fc.Rate, fc.Burst)
	f := &Family{reg: r, name: s.cfg.Name, cfg: s.cfg, limit: fc.Keys, maxOpen: min(max(fc.MaxOpen, 0), 100),
		rate: s.rate, burst: s.burst, seed: maphash.MakeSeed(), attach: attach}
	if f.limit <= 0 {
		f.limit = DefaultFamilyKeys
	}
	for i := range f.shards {
		m := map[string]*famEntry{}
		f.shards[i].m.Store(&m)
	}
	r.mu.Lock()
	r.families = append(r.families, f)
	r.mu.Unlock()
	return f
}

// Name returns the family's name, the prefix of its breakers' names.
func (f *Family) Name() string { return f.name }

// Limiter returns the limiter the family's keys share, or nil.
func (f *Family) Limiter() *Limiter {
	if !(settings{rate: f.rate}).limited() {
		return nil
	}
	return f.reg.limiter(f.name, f.rate, f.burst)
}

// Breaker returns the breaker of key, creating it (and dropping the least
// recently used one past the bound) if needed. For a hand-written caller;
// the key's use is recorded but no call is counted in flight.
func (f *Family) Breaker(key string) *Breaker {
	e := f.Enter(key)
	f.Exit(e)
	return e.e.b
}

// FamilyKey is one call's hold on a key of a [Family]: its breaker, and
// what the family's attach made of it. Pass it to [Family.Exit] once.
type FamilyKey struct{ e *famEntry }

// Breaker returns the key's breaker.
func (k FamilyKey) Breaker() *Breaker { return k.e.b }

// Value returns what the family's attach function made of the breaker.
func (k FamilyKey) Value() any { return k.e.val }

// Enter returns key's breaker with one call counted in flight on it (so it
// is not dropped until [Family.Exit]). It allocates nothing for a live key.
func (f *Family) Enter(key string) FamilyKey {
	sh := &f.shards[maphash.String(f.seed, key)%familyShards]
	if e := (*sh.m.Load())[key]; e != nil && f.hold(e) {
		return FamilyKey{e}
	}
	return FamilyKey{f.slowEnter(sh, key)}
}

// EnterInt is Enter for an integer key, its decimal form; it allocates
// nothing for a live key.
func (f *Family) EnterInt(key int64) FamilyKey {
	var buf [20]byte
	b := strconv.AppendInt(buf[:0], key, 10)
	sh := &f.shards[maphash.Bytes(f.seed, b)%familyShards]
	if e := (*sh.m.Load())[string(b)]; e != nil && f.hold(e) {
		return FamilyKey{e}
	}
	return FamilyKey{f.slowEnter(sh, string(b))}
}

// EnterUint is EnterInt for an unsigned key.
func (f *Family) EnterUint(key uint64) FamilyKey {
	var buf [20]byte
	b := strconv.AppendUint(buf[:0], key, 10)
	sh := &f.shards[maphash.Bytes(f.seed, b)%familyShards]
	if e := (*sh.m.Load())[string(b)]; e != nil && f.hold(e) {
		return FamilyKey{e}
	}
	return FamilyKey{f.slowEnter(sh, string(b))}
}

// Exit ends the call that Enter counted in flight.
func (f *Family) Exit(k FamilyKey) { k.e.inflight.Add(-1) }

// hold counts a call in flight on e and marks its use; false when e was
// dropped meanwhile.
func (f *Family) hold(e *famEntry) bool {
	if e.inflight.Add(1) < 0 {
		e.inflight.Add(-1)
		return false
	}
	if t := f.tick.Load(); e.used.Load() != t {
		e.used.Store(t) // written only when the tick moved: no shared write per call
	}
	return true
}

// slowEnter finds or makes the entry of key under its shard's lock.
func (f *Family) slowEnter(sh *famShard, key string) *famEntry {
	sh.mu.Lock()
	m := *sh.m.Load()
	if e := m[key]; e != nil && f.hold(e) {
		sh.mu.Unlock()
		return e
	}
	key = string([]byte(key)) // own the bytes: key may be a caller's buffer
	cfg := f.cfg
	cfg.Name = f.name + "/" + key
	b := f.reg.breaker(cfg)
	b.mu.Lock()
	b.fam = f
	if State(b.state.Load()&stateMask) != Closed {
		f.notClosed.Add(1)
	}
	b.mu.Unlock()
	e := &famEntry{key: key, b: b}
	if f.attach != nil {
		e.val = f.attach(b)
	}
	e.inflight.Store(1)
	e.used.Store(f.tick.Add(1))
	next := make(map[string]*famEntry, len(m)+1)
	for k, v := range m {
		next[k] = v
	}
	next[key] = e
	sh.m.Store(&next)
	sh.mu.Unlock()
	if f.live.Add(1) > int64(f.limit) {
		f.evict()
	}
	return e
}

// evict drops least recently used entries until the family is within its
// bound or nothing more can go.
func (f *Family) evict() {
	f.emu.Lock()
	defer f.emu.Unlock()
	for f.live.Load() > int64(f.limit) {
		e := f.victim()
		if e == nil {
			return // every live breaker is OPEN or busy: over the bound for now
		}
		f.drop(e)
	}
}

// victim returns the oldest droppable entry, scanning the family again when
// the candidates of the last scan are spent. An entry whose use is unchanged
// since the scan is older than every entry the scan passed over (uses only
// grow), so the candidates come out in least-recently-used order.
func (f *Family) victim() *famEntry {
	for range 2 {
		for len(f.victims) > 0 {
			e := f.victims[len(f.victims)-1]
			f.victims = f.victims[:len(f.victims)-1]
			if e.used.Load() == e.seen && f.droppable(e, true) {
				return e
			}
		}
		f.scan(true)
		if len(f.victims) == 0 {
			f.scan(false) // no CLOSED one can go: a HALF_OPEN one then
			for len(f.victims) > 0 {
				e := f.victims[len(f.victims)-1]
				f.victims = f.victims[:len(f.victims)-1]
				if f.droppable(e, false) {
					return e
				}
			}
			return nil
		}
	}
	return nil
}

// droppable reports whether e may be dropped now: no call in flight, and
// CLOSED (or, when closedOnly is false, HALF_OPEN: its OPEN period ended).
func (f *Family) droppable(e *famEntry, closedOnly bool) bool {
	if e.inflight.Load() != 0 {
		return false
	}
	st := e.b.State() // makes the moves time made due
	return st == Closed || (!closedOnly && st == HalfOpen)
}

// scan collects the oldest droppable entries, at most a sixteenth of the
// bound, oldest last.
func (f *Family) scan(closedOnly bool) {
	var all []*famEntry
	for i := range f.shards {
		for _, e := range *f.shards[i].m.Load() {
			if f.droppable(e, closedOnly) {
				e.seen = e.used.Load()
				all = append(all, e)
			}
		}
	}
	slices.SortFunc(all, func(a, b *famEntry) int { return cmp.Compare(b.seen, a.seen) })
	n := max(f.limit/16, 1)
	if len(all) > n {
		all = all[len(all)-n:]
	}
	f.victims = append(f.victims[:0], all...)
}

// drop removes e from the family and its breaker from the registry, if no
// call entered it meanwhile.
func (f *Family) drop(e *famEntry) {
	if !f.foldDead(e) {
		return
	}
	sh := &f.shards[maphash.String(f.seed, e.key)%familyShards]
	sh.mu.Lock()
	m := *sh.m.Load()
	next := make(map[string]*famEntry, len(m))
	for k, v := range m {
		if v != e {
			next[k] = v
		}
	}
	sh.m.Store(&next)
	b := e.b
	b.mu.Lock()
	if State(b.state.Load()&stateMask) != Closed {
		f.notClosed.Add(-1)
	}
	b.fam = nil
	b.mu.Unlock()
	r := f.reg
	r.mu.Lock() // under the shard's lock: a new breaker of the key waits for this
	if r.breakers[b.cfg().Name] == b {
		delete(r.breakers, b.cfg().Name)
	}
	r.mu.Unlock()
	sh.mu.Unlock()
	f.live.Add(-1)
	f.drops.Add(1)
}

// moved counts a transition of a member breaker; b.mu is held.
func (f *Family) moved(from, to State) {
	switch {
	case from == Closed && to != Closed:
		f.notClosed.Add(1)
	case from != Closed && to == Closed:
		f.notClosed.Add(-1)
	}
}

// mayTrip reports whether a member may leave CLOSED now under MaxOpen, and
// if not, why; b.mu is held.
func (f *Family) mayTrip() (bool, string) {
	if f.maxOpen == 0 {
		return true, ""
	}
	live := f.live.Load()
	allowed := max(live*int64(f.maxOpen)/100, 1)
	if n := f.notClosed.Load(); n+1 > allowed {
		f.refused.Add(1)
		return false, fmt.Sprintf("would trip, but maxopen %d%% allows %d of %d keys out of CLOSED and %d are; stays CLOSED",
			f.maxOpen, allowed, live, n)
	}
	return true, ""
}

// FamilyHealth is a family's bound and what it did: its live keys, how
// many are out of CLOSED, how many were dropped to stay within the bound,
// and how many trips maxopen kept CLOSED. Each key's breaker is among
// Health.Breakers.
type FamilyHealth struct {
	Name     string `json:"name"`
	Keys     int    `json:"keys"`
	Limit    int    `json:"limit"`
	Open     int    `json:"open"`
	MaxOpen  int    `json:"maxopen_percent,omitempty"`
	Dropped  uint64 `json:"dropped"`
	KeptShut uint64 `json:"kept_closed,omitempty"`
}

// Health returns the family's counters.
func (f *Family) Health() FamilyHealth {
	return FamilyHealth{Name: f.name, Keys: int(f.live.Load()), Limit: f.limit, Open: int(f.notClosed.Load()),
		MaxOpen: f.maxOpen, Dropped: f.drops.Load(), KeptShut: f.refused.Load()}
}

// Len returns how many keys are live.
func (f *Family) Len() int { return int(f.live.Load()) }

// familiesHealth is the Health of every family of r, in name order.
func (r *Registry) familiesHealth() []FamilyHealth {
	r.mu.RLock()
	fs := slices.Clone(r.families)
	r.mu.RUnlock()
	if len(fs) == 0 {
		return nil
	}
	out := make([]FamilyHealth, 0, len(fs))
	for _, f := range fs {
		out = append(out, f.Health())
	}
	slices.SortFunc(out, func(a, b FamilyHealth) int { return cmp.Compare(a.Name, b.Name) })
	return out
}

// keptClosedLocked is the MaxOpen check of a member's trip: when the family
// has its share of keys out of CLOSED, the breaker starts a fresh CLOSED
// period instead, and an Event from CLOSED to CLOSED (in the log, not the
// hooks: nothing changed) says why; b.mu is held.
func (b *Breaker) keptClosedLocked(reason string) bool {
	ok, why := b.fam.mayTrip()
	if ok {
		return false
	}
	now := b.reg.clock.Now()
	b.startPeriodLocked(b.state.Load(), Closed, now, 0)
	b.reg.events.add(Event{Time: now, Source: b.cfg().Name, From: Closed, To: Closed,
		Reason: truncate(foldSpace(why+": "+reason), reasonMax)})
	return true
}

// Done ends the call that Enter counted in flight, like [Family.Exit].
func (k FamilyKey) Done() { k.e.inflight.Add(-1) }
