package runtime

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"hash/maphash"
	"math/bits"
	goruntime "runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/breakergen/breakergen/runtime/internal/core"
)

// DefaultFamilyKeys is how many per-key breakers a [Family] keeps live at
// once unless told otherwise (the `keys` annotation key).
const DefaultFamilyKeys = 1000

// The key table. A family has two open-addressing hash tables (linear
// probing, at most half full): one for string keys, one for integer keys,
// so that a live integer key is found without being formatted. A slot is
// written once, from empty to an entry, and once more, from the entry to
// famTomb when the entry is dropped; a table full of tombstones is
// replaced by a fresh one, no smaller (famFast). Readers take no lock and
// hash the key once: the low bits of the hash pick the slot. Writers (a
// new key, a drop, a rebuild) hold the family's wmu.
//
// The tables are not sharded: every writer holds wmu, so shards would
// spread no writer, and 64 shards' tables, each its own allocation, made
// a keyed call 7.6% slower at 10,000 live keys than one table (docs/keys.md).
// The price is that a rebuild copies every live key at once, under wmu:
// a call making a new key may then wait for it, a call on a live key never.
const famMinSlots = 8

// Family is a set of breakers, one per key, with one configuration: the
// breaker of key k is named "<name>/<k>" and shows in [Registry.Health],
// [Registry.Events] and [Registry.Lookup] like any other. An integer key is
// the same key as its decimal form.
//
// At most Keys of them live at once: past that, the least recently used
// CLOSED breaker with no call in flight is dropped (a HALF_OPEN one with
// none only when no CLOSED one can go). A breaker that is OPEN, or in an
// operator's mode ([Breaker.Isolate], [Breaker.Bypass]), is never dropped,
// so a key whose breaker is OPEN stays refused until its OPEN period ends
// and an isolated key stays isolated until [Breaker.Resume]. When every
// live breaker is OPEN, in a mode or busy, the family holds more than Keys
// until one can go. "Least recently used" is exact to within a sixteenth
// of Keys: the family's clock of uses moves once every Keys/16 new keys, so
// that a call on a live key writes nothing shared.
//
// With MaxOpen P > 0, at most P% of the live keys (and at least one) are
// OPEN or HALF_OPEN at once: a key that would trip past that stays CLOSED,
// with a fresh count, and an Event from CLOSED to CLOSED says why. Keys in
// an operator's mode do not count.
//
// [Registry.Update] with the family's name changes the settings of every
// live key and of the keys made later (see [Registry.Update]).
//
// Get one from [Registry.Family]. A Family is safe for concurrent use. The
// lookup of a live key takes no lock, allocates nothing and writes nothing
// but its count of calls in flight, in a word of the P it runs on.
type Family struct {
	reg     *Registry
	name    string
	limit   int
	maxOpen int
	rate    float64
	burst   int
	step    int64 // new keys a tick of the clock of uses lasts
	seed    maphash.Seed
	iseed   [2]uint64 // the integer keys' hash seed
	// maker makes what each new key holds: set when a wrapper made the
	// family, or by a wrapper's later call on a family made by hand
	// (Registry.family); nil for a family only hand-written code uses.
	maker  atomic.Pointer[core.KeyMaker[Breaker]]
	first  Config // the settings it was made with, to compare a later Family call's
	tables famTables

	_    [64]byte
	tick atomic.Int64 // the clock of uses; read by every call, written once every step new keys
	_    [56]byte

	conf      atomic.Pointer[Config] // the settings of a new key's breaker; Name is the family's
	given     atomic.Pointer[Config] // conf as its layers give it, before defaults: what a key's own layers lay over (keyConfig)
	keyLayers bool                   // a run-time layer may name one of its keys (keyConfig); set when it is made
	live      atomic.Int64
	notClosed atomic.Int64 // live breakers OPEN or HALF_OPEN
	drops     atomic.Uint64
	refused   atomic.Uint64 // trips maxopen kept CLOSED

	// escapes counts moves of live keys to CLOSED or HALF_OPEN (moved):
	// each may have made a key droppable that the last scan passed over.
	escapes atomic.Uint64

	wmu       sync.Mutex  // guards every table's change, fresh, made, starved, victims, cells and each entry's flags
	fresh     int64       // new keys since the tick moved
	made      int64       // new keys since the family was made
	starved   famStarved  // the last scan that found nothing droppable
	scans     int64       // scans for victims made (tests)
	busy      []*famEntry // entries the last scan found droppable but for a call in flight
	victims   []famVictim // the oldest droppable entries at the last scan, oldest last
	cells     []famEntry  // the current chunk of cells (newCellLocked)
	cellsUsed int
	chunks    []*famChunk // the chunks with a live or busy cell, and the current one, oldest first (scanLocked)

	fold familyFold // the dropped keys' counters (family_view.go)
}

// famStarved is the last scan for victims that found none: every live
// key was OPEN, in an operator's mode or in use. Until until new keys have
// been made (made), or a key has moved to CLOSED or HALF_OPEN since
// (escapes, seen then), no scan looks again: a family past its bound in
// an outage, every key OPEN, would otherwise scan every live key for
// each new one (quadratic: 6 ms a new key at 15,000 live keys).
type famStarved struct {
	on    bool
	until int64
	seen  uint64
}

// famTables are a family's key tables.
type famTables struct {
	str  atomic.Pointer[famTable] // string keys
	ints atomic.Pointer[famTable] // integer keys
	sv   famFast                  // str's slots, for Enter
	iv   famFast                  // ints' slots, for EnterInt and EnterUint
}

// famFast is a table's slots as Enter reads them: their mask and the
// first slot, in the family itself, so that the slot a key's hash picks
// is one load away from the family rather than two (the table, then its
// slots). The two words are not loaded as one: a table is replaced by
// one no smaller (rebuild), whose first slot is stored before its mask,
// and a reader loads the mask first, so that it indexes a table of at
// least the mask's size. A reader that pairs an older mask with a larger
// table's slots may miss a live key there; it then takes the slow path,
// which looks again under the family's lock. Readers that must not miss
// (find) load the table.
type famFast struct {
	mask  atomic.Uint64
	first unsafe.Pointer // *famSlot, the first of the table's slots
}

// set publishes t's slots; f.wmu is held.
func (v *famFast) set(t *famTable) {
	atomic.StorePointer(&v.first, unsafe.Pointer(&t.slots[0]))
	v.mask.Store(t.mask)
}

// slot returns the slot of hash (or probe) i.
func (v *famFast) slot(i uint64) *famSlot {
	m := v.mask.Load()
	return (*famSlot)(unsafe.Add(atomic.LoadPointer(&v.first), (i&m)*uint64(unsafe.Sizeof(famSlot{}))))
}

// famTable is one open-addressing table; len(slots) is a power of two.
type famTable struct {
	slots []famSlot
	mask  uint64
	used  int // guarded by wmu: slots not empty (entries and tombstones)
	live  int // guarded by wmu: entries
}

