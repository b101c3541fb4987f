package readme

import (
	"fmt"
	"time"
)

// StatusError is a non-2xx answer from the quote API.
type StatusError struct{ Code int }

func (e *StatusError) Error() string { return fmt.Sprintf("quote API: HTTP %d", e.Code) }

// Retryable says whether another try could help: yes for a 5xx.
func (e *StatusError) Retryable() bool { return e.Code >= 500 }

// BanError is a 403 or a 429: the API asked to be left alone for Wait.
type BanError struct {
	StatusError
	Wait time.Duration // from Retry-After, or the ban's length for a 403
}

// RetryAfter opens the breaker for Wait at once; the call is not retried.
func (e *BanError) RetryAfter() time.Duration { return e.Wait }
