// Package setting reads the values of the window and load-control
// settings (SPEC sections 8 and 9) that the generator reads from
// annotation keys and the runtime from BREAKER_<NAME>_* variables: one
// parser per form, so that both accept the same values.
package setting

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// MinWindowCalls and MinWindowPeriod are the smallest windows: a count
// window of fewer calls or a time window shorter than ten buckets of 100ms
// says too little to trip on.
const (
	MinWindowCalls  = 10
	MinWindowPeriod = time.Second
)

// MaxWindowCalls is the largest count window the runtime keeps (its
// maxWindowCalls): Registry.Update refuses a larger one and a Config
// clamps it. Window does not check it (the runtime clamps what the
// environment gives); the generator refuses a larger annotation.
const MaxWindowCalls = 1 << 20

// Window parses a window: a whole number N >= 10 (the last N calls) or a
// Go duration D >= 1s (the last D). Exactly one of calls and period is
// set.
func Window(s string) (calls int, period time.Duration, err error) {
	s = strings.TrimSpace(s)
	if n, err := strconv.Atoi(s); err == nil {
		if n < MinWindowCalls {
			return 0, 0, fmt.Errorf("a count window holds at least %d calls", MinWindowCalls)
		}
		return n, 0, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, 0, fmt.Errorf("want a number of calls >= %d or a Go duration >= %s, like 100 or 1m", MinWindowCalls, MinWindowPeriod)
	}
	if d < MinWindowPeriod {
		return 0, 0, fmt.Errorf("a time window lasts at least %s", MinWindowPeriod)
	}
	return 0, d, nil
}

// Percent parses a rate: a percentage from 1% to 100% ("50%", "2.5%"),
// or, when fraction is true, also a fraction from 0.01 to 1 ("0.5"). It
// returns the fraction.
func Percent(s string, fraction bool) (float64, error) {
	s = strings.TrimSpace(s)
	want := "want a percentage from 1% to 100%, like 50%"
	if fraction {
		want = "want a percentage from 1% to 100% or a fraction from 0.01 to 1, like 50% or 0.5"
	}
	num, pct := strings.CutSuffix(s, "%")
	f, err := strconv.ParseFloat(num, 64)
	if err != nil || math.IsNaN(f) || !pct && !fraction {
		return 0, fmt.Errorf("%s", want)
	}
	if pct {
		f /= 100
	}
	// 1% is 0.01 however it was written.
	if f < 0.01-1e-12 || f > 1 {
		return 0, fmt.Errorf("%s", want)
	}
	return max(f, 0.01), nil
}

// MaxThrottle is the largest K of adaptive throttling Throttle takes.
const MaxThrottle = 1e6

// Throttle parses K of adaptive throttling: a number >= 1 (at most
// MaxThrottle).
func Throttle(s string) (float64, error) {
	k, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || !(k >= 1) || k > MaxThrottle {
		return 0, fmt.Errorf("want a number >= 1, at most 1e6, like 2 or 1.5")
	}
	return k, nil
}

// MaxPeriod is the longest OPEN period, runtime.MaxCooldown: a fleet's
// peers ignore a note that asks for more.
const MaxPeriod = 24 * time.Hour

// Reset parses an OPEN period: a duration D, or D..MAX, an OPEN period
// that doubles after each failed probe from D up to MAX (SPEC §14), each
// at most MaxPeriod. Each part is read by parse (a Go duration, or, for
// the environment, also seconds); max is 0 without a range.
func Reset(s string, parse func(string) (time.Duration, error)) (d, max time.Duration, err error) {
	lo, hi, ranged := strings.Cut(strings.TrimSpace(s), "..")
	if d, err = parse(lo); err != nil {
		return 0, 0, err
	}
	if d > MaxPeriod {
		return 0, 0, fmt.Errorf("%s is more than %s, the longest OPEN period", d, MaxPeriod)
	}
	if !ranged {
		return d, 0, nil
	}
	if max, err = parse(hi); err != nil {
		return 0, 0, err
	}
	if max > MaxPeriod {
		return 0, 0, fmt.Errorf("the cap %s is more than %s, the longest OPEN period", max, MaxPeriod)
	}
	if max < d {
		return 0, 0, fmt.Errorf("the cap %s is below the first period %s", max, d)
	}
	return d, max, nil
}

// Jitter parses the jitter of OPEN periods: a percentage from 0% to 100%
// ("20%"), or, when fraction is true, also a fraction from 0 to 1. It
// returns the fraction.
func Jitter(s string, fraction bool) (float64, error) {
	s = strings.TrimSpace(s)
	want := "want a percentage from 0% to 100%, like 20%"
	if fraction {
		want = "want a percentage from 0% to 100% or a fraction from 0 to 1, like 20% or 0.2"
	}
	num, pct := strings.CutSuffix(s, "%")
	f, err := strconv.ParseFloat(num, 64)
	if err != nil || math.IsNaN(f) || !pct && !fraction {
		return 0, fmt.Errorf("%s", want)
	}
	if pct {
		f /= 100
	}
	if f < 0 || f > 1 {
		return 0, fmt.Errorf("%s", want)
	}
	return f, nil
}