// famSlot is one slot: written h first, then e, so that a reader that
// loads e (non-nil) finds h set.
type famSlot struct {
	e atomic.Pointer[famEntry]
	h atomic.Uint64
}

// famEntry is one live key's cell (see [core.KeyEntry]): one cache line
// with what a call reads, the key's bytes when it has at most famInline of
// them (compared there without following the key's own pointer), its
// count of calls held on it in the cell, the key's route and its
// breaker's state and fails words. The family allocates cells a chunk at
// a time, so that the cells of a family's keys lie side by side.
type famEntry = core.KeyEntry[Breaker]

// famChunk is a chunk of cells. Go's allocator puts an object of more
// than 512 bytes that holds pointers in a block of its size class (2304
// bytes: multiples of 64 from a page), after a header of 8 bytes
// (mallocHeader); the lead puts each cell on a line of its own.
// TestKeyCellLine (package breakerimpl) and TestFamilyChunkLayout check
// it on real chunks.
type famChunk struct {
	// A bit for each cell, guarded by the family's wmu: live, the cells of
	// live keys; busy, the cells handed out for a new key and not yet in
	// the tables or given up (scanLocked lets go of a chunk with neither).
	live, busy uint32
	_          [64 - famMallocHeader - 8]byte
	cells      [famCells]famEntry
}

const (
	famMallocHeader = 8
	famCells        = 32 // cells of 64 bytes
)

// A chunk's live keys are a bit each in its live word.
var _ [32 - famCells]byte

// A cell is 64 bytes.
var _ [64 - unsafe.Sizeof(famEntry{})]byte
var _ [unsafe.Sizeof(famEntry{}) - 64]byte

// chunkOf returns the chunk of cell e (not famTomb, which is in none).
func chunkOf(e *famEntry) *famChunk {
	return (*famChunk)(unsafe.Add(unsafe.Pointer(e), -int(unsafe.Offsetof(famChunk{}.cells))-int(e.Slot)*int(unsafe.Sizeof(famEntry{}))))
}

// The count of calls in flight. The family may drop a key only when no
// call is in flight on it, and a call must not enter a key once it is
// dropped. Counting every call in the key's cell writes the cell on every
// call, so that a key called from two CPUs moves its line between their
// caches on every call; counting it in a line of the key's own for each P
// (the lanes this replaced, docs/keys.md) cost a serial call the miss of
// that line, a fifth of a keyed call.
//
// So a call on a live key counts itself in a word of its P's lane: the
// process has famLaneN lanes (a lane is P p's, or every P's whose number
// is p modulo famLaneN) of famBuckets words, and the call takes the word
// its key's hash picks (the low bits of the hash that found the key: a
// key has a bucket in each table it is in). A word is a count of calls
// and the key they are on (famOwner: the id of the key's cell, famNewID,
// kept in the high bits of its Dead word): a call adds one to the count when the word is its
// key's or the count is zero (then the word becomes its key's), with a
// compare-and-swap, and its end (FamilyKey.Done) takes one off the same
// word, wherever it then runs. A word that counts another key's calls
// (two keys of one bucket in flight on one P at once) is left alone: the
// call counts in its key's cell instead (the cell's Inflight, as a slow
// path's call and a new key's first call do). The call reads its P's
// number (core.ProcPin, then at once core.ProcUnpin: only a hint of where
// it runs). A lane is 32 KiB of its own, which its P's calls keep in its
// cache, and the word's address is known from the hash before the key's
// slot is read, so the count does not wait for the lookup's misses
// (docs/keys.md, "The count of calls in flight"). Where many calls wait
// at once on each P (calls blocked on the network), a word is another
// key's for about one call in 4,096 a P has in flight: those count in
// their cells, exact, as the calls of a chunk's keys did before lanes.
//
// The family's count of a key is its cell's plus, in each lane, the
// count of the key's bucket's word when the word is the key's: a word's
// key changes only at a count of zero, so a call in flight keeps its word
// its key's, and its count at one or more, throughout. The family reads
// the words one by one, not at one instant; each word goes up and down by
// the same calls, so its count is never below zero, and the sum it reads
// is at least one while any call it must see is in flight. Ids are 30 bits
// from one counter for the process: two live cells share one only when
// 2^30 cells were made between them, and then each may count the other's
// calls (a key kept while they last, or for ever behind a hold never
// ended; never a key dropped early).
//
// Dropping a key is Dekker's exchange between a call and the family: the
// call counts, then reads the cell's Dead; the family writes Dead, then
// reads the counts (foldDead). All four are atomic operations, which Go
// orders as one sequence, so at least one of the two sees the other: the
// family sees the call's count and keeps the key, or the call sees Dead
// and withdraws, taking its one off the same count. TestFamilyCountIn
// takes the protocol step by step, and TestFamilyCountsRaceTheDrop drives
// it from both sides at once.

const (
	famBuckets   = 1 << 12 // words in a lane; a power of two
	famCountBits = 32      // a word's low bits: its count
	famCountMask = 1<<famCountBits - 1
	famMaxLanes  = 64
)

// famLaneN is how many lanes of words the process has and famWords the
// words, lane p's famBuckets of them from famWords + p*famBuckets*8, each
// lane on lines of its own; set once, before the first family is made.
var (
	famLaneN     int
	famWords     unsafe.Pointer // *uint64
	famLanesOnce sync.Once
)

// famInitWords makes the words, once.
func famInitWords() {
	famLanesOnce.Do(func() {
		famLaneN = lanesFor(goruntime.GOMAXPROCS(0))
		w := make([]uint64, famLaneN*famBuckets+8)
		i := 0
		for uintptr(unsafe.Pointer(&w[i]))%64 != 0 {
			i++
		}
		famWords = unsafe.Pointer(&w[i])
	})
}

// lanesFor returns how many lanes of words the process has when it runs
// procs Ps: 8, 16, 32 or 64, the least of them that covers every P, or 64.
func lanesFor(procs int) int {
	n := 8
	for n < procs && n < famMaxLanes {
		n *= 2
	}
	return n
}

// famCount returns lane p's word of bucket b (any p: it is taken modulo
// famLaneN; b < famBuckets).
func famCount(p int, b uint64) *uint64 {
	return (*uint64)(unsafe.Add(famWords, (uintptr(p&(famLaneN-1))*famBuckets+uintptr(b))*8))
}

// famBucketOf returns the bucket of hash h.
func famBucketOf(h uint64) uint64 { return h & (famBuckets - 1) }

// famOwner returns the key part of a word counting calls on the cell whose
// Dead word is d: the cell's id.
func famOwner(d uint32) uint64 { return uint64(d&^core.KeyState) << famCountBits }

// famIDs numbers the cells (famNewID).
var famIDs atomic.Uint32

// famNewID returns a new cell's Dead word: its id, not 0, and live.
func famNewID() uint32 {
	for {
		if id := famIDs.Add(1) << 2; id != 0 {
			return id
		}
	}
}

