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
// success finding an older tag in its counter rolls it (compare-and-swap);
// one finding a newer tag, or a full counter, declines and the caller
// records it the slow way.
type Window struct {
	// Pub is period<<32 | tag<<1 | valid: a success of an admission of
	// that period may count in bucket tag while valid is set.
	Pub     atomic.Uint64
	stripes []stripe
	mask    int
}

// Buckets is how many buckets a time window sums: the current one and
// the ten before it.
const Buckets = 11

type stripe struct {
	c [Buckets]atomic.Uint64
	_ [128 - Buckets*8]byte // a stripe per pair of cache lines
}

// NewWindow returns a Window with at least n stripes (n is rounded up to
// a power of two, at most 64).
func NewWindow(n int) *Window {
	s := 1
	for s < n && s < 64 {
		s *= 2
	}
	return &Window{stripes: make([]stripe, s), mask: s - 1}
}

//go:linkname procPin runtime.procPin
func procPin() int

//go:linkname procUnpin runtime.procUnpin
func procUnpin()

// Succeed counts the success of the CLOSED call admitted as w in the
// published bucket, and reports false when it cannot (nothing is
// published for w's period, or the counter is full or newer), leaving
// the caller to record it the slow way.
func (win *Window) Succeed(w uint64) bool {
	p := win.Pub.Load()
	if p&1 == 0 || uint32(p>>32) != uint32(w>>32) {
		return false
	}
	tag := uint32(p) >> 1
	id := procPin() // the P's stripe: no line shared between cores
	procUnpin()
	c := &win.stripes[id&win.mask].c[tag%Buckets]
	for {
		old := c.Load()
		switch d := int32(tag - uint32(old>>32)); {
		case d == 0:
			if uint32(old) == math.MaxUint32 {
				return false
			}
			if c.CompareAndSwap(old, old+1) {
				return true
			}
		case d > 0: // an older bucket: roll it
			if c.CompareAndSwap(old, uint64(tag)<<32|1) {
				return true
			}
		default:
			return false // a newer bucket: w's bucket may be gone
		}
	}
}

// Sum returns the successes counted in the buckets tagged tag-n+1..tag.
func (win *Window) Sum(tag uint32, n int) int {
	total := 0
	for i := range win.stripes {
		for j := range win.stripes[i].c {
			old := win.stripes[i].c[j].Load()
			if d := int32(tag - uint32(old>>32)); d >= 0 && int(d) < n {
				total += int(uint32(old))
			}
		}
	}
	return total
}
