package breakerimpl

import (
	"context"

	"github.com/breakergen/breakergen/runtime"
	"github.com/breakergen/breakergen/runtime/internal/core"
)

// ForgetCallStates clears the flag set by the first WithBudget or
// WithProvenance of the process, for tests that need a process that has used
// neither; restore sets it back. Tests using it must not run in parallel.
func ForgetCallStates() (restore func()) {
	old := core.InUse.Load()
	core.InUse.Store(0)
	return func() { core.InUse.Store(old) }
}

// KeepCallStates returns a func that sets the flag ForgetCallStates clears
// back to what it is now: for benchmarks that make a record, so that the
// benchmarks after them run on the fast path as before.
func KeepCallStates() (restore func()) {
	old := core.InUse.Load()
	return func() { core.InUse.Store(old) }
}

// Why is core.Why, for the tests of the reasons a chain records.
func Why(ctx context.Context, err error, answered bool) string {
	return core.Why(ctx, err, answered)
}

// FailsWord is failsWord, for TestFailsWord.
var FailsWord = failsWord

// AnswerCounters returns how many answer counters reg holds, counted or
// not (core.Answers.Len).
func AnswerCounters(reg *runtime.Registry) int {
	a, _ := core.AnswersOf(reg)
	return a.Len()
}