// famCountOf returns the count of calls on the key of owner o in bucket
// b, every lane's.
func famCountOf(b, o uint64) int32 {
	var n int32
	for p := range famLaneN {
		if w := atomic.LoadUint64(famCount(p, b)); w&^famCountMask == o {
			n += int32(uint32(w))
		}
	}
	return n
}

// holdAt counts a call in flight on e, found by hash h, in a word of h's
// bucket (or in e's cell when the word counts another key's calls), and
// marks e's use (only when the family's clock of uses moved: once a tick
// at most); it returns the hold, or the zero FamilyKey, counting nothing,
// when e is dropped or being dropped. The count and the mark are one
// function, so that a lookup's hit makes one call.
func (f *Family) holdAt(e *famEntry, h uint64) FamilyKey {
	d := e.Dead.Load()
	if d&core.KeyState != 0 {
		return FamilyKey{}
	}
	p := core.ProcPin()
	core.ProcUnpin()
	w, o := famCount(p, famBucketOf(h)), famOwner(d)
	for {
		old := atomic.LoadUint64(w)
		if uint32(old) != 0 && old&^famCountMask != o {
			return f.hold(e) // another key's calls count here
		}
		if atomic.CompareAndSwapUint64(w, old, o|uint64(uint32(old)+1)) {
			break
		}
	}
	if e.Dead.Load()&core.KeyState != 0 {
		atomic.AddUint64(w, ^uint64(0))
		return FamilyKey{}
	}
	f.markUse(e)
	return FamilyKey{e, w}
}

// hold is holdAt for a call counted in e's cell: a slow path's, or one
// whose word counts another key's calls.
func (f *Family) hold(e *famEntry) FamilyKey {
	if e.Dead.Load()&core.KeyState != 0 {
		return FamilyKey{}
	}
	atomic.AddInt32(&e.Inflight, 1)
	if e.Dead.Load()&core.KeyState != 0 {
		atomic.AddInt32(&e.Inflight, -1)
		return FamilyKey{}
	}
	f.markUse(e)
	return FamilyKey{e, nil}
}

// markUse sets e's use to the family's clock of uses, when it moved.
func (f *Family) markUse(e *famEntry) {
	if t := uint32(f.tick.Load()); e.Used.Load() != t {
		e.Used.Store(t)
	}
}

// inFlight returns the count of calls in flight on live key e: exact once
// the family set e's Dead, a hint before.
func inFlight(e *famEntry) int32 {
	n := atomic.LoadInt32(&e.Inflight)
	c := e.Cold.Load()
	if c == nil {
		return n
	}
	o := famOwner(e.Dead.Load())
	if e.Flags&famInStr != 0 {
		n += famCountOf(uint64(c.Buckets[0]), o)
	}
	if e.Flags&famInInt != 0 {
		n += famCountOf(uint64(c.Buckets[1]), o)
	}
	return n
}

const (
	famInline = core.KeyInline
	famLong   = core.KeyLong
	famWord   = 8 // the longest string key whose hash is one to one (hashString)
)

// famIs reports whether e is the entry of string key.
func famIs(e *famEntry, key string) bool {
	n := len(key)
	if n > famInline {
		c := e.Cold.Load()
		return e.Klen == famLong && c != nil && c.Key == key
	}
	if int(e.Klen) != n {
		return false
	}
	k := e.Kbuf[:n]
	switch {
	case n >= 8:
		return binary.LittleEndian.Uint64(k) == le64(key) && binary.LittleEndian.Uint64(k[n-8:]) == le64(key[n-8:])
	case n >= 4:
		return binary.LittleEndian.Uint32(k) == le32(key) && binary.LittleEndian.Uint32(k[n-4:]) == le32(key[n-4:])
	}
	return string(k) == key
}

type famFlag = uint8

const (
	famInStr famFlag = 1 << iota // in the string table
	famInInt                     // in the integer table
	famNeg                       // an integer key below zero
)

// famTomb marks the slot of a dropped entry: never held (it is dead).
var famTomb = func() *famEntry {
	e := &famEntry{}
	e.Dead.Store(core.KeyGone)
	return e
}()

// FamilyConfig is a family's bound and its cap on OPEN keys.
type FamilyConfig struct {
	// Keys is how many per-key breakers live at once; 0 means
	// [DefaultFamilyKeys].
	Keys int
	// MaxOpen is the most keys OPEN or HALF_OPEN at once, as a percentage
	// of the live keys (1..100); 0 means no cap.
	MaxOpen int
	// Rate and Burst give the family one limiter, shared by its keys, named
	// like the family; Rate 0 means none.
	Rate  float64
	Burst int
}

// Family returns the family of breakers named cfg.Name, making it on the
// first call: each key's breaker takes cfg's settings, with the run-time
// settings ([WithConfig], BREAKER_<NAME>_* of the family's name) applied
// once, here, and a key's own ([WithConfig] and BREAKER_<NAME>_* of
// "<family>/<key>") laid over them each time the key's breaker is made
// (not its own rate limit: the keys share the family's limiter). Like [Registry.Breaker], the first settings of a name win: a
// later call with that name returns the same family and logs a warning if
// its settings differ.
func (r *Registry) Family(cfg Config, fc FamilyConfig) *Family { return r.family(cfg, fc, nil) }

// family is Family, with km, when the family is made here, making what
// each new key holds: package breakerimpl's key routes, through
// [core.Family] (nil for a family made by hand: its entries hold nothing).
func (r *Registry) family(cfg Config, fc FamilyConfig, km *core.KeyMaker[Breaker]) *Family {
	r.warnRate("Family", cmp.Or(cfg.Name, "default"), fc.Rate)
	s := r.settings(cfg, fc.Rate, fc.Burst)
	f := &Family{reg: r, name: s.cfg.Name, limit: fc.Keys, maxOpen: min(max(fc.MaxOpen, 0), 100),
		rate: s.rate, burst: s.burst, seed: maphash.MakeSeed(), first: s.cfg}
	f.maker.Store(km)
	if f.limit <= 0 {
		f.limit = DefaultFamilyKeys
	}
	r.mu.Lock()
	for _, had := range r.families {
		if had.name == f.name {
			r.mu.Unlock()
			if km != nil {
				// A wrapper's family made by hand first: its keys made
				// from now on hold what the wrapper makes (the keys made
				// before hold nothing; package breakerimpl routes them
				// another way).
				had.maker.CompareAndSwap(nil, km)
			}
			if (had.first != f.first || had.limit != f.limit || had.maxOpen != f.maxOpen || had.rate != f.rate || had.burst != f.burst) &&
				r.warnOnce("family", fmt.Sprintf("%+v %+v", s.cfg, fc)) {
				r.log().Warn(fmt.Sprintf("family[%s] already exists with other settings; keeping the first", f.name),
					"family", f.name, "kept", fmt.Sprintf("%+v keys=%d maxopen=%d", had.first, had.limit, had.maxOpen),
					"ignored", fmt.Sprintf("%+v keys=%d maxopen=%d", f.first, f.limit, f.maxOpen))
			}
			return had
		}
	}
	famInitWords() // before any call on any family: see Family.holdAt
	f.step = int64(max(f.limit/16, 1))
	f.iseed = [2]uint64{maphash.Comparable(f.seed, uint64(1)), maphash.Comparable(f.seed, uint64(2)) | 1}
	c := s.cfg
	f.conf.Store(&c)
	given, keyed := r.familyLayers(cfg)
	f.given.Store(&given)
	f.keyLayers = keyed
	ts := &f.tables
	ts.str.Store(newFamTable(famMinSlots))
	ts.ints.Store(newFamTable(famMinSlots))
	ts.sv.set(ts.str.Load())
	ts.iv.set(ts.ints.Load())
	r.families = append(r.families, f)
	r.mu.Unlock()
	if !s.cfg.windowed() {
		r.warnWindowless(f.name)
	}
	return f
}

