package readme

import (
	"fmt"
	"time"
)

// StatusError is a non-2xx answer from the quote API.
type StatusError struct {
	Code int
	Wait time.Duration // from Retry-After, or the ban's length for a 403
}

func (e *StatusError) Error() string { return fmt.Sprintf("quote API: HTTP %d", e.Code) }

// RetryAfter asks the breaker to stay open this long (0: count a normal failure).
func (e *StatusError) RetryAfter() time.Duration { return e.Wait }

// Retryable says whether another try could help: not for a 4xx.
func (e *StatusError) Retryable() bool { return e.Code >= 500 }
