package runtime_test

import (
	"testing"
	"time"
)

// BenchmarkClockNow is the cost of one clock read on this machine, for
// reading the failure path's figure (it records the failure's time).
func BenchmarkClockNow(b *testing.B) {
	for b.Loop() {
		sinkTime = time.Now()
	}
}

// BenchmarkClockSince is a monotonic-only read (time.Since of a time with a
// monotonic reading), the cheaper clock a failure could use if its time did
// not have to be wall time read at that instant.
func BenchmarkClockSince(b *testing.B) {
	for b.Loop() {
		sinkDuration = time.Since(benchStart)
	}
}

var sinkTime time.Time

var sinkDuration time.Duration

var benchStart = time.Now()