func newFamTable(n int) *famTable {
	return &famTable{slots: make([]famSlot, n), mask: uint64(n - 1)}
}

// Name returns the family's name, the prefix of its breakers' names.
func (f *Family) Name() string { return f.name }

// Config returns the settings a new key's breaker gets (Name is the
// family's).
func (f *Family) Config() Config { return *f.conf.Load() }

// Limiter returns the limiter the family's keys share, or nil.
func (f *Family) Limiter() *Limiter {
	if !(settings{rate: f.rate}).limited() {
		return nil
	}
	return f.reg.limiter(f.name, f.rate, f.burst)
}

// Breaker returns the breaker of key, creating it (and dropping the least
// recently used one past the bound) if needed. For a hand-written caller;
// the key's use is recorded but no call is counted in flight, so the key
// may be dropped at any time after: ask again for each call rather than
// keeping the *Breaker (a dropped one still works but guards nothing the
// key's next breaker sees), or hold the key with [Family.Enter] for the
// length of a call. An operator's [Breaker.Isolate], Bypass or Resume on
// a dropped one reaches the key's live breaker all the same.
func (f *Family) Breaker(key string) *Breaker {
	k := f.Enter(key)
	b := k.Breaker()
	f.Exit(k)
	return b
}

// FamilyKey is one call's hold on a key of a [Family], and its breaker.
// Pass it to [Family.Exit] (or call [FamilyKey.Done]) once.
type FamilyKey struct {
	e *famEntry // the key's cell
	w *uint64   // the word the call counts in, or nil: the cell (see Family.holdAt)
}

// Breaker returns the key's breaker; nil for the zero FamilyKey. After
// [FamilyKey.Done] it may be nil: the key may have been dropped since.
func (k FamilyKey) Breaker() *Breaker {
	if k.e == nil {
		return nil
	}
	if c := k.e.Cold.Load(); c != nil {
		return c.B
	}
	return nil
}

// Done ends the call that Enter counted in flight, like [Family.Exit]. On
// the zero FamilyKey it does nothing.
func (k FamilyKey) Done() {
	switch {
	case k.w != nil:
		atomic.AddUint64(k.w, ^uint64(0)) // a count of one or more: the key's part stays
	case k.e != nil:
		atomic.AddInt32(&k.e.Inflight, -1)
	}
}

// Exit ends the call that Enter counted in flight, like [FamilyKey.Done]:
// on the zero FamilyKey it does nothing.
func (f *Family) Exit(k FamilyKey) { k.Done() }

// Enter returns key's breaker with one call counted in flight on it (so it
// is not dropped until [Family.Exit]). It allocates nothing for a live key.
func (f *Family) Enter(key string) FamilyKey {
	var h uint64
	if uint(len(key)-4) <= famWord-4 {
		// hashString's case of most keys (codes, ids, short tenants),
		// written out: a call of it costs about what the hash does.
		h = f.hashInt(shortWord(key), famFlag(len(key)))
	} else {
		h = f.hashString(key)
	}
	v := &f.tables.sv
	for i := h; ; i++ {
		s := v.slot(i)
		e := s.e.Load()
		if e == nil {
			break
		}
		// A key of at most famWord bytes is its hash and its length
		// (see hashString): no byte of it is compared.
		if s.h.Load() == h && (len(key) <= famWord && int(e.Klen) == len(key) || len(key) > famWord && famIs(e, key)) {
			// holdAt's usual case, written out: a call of it cost a
			// keyed call 3 to 4% (docs/keys.md).
			if d := e.Dead.Load(); d&core.KeyState == 0 {
				p := core.ProcPin()
				core.ProcUnpin()
				w, o := famCount(p, famBucketOf(h)), famOwner(d)
				if old := atomic.LoadUint64(w); (uint32(old) == 0 || old&^famCountMask == o) && atomic.CompareAndSwapUint64(w, old, o|uint64(uint32(old)+1)) {
					if e.Dead.Load()&core.KeyState == 0 {
						f.markUse(e)
						return FamilyKey{e, w}
					}
					atomic.AddUint64(w, ^uint64(0))
				}
			}
			if k := f.holdAt(e, h); k.e != nil {
				return k
			}
		}
	}
	return f.slowEnter(key, 0, 0)
}

// EnterInt is Enter for an integer key, the same key as its decimal form.
// A live key is found without formatting it, and allocates nothing.
func (f *Family) EnterInt(key int64) FamilyKey {
	neg := famFlag(0)
	if key < 0 {
		neg = famNeg
	}
	return f.enterInt(uint64(key), neg)
}

// EnterUint is EnterInt for an unsigned key.
func (f *Family) EnterUint(key uint64) FamilyKey { return f.enterInt(key, 0) }

func (f *Family) enterInt(key uint64, neg famFlag) FamilyKey {
	h := f.hashInt(key, neg)
	v := &f.tables.iv
	for i := h; ; i++ {
		s := v.slot(i)
		e := s.e.Load()
		if e == nil {
			break
		}
		if s.h.Load() == h && e.Flags&famNeg == neg { // h is one to one: see hashInt
			// holdAt's usual case, written out: a call of it cost a
			// keyed call 3 to 4% (docs/keys.md).
			if d := e.Dead.Load(); d&core.KeyState == 0 {
				p := core.ProcPin()
				core.ProcUnpin()
				w, o := famCount(p, famBucketOf(h)), famOwner(d)
				if old := atomic.LoadUint64(w); (uint32(old) == 0 || old&^famCountMask == o) && atomic.CompareAndSwapUint64(w, old, o|uint64(uint32(old)+1)) {
					if e.Dead.Load()&core.KeyState == 0 {
						f.markUse(e)
						return FamilyKey{e, w}
					}
					atomic.AddUint64(w, ^uint64(0))
				}
			}
			if k := f.holdAt(e, h); k.e != nil {
				return k
			}
		}
	}
	return f.slowEnter("", key, famInInt|neg)
}

