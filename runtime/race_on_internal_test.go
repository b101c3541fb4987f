//go:build race

package runtime

// underRace reports whether the race detector is on (see stressIters).
const underRace = true
