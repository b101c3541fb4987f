package runtime

import (
	"math"
	"math/bits"
	goruntime "runtime"
	"sync/atomic"
	"time"

	"github.com/breakergen/breakergen/runtime/internal/core"
)

// tracker times the calls in flight of a breaker with SlowCall or InFlight
// (SPEC §8) without a lock that every call takes: a call takes a free slot
// of its P's home segment, writes its start there and publishes it with
// one atomic store of the slot's word, and frees the slot with one
// compare-and-swap of that word when it ends: two locked instructions a
// call. Nothing on that path is shared by the calls of different Ps, so it
// scales across cores.
//
// A home segment is claimed only by the goroutine running on its P,
// pinned to it meanwhile (no other goroutine runs there until it unpins),
// so a free slot there has one claimer at a time and needs no arbitration:
// the claim is a load of the slot's word, and no bitmap of taken slots is
// kept (a call that ends frees its slot by its word alone, from any P).
// The segments past the home ones (the table grows when a P's home is
// full, or for a P whose id has no home) are shared: a call claims a slot
// there with a compare-and-swap of the segment's bitmap of taken slots,
// and clears its bit when it ends.
//
// InFlight is checked at every admission and every look at the state
// without scanning the table each time: due is an instant no earlier than
// which some call of the current period could be overdue (every timed
// call's start+InFlight is at least due), so a look whose clock reads at
// most due finds nothing, with one load of a word that is written only
// when the earliest deadline moves. A look past due scans every slot under
// the window's lock (see overdueLocked), counts the calls it finds
// overdue and moves due on.
//
// A slot's word is period<<32 | gen<<3 | state: gen counts the slot's
// uses, so a scanner that read a slot of one call never counts the next
// call in it. A call writes its start, then its word; a scanner reads the
// word, then the start, and counts the call with a compare-and-swap of the
// word it read. Scanners look at every slot's word (slotLive or
// slotCounted say a call holds it), not at the bitmaps.
//
// The store of the word is atomic (an XCHG on amd64, a full barrier), not
// only for the start's sake: the claim then loads due, while a scan that
// raises due then loads the slots (see overdueLocked); each side's store
// must be seen before its load, or a call whose claim read due before the
// raise could be missed by the scan after it.
type tracker struct {
	due  atomic.Int64                // InFlight: the earliest a call may be overdue (see above)
	last atomic.Int64                // the InFlight that due was computed with: a look with another (Registry.Update) scans
	segs atomic.Pointer[[]*trackSeg] // grown under the window's lock, never shrunk
	home int                         // the first segments, one per P: P i claims only in segment i (a power of two, at least GOMAXPROCS at creation, at most 256)

	// ordered: the clock is not the real one (WithClock), so calls often
	// start at the same instant; their gens come from seq, in admission
	// order, so that claimLocked forgets the first admitted of the oldest.
	ordered bool
	seq     atomic.Uint64

	spill atomic.Int64 // the segment where the latest claim outside its home found a slot
}

// trackSeg is one segment: a bit per slot claimed (shared segments
// only), the slot its P looks at first (home segments only), and the
// slots.
type trackSeg struct {
	used  atomic.Uint64
	next  uint // home segments: the slot its P looks at first (see nextSlot)
	slots [segSlots]trackSlot
	_     [64]byte // the next segment's first words on another cache line
}

type trackSlot struct {
	word  atomic.Uint64 // period<<32 | gen<<3 | state
	start int64         // a stamp (see stamps): written by setStart, read with atomic.LoadInt64
}

const (
	segSlots = 64
	genMask  = 1<<29 - 1
)

// The states of a timed call (its slot's word).
const (
	slotFree      = iota // no call, or one between its claim and its start
	slotLive             // in flight
	slotCounted          // in flight, counted as an overdue failure: its outcome is ignored
	slotForgotten        // in flight past the capacity (maxTracked): its outcome is ignored
	slotState     = 7
)

func newTracker(ordered bool) *tracker {
	n := 1 // a power of two, at least one per P
	for n < min(max(goruntime.GOMAXPROCS(0), goruntime.NumCPU()), 256) {
		n *= 2
	}
	segs := make([]*trackSeg, n)
	for i := range segs {
		segs[i] = new(trackSeg)
	}
	t := &tracker{home: n, ordered: ordered}
	t.segs.Store(&segs)
	t.due.Store(math.MaxInt64)
	return t
}

// claim times a call of period p that started at now and returns its
// tracking id, or 0 when every slot was taken (the caller then claims
// under the window's lock with claimLocked). It looks in its P's home
// segment first, at the slot after the one it claimed last (the oldest
// of its calls, or a free slot when calls end in turn), then in the
// shared segments.
func (t *tracker) claim(now int64, p uint32) uint64 {
	segs := *t.segs.Load()
	i := core.ProcPin() // no other goroutine runs on this P until ProcUnpin
	if i < t.home {
		// A free slot of this P's home segment is the caller's to fill,
		// with no compare-and-swap: only the goroutine pinned to P i
		// claims there, and scanners and ends change only the words of
		// slots that a call holds.
		seg := segs[i]
		j := seg.nextSlot()
		s := &seg.slots[j]
		if w := s.word.Load(); w&slotState == slotFree {
			seg.setNext(j + 1)
			id := t.fill(s, w, i, j, now, p)
			core.ProcUnpin()
			return id
		}
		if id := t.claimHome(seg, i, now, p); id != 0 {
			core.ProcUnpin()
			return id
		}
	}
	core.ProcUnpin()
	return t.claimAny(segs, now, p)
}

