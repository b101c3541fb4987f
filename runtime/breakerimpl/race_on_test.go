//go:build race

package breakerimpl_test

const raceEnabled = true
