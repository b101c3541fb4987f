package runtime

import (
	"fmt"
	"strconv"
	"time"
)

// Backing off a source that stays down (SPEC §14): with Config.ResetMax,
// each failed probe doubles the next OPEN period, from ResetTimeout up to
// ResetMax, and a close returns to ResetTimeout; Config.ResetJitter
// spreads every period made of ResetTimeout. A cooldown an error asks for
// (RetryAfter) is not jittered and wins when it is longer. b.mu guards
// b.failedProbes, the failed probes in a row.

// backoffLocked follows a transition from → to: a failed probe adds one to
// the failed probes in a row, a close (or a mode) clears them.
func (b *Breaker) backoffLocked(from, to State) {
	switch {
	case from == HalfOpen && to == Open:
		b.failedProbes++
	case to != Open && to != HalfOpen:
		b.failedProbes = 0
	}
}

// tripPeriodLocked is the OPEN period of a trip from CLOSED: ResetTimeout,
// jittered.
func (b *Breaker) tripPeriodLocked() time.Duration {
	return b.jitterLocked(b.cfg().ResetTimeout)
}

// reopenLocked returns the reason and the OPEN period of a failed probe,
// whose reason is reason and whose error (nil for a reclaimed slot) is err.
// Without ResetMax the period is ResetTimeout (jittered), or the cooldown
// err asks for, as SPEC §5 says; with it, the period doubles with each
// failed probe in a row and the reason says so, and a cooldown wins only
// when it is longer.
func (b *Breaker) reopenLocked(reason string, err error) (string, time.Duration) {
	cdReason, cd, isCooldown := cooldownLocked(err)
	if b.cfg().ResetMax <= 0 {
		if isCooldown {
			return cdReason, cd
		}
		return reason, b.jitterLocked(b.cfg().ResetTimeout)
	}
	n := b.failedProbes + 1 // this one included
	d, most := b.cfg().ResetTimeout, b.cfg().ResetMax
	for i := 0; i < n && d < most; i++ {
		if d > most/2 { // doubling would pass the cap, or overflow
			d = most
			break
		}
		d *= 2
	}
	d = b.jitterLocked(min(d, most))
	if isCooldown && cd > d {
		return cdReason, cd
	}
	why := fmt.Sprintf("probe failed, re-opened for %s (%s in a row)", d, ordinal(n))
	if reason != "" {
		why += ": " + reason
	}
	return why, d
}

// jitterLocked draws an OPEN period uniformly in (d·(1−ResetJitter), d]
// from the registry's source. A period is at least a millisecond, or the
// draw's lower bound when that is shorter, or d with a jitter of 100%:
// never longer than d.
func (b *Breaker) jitterLocked(d time.Duration) time.Duration {
	j := b.cfg().ResetJitter
	if j <= 0 {
		return d
	}
	x := float64(d) * (1 - j*b.reg.draw())
	if x >= float64(d) { // a draw of 0; near the largest Duration, float64(d) rounds up past it
		return d
	}
	floor := min(time.Millisecond, d)
	if lo := time.Duration(float64(d) * (1 - j)); lo > 0 {
		floor = min(floor, lo)
	}
	return max(time.Duration(x), floor)
}

// ordinal writes n as "1st", "2nd", "3rd", "4th", ... "11th", "21st".
func ordinal(n int) string {
	suffix := "th"
	switch n % 100 {
	case 11, 12, 13:
	default:
		switch n % 10 {
		case 1:
			suffix = "st"
		case 2:
			suffix = "nd"
		case 3:
			suffix = "rd"
		}
	}
	return strconv.Itoa(n) + suffix
}