// nextSlot returns the slot of home segment seg where its P looks first
// for a free one. seg.next is a plain field that only the goroutine pinned
// to the segment's P reads and writes, one at a time (see claim): the race
// detector does not know the pin, hence go:norace, here and in setNext.
//
//go:norace
func (seg *trackSeg) nextSlot() uint { return seg.next % segSlots }

// setNext makes j the slot of home segment seg where its P looks first.
//
//go:norace
func (seg *trackSeg) setNext(j uint) { seg.next = j }

// claimHome is claim in segment i (seg), the home of the P that the
// caller is pinned to, past its first look: every slot in turn. It
// returns 0 when every slot is held.
func (t *tracker) claimHome(seg *trackSeg, i int, now int64, p uint32) uint64 {
	j := seg.nextSlot()
	for range segSlots {
		s := &seg.slots[j]
		if w := s.word.Load(); w&slotState == slotFree {
			seg.setNext(j + 1)
			return t.fill(s, w, i, j, now, p)
		}
		j = (j + 1) % segSlots
	}
	return 0
}

// claimAny is claim in the shared segments (past the home ones), starting
// from the latest that had room (spill), so that a burst of calls past
// their home segments does not look through every full segment each time.
func (t *tracker) claimAny(segs []*trackSeg, now int64, p uint32) uint64 {
	shared := len(segs) - t.home
	if shared <= 0 {
		return 0
	}
	from := int(t.spill.Load()) - t.home
	if from < 0 || from >= shared {
		from = 0
	}
	for k := range shared {
		i := t.home + (from+k)%shared
		seg := segs[i]
		for {
			u := seg.used.Load()
			if u == math.MaxUint64 {
				break // full: the next segment
			}
			j := bits.TrailingZeros64(^u)
			if seg.used.CompareAndSwap(u, u|1<<j) {
				if i != t.home+from {
					t.spill.Store(int64(i))
				}
				s := &seg.slots[j]
				return t.fill(s, s.word.Load(), i, uint(j), now, p)
			}
		}
	}
	return 0
}

// fill fills slot j of segment i (s), just claimed, whose word is w (free),
// with a call of period p that started at now, and returns its tracking
// id.
func (t *tracker) fill(s *trackSlot, w uint64, i int, j uint, now int64, p uint32) uint64 {
	setStart(s, now)
	gen := w>>3 + 1
	if t.ordered {
		gen = t.seq.Add(1)
	}
	s.word.Store(uint64(p)<<32 | gen&genMask<<3 | slotLive)
	return uint64(i*segSlots) + uint64(j) + 1
}

// setStart writes the start of the call that just claimed slot s, before
// it publishes the call with the slot's word (an atomic store, which
// orders this store before it on every architecture: a reader that loads
// the word live loads this start). A plain store: atomic.StoreInt64 costs
// a locked instruction on amd64 (an XCHG) that this one does not need. The
// one access it can race with is a scanner's late atomic load of the
// start of the slot's previous call, after that call ended: the store is
// not torn (an atomic store where 64 bits are not the machine's word), and the scanner's compare-and-swap of the
// previous call's word fails, so that what it read is dropped (or, for a
// call not yet overdue, it only moves due earlier). The race detector does
// not watch it, for that one access.
//
//go:norace
func setStart(s *trackSlot, now int64) {
	if core.Word64 {
		s.start = now
		return
	}
	atomic.StoreInt64(&s.start, now)
}

// claimLocked is claim when every slot was taken: the table grows by a
// quarter, up to maxTracked slots; past maxTracked timed calls the oldest
// is forgotten (its outcome will be ignored) and the table grows by one
// segment, which the forgotten call's slot makes up for when it ends.
// Calls that claim without the lock may take every slot of the new
// segments first: it then grows the table again, until it has a slot or
// no id is left (0: the call is not timed). The window's lock is held.
func (t *tracker) claimLocked(now int64, p uint32) uint64 {
	for {
		if id := t.claim(now, p); id != 0 {
			return id // a call ended meanwhile, or the table grew
		}
		segs := *t.segs.Load()
		timed := 0
		var oldest *trackSlot
		var oldestWord uint64
		for _, seg := range segs {
			for j := range seg.slots {
				s := &seg.slots[j]
				w := s.word.Load()
				if st := w & slotState; st != slotLive && st != slotCounted {
					continue
				}
				timed++
				if oldest == nil || older(atomic.LoadInt64(&s.start), w, atomic.LoadInt64(&oldest.start), oldestWord) {
					oldest, oldestWord = s, w
				}
			}
		}
		if timed >= maxTracked && oldest != nil {
			oldest.word.CompareAndSwap(oldestWord, oldestWord&^slotState|slotForgotten)
		}
		more := 1
		if timed < maxTracked {
			more = max(min(len(segs)/4, maxTracked/segSlots-len(segs)), 1)
		}
		if uint64(len(segs)+more)*segSlots > idMask {
			return 0 // no id left for another segment: the call is not timed
		}
		grown := segs[:len(segs):len(segs)]
		for range more {
			grown = append(grown, new(trackSeg))
		}
		t.segs.Store(&grown)
	}
}

