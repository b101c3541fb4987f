//go:build race

package contend_test

const raceEnabled = true