// hashInt hashes an integer key with the family's seed, one to one (each
// step is: an xor, a multiply by an odd number, an xor with a shift): two
// keys of one sign have one hash only if they are one key, so a lookup
// compares the hash and the sign and reads no key. The seed goes in first
// (an xor and a seeded odd factor), so that keys chosen by a caller cannot
// be made to land on one slot without it.
func (f *Family) hashInt(key uint64, neg famFlag) uint64 {
	x := (key ^ f.iseed[0] ^ uint64(neg)) * f.iseed[1]
	x ^= x >> 32
	x *= 0x9e3779b97f4a7c15
	return x ^ x>>29
}

// hashString hashes a string key with the family's seed. A key of at most
// 32 bytes, the common case (codes, tenants, most hosts), is read as up to
// four overlapping 8-byte words (fewer for a shorter one) and mixed like
// an integer key, in a few nanoseconds; hash/maphash, called, costs about
// as much as the rest of the lookup. A longer key goes to maphash. The
// words cover every byte and the length is mixed in, so two keys collide
// only through the mixing, which the seed keeps out of a caller's reach.
//
// A key of at most famWord bytes (codes, ids, short tenants) is one word
// of at most 64 bits that it and its length determine (its bytes, or two
// overlapping 4-byte halves, or for 1 to 3 bytes its first, middle and
// last), hashed one to one like an integer key (hashInt, with the length
// in place of the sign): two such keys of one length have one hash only
// if they are one key, so Enter compares the hash and the length and
// reads no byte of the key (TestFamilyShortKeyHash).
func (f *Family) hashString(s string) uint64 {
	n := len(s)
	var a, b uint64
	switch {
	case n > 32:
		return maphash.String(f.seed, s)
	case n <= famWord:
		if n >= 4 {
			return f.hashInt(shortWord(s), famFlag(n))
		}
		var w uint64
		if n > 0 {
			w = uint64(s[0])<<16 | uint64(s[n>>1])<<8 | uint64(s[n-1])
		}
		return f.hashInt(w, famFlag(n))
	case n > 16:
		a = famMix(le64(s)^f.iseed[0], le64(s[8:])^f.iseed[1])
		b = famMix(le64(s[n-16:])^f.iseed[1], le64(s[n-8:])^f.iseed[0])
	default: // 9 to 16 bytes
		a, b = le64(s), le64(s[n-8:])
	}
	return famMix(famMix(a^f.iseed[0], b^f.iseed[1]), uint64(n)^0x9e3779b97f4a7c15)
}

// shortWord is the word of a key of 4 to 8 bytes: its two overlapping
// 4-byte halves (for 8 bytes, its one little-endian word). With the
// length it determines the key (hashString).
func shortWord(s string) uint64 {
	return uint64(le32(s)) | uint64(le32(s[len(s)-4:]))<<32
}

// famMix is wyhash's mum: the 128-bit product of a and b, folded.
func famMix(a, b uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	return hi ^ lo
}

