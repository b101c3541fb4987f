//go:build !race

package breakerimpl_test

const raceEnabled = false
