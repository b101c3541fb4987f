// Package ratelimit reads the "R/B" form of a rate limit, which the
// generator reads from the ratelimit annotation key and the runtime from
// BREAKER_<NAME>_RATELIMIT: one parser, so both accept the same values.
package ratelimit

import (
	"fmt"
	"strconv"
	"strings"
)

// MaxRate is the largest rate Parse takes, in tokens per second.
const MaxRate = 1e9

// Parse parses "R/B": R tokens per second (a number > 0, at most MaxRate)
// with a burst of B (a whole number >= 1).
func Parse(s string) (rate float64, burst int, err error) {
	rs, bs, ok := strings.Cut(strings.TrimSpace(s), "/")
	if !ok {
		return 0, 0, fmt.Errorf("want RATE/BURST, such as 1.5/3")
	}
	rate, err = strconv.ParseFloat(rs, 64)
	if err != nil || !(rate > 0) || rate > MaxRate {
		return 0, 0, fmt.Errorf("rate %q: want a number > 0, at most 1e9", rs)
	}
	burst, err = strconv.Atoi(bs)
	if err != nil || burst < 1 {
		return 0, 0, fmt.Errorf("burst %q: want a whole number >= 1", bs)
	}
	return rate, burst, nil
}
