package core

import (
	"sync/atomic"
	"unsafe"
)

// Tally is a count that goroutines on several CPUs add to at once, as the
// refusals of an OPEN breaker under load do. One atomic counter would
// move its line between the CPUs' caches on every add: refusing on two
// CPUs then cost two to three times what it cost on one
// (bench/contend's BenchmarkRejectionParallel, -cpu 2). Once [Tally.Spread],
// an add goes to one of tallyStripes counters, each on a line of its own,
// picked by the address of the caller's stack: each goroutine runs on a
// stack of its own, so goroutines on different CPUs add to different
// lines unless their stacks' addresses pick the same one. [Tally.Load]
// sums them. A Tally counts on one counter until spread, so that the
// thousands of breakers that never refuse a call (a family's keys) carry
// no stripes.
type Tally struct {
	one     atomic.Uint64
	stripes atomic.Pointer[[tallyStripes]tallyLine]
}

// tallyStripes is how many lines a spread Tally adds to, 1<<(64-tallyShift).
// A stack's address picks one by Fibonacci hashing (the top bits of the
// address times 2^64/φ): stacks are aligned to their size, so the low
// bits of an address say how deep in its stack a call is, the same for
// every goroutine at the same call, and only the high bits tell stacks
// apart.
const (
	tallyStripes = 16
	tallyShift   = 60
	tallyMix     = 0x9e3779b97f4a7c15
)

var _ [tallyStripes - 1<<(64-tallyShift)]byte
var _ [1<<(64-tallyShift) - tallyStripes]byte

type tallyLine struct {
	n atomic.Uint64
	_ [56]byte
}

// Add adds one. It inlines.
func (t *Tally) Add() {
	n := &t.one
	if s := t.stripes.Load(); s != nil {
		n = &s[uint64(uintptr(unsafe.Pointer(&n)))*tallyMix>>tallyShift].n // &n is on the stack: see Tally
	}
	n.Add(1)
}

// Spread gives t its stripes, if it has none: an allocation, made once
// and not on a call's path (runtime spreads a breaker's count of refusals
// when it first leaves CLOSED).
func (t *Tally) Spread() {
	if t.stripes.Load() == nil {
		t.stripes.CompareAndSwap(nil, new([tallyStripes]tallyLine))
	}
}

// Load returns the count.
func (t *Tally) Load() uint64 {
	n := t.one.Load()
	if s := t.stripes.Load(); s != nil {
		for i := range s {
			n += s[i].n.Load()
		}
	}
	return n
}

// Reset sets the count to zero. Adds made meanwhile may be lost or kept.
func (t *Tally) Reset() {
	t.one.Store(0)
	if s := t.stripes.Load(); s != nil {
		for i := range s {
			s[i].n.Store(0)
		}
	}
}
