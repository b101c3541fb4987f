package main

import (
	"errors"
	"fmt"
	"os"
	"runtime/debug"
)

// gcPercent is the collector's target for a run inside a test process
// (BenchmarkGenerateInProcess200x10). breakergen itself lives for one load
// and one render and then exits, so it trades memory for time: main turns
// the collector off until the heap reaches gcLimit, the soft memory limit
// at which it collects again. On the 200 × 10 package in one file that
// takes a run's CPU time from 311 to 274 ms, at 79 MB peak instead of 63 MB
// (docs/generator-speed.md); no run over one package comes near the limit.
// A GOGC or GOMEMLIMIT in the environment wins.
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
	}
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, errReported) {
			fmt.Fprintln(os.Stderr, "breakergen:", err)
		}
		os.Exit(exitCode(err))
	}
}
