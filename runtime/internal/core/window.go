package core

import (
	"math"
	"sync/atomic"
	_ "unsafe" // for go:linkname
)

// Window is the part of a time window (Config.WindowPeriod) that counts
// successes without a lock or a clock read: per-P stripes of tagged
// per-bucket counters. Package runtime owns the rest of the window (the
// failures, the clock, the trip check) and publishes, in Pub, the bucket
// that a success ending now belongs to, for as long as it is certain that
// now is within that bucket and that a success cannot trip the breaker.
//
// Each counter word is tag<<32 | count. A tag names a bucket of one state
// period: consecutive buckets have consecutive tags, and a new period
// starts its tags past every tag of the period before, so a counter from
// an older bucket or period never matches the tags a reader sums. A
// success finding an older tag in its counter rolls it; one finding a
// newer tag, or a full counter, declines and the caller records it the
// slow way.
//
// Stripe i is written only by the goroutine running on P i, pinned to it
// (runtime.procPin: no preemption, so no other goroutine runs on that P
// meanwhile): one writer at a time, so a write is a load and a plain
// store (see bump), with no locked instruction; readers load atomically.
// A P whose id has no stripe (GOMAXPROCS raised past the stripes made)
// declines.
type Window struct {
	// Pub is period<<32 | tag<<1 | valid: a success of an admission of
	// that period may count in bucket tag while valid is set.
	Pub     atomic.Uint64
	stripes []stripe
}

// Buckets is how many buckets a time window sums: the current one and
// the ten before it.
const Buckets = 11

// counters is how many counters a stripe has: more than Buckets, so that
// the counters of the buckets a reader sums are distinct, and a power of
// two, so that a tag's counter is its low bits.
const counters = 16

type stripe struct {
	c [counters]uint64 // a stripe per pair of cache lines; see bump
}

// NewWindow returns a Window with n stripes (at least 1, at most 256):
// one per P.
func NewWindow(n int) *Window {
	return &Window{stripes: make([]stripe, min(max(n, 1), 256))}
}

//go:linkname procPin runtime.procPin
func procPin() int

//go:linkname procUnpin runtime.procUnpin
func procUnpin()

// Sum returns the successes counted in the buckets tagged tag-n+1..tag.
func (win *Window) Sum(tag uint32, n int) int {
	total := 0
	for i := range win.stripes {
		for j := range win.stripes[i].c {
			old := atomic.LoadUint64(&win.stripes[i].c[j])
			if d := int32(tag - uint32(old>>32)); d >= 0 && int(d) < n {
				total += int(uint32(old))
			}
		}
	}
	return total
}

// ProcPin pins the caller to its P (no preemption until [ProcUnpin]) and
// returns the P's id; after ProcUnpin the id is a hint for spreading
// writes over per-P memory, since the goroutine may move to another P as
// soon as it is unpinned. Each is one call, so that it inlines.
func ProcPin() int { return procPin() }

// ProcUnpin undoes [ProcPin].
func ProcUnpin() { procUnpin() }

// Count counts a success of the CLOSED call admitted as w in the published
// bucket, and reports false when the caller must record it instead: when
// nothing is published for w's period, or the counter is full or newer
// (see [Window]). One function, so that the path makes no call but the
// pin.
func (win *Window) Count(w uint64) bool {
	p := win.Pub.Load()
	if p&1 == 0 || uint32(p>>32) != uint32(w>>32) {
		return false
	}
	tag := uint32(p) >> 1
	id := procPin() // the P's stripe, which only this goroutine writes until unpinned
	ok := id < len(win.stripes) && bump(&win.stripes[id].c[tag%counters], tag)
	procUnpin()
	return ok
}

// bump adds one success of bucket tag to counter c of the caller's P, and
// reports false when it cannot (see [Window]). The caller is pinned to
// its P, so it is c's only writer: a plain store is enough, and costs no
// locked instruction where atomic.StoreUint64 costs one (an XCHG on
// amd64, about 5 ns). A word-sized aligned store is not torn (the Go
// memory model: a racy read of a word sees some write of it; where 64 bits
// are not a word, storeOwned stores atomically), and Sum,
// the only other reader, loads it atomically and needs no order with it
// beyond that of the synchronization that orders Sum after the call
// (the store precedes it in program order, and every synchronizing
// operation is at least a release). The race detector does not watch
// this function: the only conflicting access is that intended one.
//
//go:norace
func bump(c *uint64, tag uint32) bool {
	old := *c
	switch d := int32(tag - uint32(old>>32)); {
	case d == 0 && uint32(old) != math.MaxUint32:
		storeOwned(c, old+1)
	case d > 0: // an older bucket: roll it
		storeOwned(c, uint64(tag)<<32|1)
	default:
		return false // full, or a newer bucket: w's bucket may be gone
	}
	return true
}

// storeOwned stores v in *p, a word that readers load atomically, for a
// writer that needs no locked instruction (see bump): a plain store where
// 64 bits are the machine's word and the store cannot be torn, an atomic
// one elsewhere (a constant test: one of the two is compiled).
//
//go:norace
func storeOwned(p *uint64, v uint64) {
	if Word64 {
		*p = v
		return
	}
	atomic.StoreUint64(p, v)
}

// Word64 reports whether a uint64 is the machine's word: a plain store of
// one cannot be torn.
const Word64 = ^uintptr(0)>>63 == 1
