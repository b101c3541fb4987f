package core

import "sync"

// Fence makes every running thread of the process execute a full memory
// barrier before it returns, and reports whether it could. It is the
// heavy half of an asymmetric fence: a writer that only stores with plain
// instructions, where the other side calls Fence between its own store
// and load, needs no locked instruction of its own for the two to see
// each other (Dekker's exchange: each stores, then loads what the other
// stored). Package runtime counts the calls in flight on a family's key
// that way (runtime/family.go, Family.hold). A thread that is not running
// drained its stores when it stopped.
//
// StartFence must have reported true first; without it, Fence reports
// false and callers keep to locked instructions.
func Fence() bool { return fenced && fence() }

var (
	fenced    bool
	fenceOnce sync.Once
)

// StartFence readies Fence where the system has it (Linux's membarrier on
// 64-bit CPUs) and reports whether Fence works. Only its first call asks
// the system; later calls return the first answer.
func StartFence() bool {
	fenceOnce.Do(func() { fenced = startFence() })
	return fenced
}
