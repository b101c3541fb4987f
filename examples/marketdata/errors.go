package marketdata

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// The upstream providers, named as their breakers are.
const (
	Eastmoney = "eastmoney"
	Tencent   = "tencent"
	TDX       = "tdx"
	Push2ex   = "push2ex"
	// Sina is the backup provider of fund flows, a fallback of the chain.
	Sina = "sina"
)

// DefaultBanCooldown is how long a 403 keeps us away from an upstream when
// it does not say: the origin service's 30-second host cooldown after an
// eastmoney IP ban.
const DefaultBanCooldown = 30 * time.Second

// ErrNotFound matches (with errors.Is) an upstream's 404: the stock or board
// does not exist. It is a healthy answer, so the breakers exclude it.
var ErrNotFound = errors.New("marketdata: not found")

// StatusError is an upstream's answer other than 2xx. It tells a retry
// policy whether trying again makes sense ([StatusError.Retryable]). An
// answer that asked to be left alone (a 429 with Retry-After, a 403 ban)
// comes wrapped in a [CooldownError].
type StatusError struct {
	// Provider is the upstream that answered, e.g. "eastmoney".
	Provider string
	// Code is the HTTP status code.
	Code int
	// Wait is how long the upstream asked us to stay away: its Retry-After
	// header, or for a 403 without one the client's ban cooldown. 0 when
	// it asked nothing.
	Wait time.Duration
}

// Error returns e.g. "eastmoney: HTTP 429 Too Many Requests, retry after 2s".
func (e *StatusError) Error() string {
	s := fmt.Sprintf("%s: HTTP %d %s", e.Provider, e.Code, http.StatusText(e.Code))
	switch {
	case e.Code == http.StatusForbidden && e.Wait > 0:
		s += fmt.Sprintf(", banned, cool down %s", e.Wait)
	case e.Code == http.StatusForbidden:
		s += ", banned"
	case e.Wait > 0:
		s += fmt.Sprintf(", retry after %s", e.Wait)
	}
	return s
}

// Is reports whether target is [ErrNotFound] and the status 404.
func (e *StatusError) Is(target error) bool {
	return target == ErrNotFound && e.Code == http.StatusNotFound
}

// Retryable reports whether the same request may succeed if sent again soon:
// true for 408, 429 and 5xx. A 403 is a ban signal and is never retried
// (retrying is what gets an IP banned for longer); other 4xx are the
// request's fault.
func (e *StatusError) Retryable() bool {
	return e.Code == http.StatusRequestTimeout || e.Code == http.StatusTooManyRequests || e.Code >= 500
}

// CooldownError is a [StatusError] whose upstream asked to be left alone for
// Wait. Its RetryAfter method is what the breakergen runtime looks for: the
// breaker opens at once for that long, and the call is not retried. Only
// these answers have the method: the runtime treats any error that has it
// as not retryable, so a plain 5xx keeps its retries.
type CooldownError struct {
	*StatusError
}

// RetryAfter returns how long the upstream asked to be left alone.
func (e *CooldownError) RetryAfter() time.Duration { return e.Wait }

// Unwrap returns the StatusError, for errors.As.
func (e *CooldownError) Unwrap() error { return e.StatusError }

// parseRetryAfter reads a Retry-After header: delay-seconds or an HTTP date.
// It returns 0 for an absent, malformed or past value.
func parseRetryAfter(v string, now time.Time) time.Duration {
	if v == "" {
		return 0
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		if n <= 0 {
			return 0
		}
		return time.Duration(min(n, int64(24*time.Hour/time.Second))) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now).Round(time.Second)
	}
	return 0
}