// older reports whether the call that started at start in a slot whose
// word is w was admitted before the one of (start2, w2): the earlier
// start, or, at the same instant, the earlier gen (which says the
// admission order with a test clock, see ordered).
func older(start int64, w uint64, start2 int64, w2 uint64) bool {
	if start != start2 {
		return start < start2
	}
	d := (w>>3 - w2>>3) & genMask
	return d > genMask/2 // w's gen comes before w2's, modulo 1<<29
}

// end ends the timing of the call with tracking id id. It returns the
// call's start, and ok false when its outcome must be ignored: it was
// counted as overdue, or forgotten. A call that was not timed (id 0) ends
// with start 0 and ok true.
func (t *tracker) end(id uint64) (start int64, ok bool) {
	if id == 0 {
		return 0, true
	}
	i := id - 1
	seg := (*t.segs.Load())[i/segSlots]
	s := &seg.slots[i%segSlots]
	start = atomic.LoadInt64(&s.start) // before the slot is freed: a next call may take it
	for {
		w := s.word.Load()
		if s.word.CompareAndSwap(w, w&^slotState) { // slotFree, which is 0
			if i/segSlots >= uint64(t.home) { // a shared segment's bitmap
				seg.used.And(^(1 << (i % segSlots)))
			}
			return start, w&slotState == slotLive
		}
	}
}

// lowerDue makes due at most d, the deadline of a call that started.
func (t *tracker) lowerDue(d int64) {
	for {
		cur := t.due.Load()
		if cur <= d || t.due.CompareAndSwap(cur, d) {
			return
		}
	}
}

// mayBeOverdue reports whether a call may have been in flight longer than
// limit at instant now: a scan (overdueLocked) must look.
func (t *tracker) mayBeOverdue(now int64, limit time.Duration) bool {
	return now > t.due.Load() || int64(limit) != t.last.Load()
}

// overdueLocked counts the calls of state period p in flight longer than
// limit at instant now: it marks them counted and returns how many there
// were, how many of them were in flight longer than slowCall (0: none),
// and the age of the oldest; then it moves due on to the deadline of the
// oldest call left. The window's lock is held: one scanner at a time.
// (A call admitted while Registry.Update lowers InFlight may lower due
// with the old limit after this scan: a look finds it up to the
// difference late; its end still judges it by the new one.)
func (t *tracker) overdueLocked(now int64, p uint32, limit, slowCall time.Duration) (n, slow int, oldest time.Duration) {
	t.last.Store(int64(limit))
	was := t.due.Load()
	first := int64(math.MaxInt64) // the earliest start among the calls left
	for _, seg := range *t.segs.Load() {
		for j := range seg.slots {
			s := &seg.slots[j]
			w := s.word.Load()
			if w&slotState != slotLive || uint32(w>>32) != p {
				continue
			}
			start := atomic.LoadInt64(&s.start)
			age := time.Duration(now - start)
			if age <= limit {
				first = min(first, start)
				continue
			}
			if !s.word.CompareAndSwap(w, w&^slotState|slotCounted) {
				continue // it ended, or it is another call's slot now
			}
			n++
			oldest = max(oldest, age)
			if slowCall > 0 && age > slowCall {
				slow++
			}
		}
	}
	next := int64(math.MaxInt64)
	if first != math.MaxInt64 {
		next = first + int64(limit)
	}
	if next < was {
		// A lowered InFlight (Registry.Update): the calls left are due
		// sooner than the old limit said.
		t.lowerDue(next)
	} else if next > was && t.due.CompareAndSwap(was, next) {
		// A call that claimed its slot after the scan passed it, and read
		// due before this raise, did not lower it: find it again.
		for _, seg := range *t.segs.Load() {
			for j := range seg.slots {
				s := &seg.slots[j]
				if w := s.word.Load(); w&slotState == slotLive && uint32(w>>32) == p {
					t.lowerDue(atomic.LoadInt64(&s.start) + int64(limit))
				}
			}
		}
	}
	return n, slow, oldest
}

// inFlight returns how many timed calls have not ended.
func (t *tracker) inFlight() int {
	n := 0
	for _, seg := range *t.segs.Load() {
		for j := range seg.slots {
			if st := seg.slots[j].word.Load() & slotState; st == slotLive || st == slotCounted {
				n++
			}
		}
	}
	return n
}
