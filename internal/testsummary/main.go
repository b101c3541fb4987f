// Command testsummary runs go test and says what it skipped: `make test`
// runs every module's tests through it.
//
// Usage:
//
//	testsummary [-record FILE] [-allocs] go test [flags] [packages]
//	testsummary -report FILE...
//
// The first form runs the go test command line with -json added, prints
// what go test prints without -v (each failing test's output, a line per
// package, build errors) and exits with go test's status. With -record it
// appends each skipped test (package, name, reason) to FILE as a JSON line.
//
// With -allocs it runs, of the packages given, only those whose tests call
// testing.AllocsPerRun, and of their tests only those named *Alloc*: the
// allocation tests, which skip under -race and so need a pass of their own.
// [checkAllocNames], run as a test of this package, keeps every
// AllocsPerRun call inside a test of such a name.
//
// The second form reads the recorded skips and prints their count and each
// reason once, with the tests that gave it. A skip whose reason starts with
// [MissingPrefix] ("missing component: ") says a test could not find a
// server, a browser or a tool it drives; with CI=true in the environment
// (as .ci/run, which installs them all, runs) such a skip fails the report.
package main

import (
	"fmt"
	"os"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr, os.Getenv("CI") == "true"); err != nil {
		if err != errFailed {
			fmt.Fprintln(os.Stderr, "testsummary:", err)
		}
		os.Exit(1)
	}
}
