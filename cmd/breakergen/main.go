package main

import (
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"strconv"
)

// gcPercent is the collector's target for a run inside a test process
// (BenchmarkGenerateInProcess200x10). breakergen itself lives for one load
// and one render and then exits, so it trades memory for time: main turns
// the collector off until the heap reaches gcLimit, the soft memory limit
// at which it collects again. On the 200 × 10 package in one file that
// takes a run's CPU time from 311 to 274 ms, at 79 MB peak instead of 63 MB
// (docs/generator-speed.md); no run over one package comes near the limit.
// The go command that lists the packages runs with GOGC=400 (gcPercent):
// in a warm cache it compiles nothing, and that takes its CPU time from
// about 98 to 79 ms; when it does compile export data, the compilers have
// it too (their heaps grow to five times what they hold, not twice). A
// GOGC or GOMEMLIMIT in the environment wins, for both.
const (
	gcPercent = 400
	gcLimit   = 512 << 20
)

func main() {
	_, gogc := os.LookupEnv("GOGC")
	_, limit := os.LookupEnv("GOMEMLIMIT")
	if !gogc && !limit {
		debug.SetGCPercent(-1)
		debug.SetMemoryLimit(gcLimit)
		os.Setenv("GOGC", strconv.Itoa(gcPercent)) // for the go command, which inherits it
	}
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		// errReported and errUsage were printed already (errUsage with
		// the flag package's message and the usage).
		if !errors.Is(err, errReported) && !errors.Is(err, errUsage) {
			fmt.Fprintln(os.Stderr, "breakergen:", err)
		}
		os.Exit(exitCode(err))
	}
}