func le64(s string) uint64 {
	_ = s[7]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

func le32(s string) uint32 {
	_ = s[3]
	return uint32(s[0]) | uint32(s[1])<<8 | uint32(s[2])<<16 | uint32(s[3])<<24
}

// famIntForm reports whether key is the decimal form of an integer key,
// and which: such a key is in the integer table too.
func famIntForm(key string) (uint64, famFlag, bool) {
	if key == "" || len(key) > 20 {
		return 0, 0, false
	}
	if key[0] == '-' {
		n, err := strconv.ParseInt(key, 10, 64)
		if err != nil || n >= 0 || strconv.FormatInt(n, 10) != key {
			return 0, 0, false
		}
		return uint64(n), famNeg, true
	}
	n, err := strconv.ParseUint(key, 10, 64)
	if err != nil || strconv.FormatUint(n, 10) != key {
		return 0, 0, false
	}
	return n, 0, true
}

// slowEnter finds or makes the entry of a key that the lock-free lookup
// missed: a string key (flags 0) or an integer one (famInInt, with famNeg
// for a negative int64), formatted here. Every entry is in the string
// table, so that is where the slow path looks. The breaker and the
// attached value are made with no family lock held, so that the
// registry's hooks run with none.
func (f *Family) slowEnter(key string, ikey uint64, flags famFlag) FamilyKey {
	switch {
	case flags&famInInt == 0:
		key = strings.Clone(key) // own the bytes: key may be a caller's buffer
	case flags&famNeg != 0:
		key = strconv.FormatInt(int64(ikey), 10)
	default:
		key = strconv.FormatUint(ikey, 10)
	}
	name := f.name + "/" + key
	for {
		f.wmu.Lock()
		if e := f.find(key); e != nil {
			if k := f.hold(e); k.e != nil {
				f.wmu.Unlock()
				return k
			}
		}
		e := f.newCellLocked()
		f.wmu.Unlock()
		b, val := f.makeKey(e, name)
		if k := f.insert(e, b, val, key); k.e != nil {
			return k
		}
		// b was dropped from the registry meanwhile: make the key's breaker again
	}
}

// makeKey makes the breaker of a new key's cell e, named name, and what it
// holds, with no family lock held (the registry's hooks run). Should that
// panic, e is given up (its chunk may go) and the panic goes on.
func (f *Family) makeKey(e *famEntry, name string) (b *Breaker, val any) {
	done := false
	defer func() {
		if !done {
			f.wmu.Lock()
			chunkOf(e).busy &^= 1 << e.Slot
			f.wmu.Unlock()
		}
	}()
	cfg := *f.conf.Load()
	if f.keyLayers {
		cfg = f.keyConfig(name, cfg) // the key's own run-time settings
	}
	cfg.Name = name
	var attach func(*Breaker, *famEntry) any
	var room *Breaker
	var inRoom func(*Breaker, *famEntry) any
	if km := f.maker.Load(); km != nil {
		attach = km.Attach
		if km.Room != nil {
			room, inRoom = km.Room()
		}
	}
	b = f.reg.breakerIn(cfg, room, &e.Words, f)
	if room != nil && b == room {
		attach = inRoom // the key's breaker is new, made in the room
	}
	if b.state == &e.State {
		e.Flags = core.KeyWords // the key's breaker is new: its words are the cell's
	}
	if b.state == &b.own.State && f.reg.warnOnce("handmade key", name) {
		// Made by hand with a key's name (Registry.Breaker): one breaker.
		f.reg.log().Warn(fmt.Sprintf("breaker[%s]: made by hand, it has the name of a key of family %q, so that key goes through it, with the settings it was made with; name it without %q", name, f.name, "/"),
			"breaker", name, "family", f.name)
	}
	f.envMode(b)
	if attach != nil {
		val = attach(b, e)
	}
	done = true
	return b, val
}

// newCellLocked returns a new key's cell (see [core.KeyEntry]): the next
// of the family's current chunk of cells, or of a new chunk. A cell is
// never used for another key: a call that read it from a table slot just
// before its key was dropped may still hold it (and fail to enter it),
// and its key's breaker keeps its words there. The family keeps each chunk
// in its list (chunks) until none of its cells is live or busy, and the
// chunk is freed once no call holds a cell of it either. f.wmu is held.
func (f *Family) newCellLocked() *famEntry {
	if f.cellsUsed == len(f.cells) {
		ch := new(famChunk)
		for i := range ch.cells {
			ch.cells[i].Slot = uint8(i)
		}
		f.cells, f.cellsUsed = ch.cells[:], 0
		f.chunks = append(f.chunks, ch)
	}
	e := &f.cells[f.cellsUsed]
	f.cellsUsed++
	e.Cold.Store(new(core.KeyCold[Breaker]))
	e.Dead.Store(famNewID())
	chunkOf(e).busy |= 1 << e.Slot
	return e
}

// envMode puts b, a key's breaker not yet in the family and never moved,
// in the mode BREAKER_<NAME>_MODE of the family's name gives (SPEC §14: a
// mode set when the breaker is created), unless its own variable set one.
// Called with no family lock held: the mode's Event runs the hooks.
func (f *Family) envMode(b *Breaker) {
	o := f.reg.env[envName(f.name)]
	if !o.mode.isMode() {
		return
	}
	b.mu.Lock()
	if b.fam == nil && b.stateChanges == 0 && State(b.state.Load()&stateMask) == Closed {
		b.setModeLocked(o.mode, operatorReason(o.mode, o.modeVar))
		b.envMode.Store(true)
	}
	b.mu.Unlock()
	f.reg.flush()
}

// find returns the live entry of key in the string table, or nil. It
// reads the table with atomic loads only, so it needs no lock (the views of
// family_view.go call it without wmu, the slow paths with it).
func (f *Family) find(key string) *famEntry {
	h := f.hashString(key)
	t := f.tables.str.Load()
	for i := h; ; i++ {
		s := &t.slots[i&t.mask]
		e := s.e.Load()
		if e == nil {
			return nil
		}
		if e != famTomb && s.h.Load() == h && famIs(e, key) {
			return e
		}
	}
}

// insert publishes e, a new cell, as the entry of key for breaker b,
// held, unless the key was made meanwhile (then that entry, held) or b was
// dropped from the registry meanwhile (then nil: make it again). Past the
// bound it evicts.
func (f *Family) insert(e *famEntry, b *Breaker, val any, key string) FamilyKey {
	f.wmu.Lock()
	chunkOf(e).busy &^= 1 << e.Slot // in the tables below, or given up
	if e := f.find(key); e != nil {
		if k := f.hold(e); k.e != nil {
			f.wmu.Unlock()
			return k
		}
	}
	if got, ok := f.reg.Lookup(b.Name()); !ok || got != b {
		b.mu.Lock()
		if b.famTrip && b.fam == nil {
			// A note opened it as it was made (PeerOpen, joining): the
			// family counted that trip, and b will never be its key.
			b.famTrip = false
			f.notClosed.Add(-1)
		}
		b.mu.Unlock()
		f.wmu.Unlock()
		return FamilyKey{}
	}
	c := e.Cold.Load()
	c.Key, c.B, c.Val, e.Klen = key, b, val, famLong
	if len(key) <= famInline {
		e.Klen = uint8(copy(e.Kbuf[:], key))
	}
	atomic.StoreInt32(&e.Inflight, 1)
	e.Used.Store(uint32(f.tick.Load()))
	b.mu.Lock()
	b.fam, b.joining = f, nil
	b.keyed.Store(true)
	b.home = f // never cleared: see Breaker.operate
	// A note that opened it as it was made, within MaxOpen, was counted
	// then (mayTrip); a move back before now was not (no family yet).
	switch now := tripped(State(b.state.Load() & stateMask)); {
	case b.famTrip && !now:
		f.notClosed.Add(-1)
	case !b.famTrip && now:
		f.notClosed.Add(1)
	}
	b.famTrip = false
	b.mu.Unlock()
	c.Buckets[0] = uint32(famBucketOf(f.hashString(key)))
	// Every flag is set before the first table has e: a call reads them
	// with no lock.
	e.Flags |= famInStr
	n, neg, isInt := famIntForm(key)
	if isInt {
		c.IKey, e.Flags = n, e.Flags|neg|famInInt
		c.Buckets[1] = uint32(famBucketOf(f.hashInt(n, neg)))
	}
	f.linkLocked(e, true)
	chunkOf(e).live |= 1 << e.Slot
	if isInt {
		f.linkLocked(e, false) // EnterInt finds it without formatting
	}
	if f.fresh++; f.fresh >= f.step {
		f.fresh = 0
		f.tick.Add(1)
	}
	f.made++
	if f.starved.on {
		f.busy = append(f.busy, e) // no scan will see it before its call ends: watch it
	}
	over := f.live.Add(1) > int64(f.limit)
	f.wmu.Unlock()
	if over {
		f.evict()
	}
	return FamilyKey{e, nil} // held, in its cell
}

// tableOf returns e's table, string (str) or integer, and its hash there.
func (f *Family) tableOf(e *famEntry, str bool) (*famTable, uint64) {
	if str {
		return f.tables.str.Load(), f.hashString(e.Cold.Load().Key)
	}
	return f.tables.ints.Load(), f.hashInt(e.Cold.Load().IKey, e.Flags&famNeg)
}

// linkLocked puts e in the string (str) or integer table, replacing the
// table with a larger or cleaner one when it would be more than half full.
func (f *Family) linkLocked(e *famEntry, str bool) {
	t, h := f.tableOf(e, str)
	if 2*(t.used+1) > len(t.slots) {
		t = rebuild(t, t.live+1)
		if str {
			f.tables.str.Store(t)
			f.tables.sv.set(t)
		} else {
			f.tables.ints.Store(t)
			f.tables.iv.set(t)
		}
	}
	putSlot(t, h, e) // publishes e: every field and flag is set before
	t.live++
}

// famRoom is the least number of slots a rebuilt table has for n keys:
// four times n, so that it is at most a quarter full and the next rebuild
// comes after many new keys, while that is at most famRoomy slots; past
// that, two and a half times n (at most 40% full). A table of 2^19 slots
// (8 MiB, a family of 100,000 keys by the first rule) is past the reach of
// the CPU's TLB, so that every call missed it: the second rule halves it,
// and a call on such a family cost 25 to 30% less. At 10,000 keys the
// first rule's larger table is the faster one, since its tombstones,
// under churn, lengthen the probes less (docs/keys.md, "Large
// families").
func famRoom(n int) int {
	if 4*n <= famRoomy {
		return 4 * n
	}
	return n*5/2 + 1
}

const famRoomy = 1 << 16 // slots: 1 MiB of them

func putSlot(t *famTable, h uint64, e *famEntry) {
	for i := h; ; i++ {
		s := &t.slots[i&t.mask]
		if s.e.Load() == nil {
			s.h.Store(h)
			s.e.Store(e)
			t.used++
			return
		}
	}
}

// rebuild returns a fresh table with t's entries, sized for n of them
// (famRoom), and never smaller than t (see famFast): a family's tables
// keep the size of its most keys at once, which its bound limits.
func rebuild(t *famTable, n int) *famTable {
	size := len(t.slots)
	for size < famRoom(n) {
		size *= 2
	}
	next := newFamTable(size)
	for i := range t.slots {
		s := &t.slots[i]
		if e := s.e.Load(); e != nil && e != famTomb {
			putSlot(next, s.h.Load(), e)
			next.live++
		}
	}
	return next
}

// unlinkLocked replaces e's slot in the string (str) or integer table by
// a tombstone.
func (f *Family) unlinkLocked(e *famEntry, str bool) {
	t, h := f.tableOf(e, str)
	for i := h; ; i++ {
		s := &t.slots[i&t.mask]
		switch s.e.Load() {
		case nil:
			return
		case e:
			s.e.Store(famTomb)
			t.live--
			return
		}
	}
}

// evict drops least recently used entries until the family is within its
// bound or nothing more can go. An OPEN breaker whose period may have
// ended is moved on (to HALF_OPEN, by its State) with no family lock held,
// since that runs the hooks, and then looked at again.
func (f *Family) evict() {
	for range 4 {
		f.wmu.Lock()
		due := f.evictLocked()
		f.wmu.Unlock()
		moved := false
		for _, b := range due {
			if b.State() != Open {
				moved = true
			}
		}
		if !moved {
			return
		}
	}
}

// evictLocked drops victims while the family is over its bound; when no
// CLOSED or HALF_OPEN one can go, it returns the idle OPEN ones' breakers for evict
// to move on. After a scan that found nothing it looks again only once
// max(Keys, live)/16 more keys are made or a key has moved to CLOSED or
// HALF_OPEN (famStarved), so that keys made in an outage cost a scan each
// only that often.
func (f *Family) evictLocked() []*Breaker {
	for f.live.Load() > int64(f.limit) {
		seen := f.escapes.Load()
		if st := f.starved; st.on && f.made < st.until && seen == st.seen && !f.busyEndedLocked() {
			return nil
		}
		e := f.victimLocked()
		if e == nil {
			f.starved = famStarved{on: true, until: f.made + max(f.step, f.live.Load()/16), seen: seen}
			var open []*Breaker
			f.each(func(e *famEntry) {
				if inFlight(e) == 0 && rawState(e) == Open {
					open = append(open, e.Cold.Load().B)
				}
			})
			return open
		}
		f.starved.on = false // a victim: no longer starved
		f.dropLocked(e)
	}
	return nil
}

// busyEndedLocked reports whether a key that no scan could take for its
// calls in flight (the last scan's busy ones, and those made since) may
// go now. An idle one that may not (OPEN, or in an operator's mode)
// leaves the list: a later move to CLOSED or HALF_OPEN counts in escapes.
func (f *Family) busyEndedLocked() bool {
	kept := f.busy[:0]
	defer func() { clear(f.busy[len(kept):]); f.busy = kept }()
	for i, e := range f.busy {
		switch {
		case e.Cold.Load() == nil: // dropped
		case inFlight(e) != 0:
			kept = append(kept, e)
		case stateDroppable(e, rawState(e), false):
			kept = append(kept, f.busy[i:]...)
			return true
		}
	}
	return false
}

// each calls fn for every live entry (each is in the string table).
func (f *Family) each(fn func(*famEntry)) {
	t := f.tables.str.Load()
	for j := range t.slots {
		if e := t.slots[j].e.Load(); e != nil && e != famTomb {
			fn(e)
		}
	}
}

// useOf returns the family's clock of uses at e's last call. An entry
// keeps the clock's low 32 bits (so that what a call reads of it fits in
// one cache line with its route and breaker): the clock moves once every
// Keys/16 new keys, so it is exact for any key used in the last 2^32
// moves of the clock.
func (f *Family) useOf(e *famEntry) int64 {
	t := f.tick.Load()
	return t - int64(uint32(t)-e.Used.Load())
}

// rawState returns the state of e's breaker; e is live (f.wmu is held).
func rawState(e *famEntry) State {
	if e.Flags&core.KeyWords != 0 { // the breaker's words are the cell's: no line more to read
		return State(e.Words.State.Load() & stateMask)
	}
	return State(e.Cold.Load().B.state.Load() & stateMask)
}

// tripped reports whether a member in state s counts towards MaxOpen.
func tripped(s State) bool { return s == Open || s == HalfOpen }

// victimLocked returns the oldest droppable entry, scanning the family
// again when the candidates of the last scan are spent. An entry whose use
// is unchanged since the scan is not newer than any entry the scan passed
// over (uses only grow), so the candidates come out in least-recently-used
// order.
func (f *Family) victimLocked() *famEntry {
	for range 2 {
		for len(f.victims) > 0 {
			v := f.victims[len(f.victims)-1]
			f.victims = f.victims[:len(f.victims)-1]
			if f.useOf(v.e) == v.seen && f.droppable(v.e, true) {
				return v.e
			}
		}
		f.scanLocked(true)
		if len(f.victims) == 0 {
			f.scanLocked(false) // no CLOSED one can go: a HALF_OPEN one then
			for len(f.victims) > 0 {
				v := f.victims[len(f.victims)-1]
				f.victims = f.victims[:len(f.victims)-1]
				if f.droppable(v.e, false) {
					return v.e
				}
			}
			return nil
		}
	}
	return nil
}

// famVictim is an entry a scan picked, with its use then.
type famVictim struct {
	e    *famEntry
	seen int64
}

// droppable reports whether e may be dropped now: no call in flight, and
// CLOSED (or, when closedOnly is false, HALF_OPEN: its OPEN period ended).
// OPEN never; an operator's mode never, but one the environment gave the
// key as it was made (BREAKER_<NAME>_MODE of the family or the key): the
// key comes back in it, so no decision is lost, and a family whose
// variable isolates every key stays within its bound.
func (f *Family) droppable(e *famEntry, closedOnly bool) bool {
	return stateDroppable(e, rawState(e), closedOnly) && inFlight(e) == 0
}

// stateDroppable is droppable's test of e's state st alone.
func stateDroppable(e *famEntry, st State, closedOnly bool) bool {
	switch st {
	case Closed:
		return true
	case HalfOpen:
		return !closedOnly
	case Isolated, Bypassed:
		c := e.Cold.Load()
		return c != nil && c.B != nil && c.B.envMode.Load()
	}
	return false
}

// scanLocked collects the oldest droppable entries, at most a sixteenth of
// the bound, oldest last. It walks the family's chunks of cells in the
// order they were made (lines side by side, where the table's order is
// random), reading each live key's cell once, for its state and use, and
// its counts of calls in flight (its bucket's word in each lane) only for
// the oldest, until it has enough (BenchmarkFamilyPauses). A chunk with no live or
// busy cell, but the current one, is let go of here: its cells are never
// used again.
func (f *Family) scanLocked(closedOnly bool) {
	f.scans++
	f.busy = f.busy[:0]
	all := f.victims[:0]
	kept := f.chunks[:0]
	for i, ch := range f.chunks {
		if ch.live|ch.busy == 0 && i != len(f.chunks)-1 { // the last is the current one
			continue
		}
		kept = append(kept, ch)
		for live := ch.live; live != 0; live &= live - 1 {
			if e := &ch.cells[bits.TrailingZeros32(live)]; stateDroppable(e, rawState(e), closedOnly) {
				all = append(all, famVictim{e, f.useOf(e)})
			}
		}
	}
	clear(f.chunks[len(kept):])
	f.chunks = kept
	slices.SortFunc(all, func(a, b famVictim) int { return cmp.Compare(a.seen, b.seen) })
	n := max(f.limit/16, 1)
	k := 0
	for _, v := range all {
		if k == n {
			break
		}
		if inFlight(v.e) == 0 {
			all[k] = v
			k++
		} else {
			f.busy = append(f.busy, v.e)
		}
	}
	all = all[:k]
	slices.Reverse(all) // oldest last
	f.victims = all
}

// dropLocked removes e from the family and its breaker from the registry,
// if no call entered it meanwhile.
func (f *Family) dropLocked(e *famEntry) {
	if !f.foldDead(e) {
		return
	}
	if e.Flags&famInStr != 0 {
		f.unlinkLocked(e, true)
	}
	if e.Flags&famInInt != 0 {
		f.unlinkLocked(e, false)
	}
	b := e.Cold.Load().B
	// The cell stays in its chunk (see newCellLocked), which its live
	// neighbours keep: it lets go of the key's route and breaker.
	e.Cold.Store(nil)
	e.Route = nil
	b.mu.Lock()
	if tripped(State(b.state.Load() & stateMask)) {
		f.notClosed.Add(-1)
	}
	b.fam = nil
	b.mu.Unlock()
	r := f.reg
	r.mu.Lock() // under the family's lock: a new breaker of the key is published after this
	if r.breakers[b.cfg().Name] == b {
		delete(r.breakers, b.cfg().Name)
	}
	r.mu.Unlock()
	chunkOf(e).live &^= 1 << e.Slot
	f.live.Add(-1)
	f.drops.Add(1)
}

// moved counts a transition of a member breaker; b.mu is held.
func (f *Family) moved(from, to State) {
	if to == Closed || to == HalfOpen {
		f.escapes.Add(1) // perhaps droppable now: see famStarved
	}
	switch a, b := tripped(from), tripped(to); {
	case !a && b:
		f.notClosed.Add(1)
	case a && !b:
		f.notClosed.Add(-1)
	}
}

// mayTrip reports whether member b may leave CLOSED now under MaxOpen,
// and if not, why; b.mu is held. A trip it allows is counted in notClosed
// at once, in the one step that checks the count (b.famTrip tells
// transitionLocked not to count it again): members trip under locks of
// their own, and a count made only at the transition let every key of a
// family that failed at the same moment pass the check, each before the
// others were counted.
func (f *Family) mayTrip(b *Breaker) (bool, string) {
	if f.maxOpen == 0 {
		return true, ""
	}
	if b.fam == nil && b.famTrip {
		// A key's breaker being made (joining), opened again before the
		// family took it in: it is counted once already, and insert
		// reconciles the count with its state then.
		return true, ""
	}
	live := f.live.Load()
	if b.fam == nil {
		live++ // being made (joining): live once it is in
	}
	// At the bound a new key takes the place of one dropped for it, and a
	// key made while another is dropped is counted before the drop: the
	// live keys at rest are at most the bound.
	live = min(live, int64(f.limit))
	allowed := max(live*int64(f.maxOpen)/100, 1)
	for {
		n := f.notClosed.Load()
		if n+1 > allowed {
			f.refused.Add(1)
			return false, fmt.Sprintf("would trip, but maxopen %d%% allows %d of %d keys OPEN or HALF_OPEN and %d are; stays CLOSED",
				f.maxOpen, allowed, live, n)
		}
		if f.notClosed.CompareAndSwap(n, n+1) {
			b.famTrip = true
			return true, ""
		}
	}
}

// reconfigure makes next the settings of the keys made from now on, and
// returns the breaker of every live key (see [Registry.Update]). steps
// are the Update's Configs naming the family, in order: each is laid on
// the settings as given (f.given), field by field and without defaults,
// so that a key's own layers still go over what the layers gave and not
// over defaults (a key's window alone leaves it without a threshold when
// no layer gave one, and takes its own minimum of calls).
func (f *Family) reconfigure(next Config, steps []Config) []*Breaker {
	f.wmu.Lock()
	defer f.wmu.Unlock()
	next.Name = f.name
	f.conf.Store(&next)
	given := *f.given.Load()
	for _, c := range steps {
		given = override{cfg: c}.apply(given)
	}
	f.given.Store(&given)
	return f.breakers()
}

// liveBreakers is breakers, for a caller that does not hold f.wmu: keys
// are dropped meanwhile.
func (f *Family) liveBreakers() []*Breaker {
	f.wmu.Lock()
	defer f.wmu.Unlock()
	return f.breakers()
}

// breakers returns the breaker of every live key; f.wmu is held.
func (f *Family) breakers() []*Breaker {
	var out []*Breaker
	f.each(func(e *famEntry) { out = append(out, e.Cold.Load().B) })
	return out
}

// FamilyHealth is a family's bound and what it did: its live keys, how
// many are OPEN or HALF_OPEN, how many were dropped to stay within the
// bound, and how many trips maxopen kept CLOSED. Each key's breaker is
// among Health.Breakers.
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

// familiesNamed returns the families of r called name.
func (r *Registry) familiesNamed(name string) []*Family {
	r.mu.RLock()
	defer r.mu.RUnlock()
	var out []*Family
	for _, f := range r.families {
		if f.name == name {
			out = append(out, f)
		}
	}
	return out
}

// keptClosedLocked is the MaxOpen check of a member's trip: when the family
// has its share of keys OPEN or HALF_OPEN, the breaker starts a fresh
// CLOSED period instead, and an Event from CLOSED to CLOSED (in the log,
// not the hooks: nothing changed) says why; b.mu is held.
func (b *Breaker) keptClosedLocked(reason string) bool {
	ok, why := b.fam.mayTrip(b)
	if ok {
		return false
	}
	now := b.reg.clock.Now()
	b.startPeriodLocked(b.state.Load(), Closed, now, 0)
	b.reg.logOnly(Event{Source: b.cfg().Name, From: Closed, To: Closed,
		Reason: truncate(foldSpace(why+": "+reason), reasonMax)})
	return true
}
