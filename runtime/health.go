package runtime

import "time"

// Level is a health level: "ok", "degraded" or "down".
type Level string

func (l Level) rank() int {
	switch l {
	case LevelOK:
		return 0
	case LevelDegraded:
		return 1
	}
	return 2
}

// Stats is a snapshot of one breaker's counters, taken at one instant.
type Stats struct {
	Name  string `json:"name"`
	State State  `json:"state"`

	// FailureThreshold and ResetSeconds are the breaker's settings, to put
	// the counters in context ("2/5 consecutive failures").
	FailureThreshold int     `json:"failure_threshold"`
	ResetSeconds     float64 `json:"reset_seconds"`

	// Failures counts calls that failed (panics and reclaimed probe slots
	// included), whatever period admitted them.
	Failures uint64 `json:"failures"`
	// Ignored counts calls that counted as neither success nor failure
	// (caller cancellation, limiter refusals and waits that ended). Calls
	// the throttle or the bulkhead refused are not in it: Throttled and
	// BulkheadFull count them.
	Ignored uint64 `json:"ignored"`
	// RateLimited counts calls the limiter refused after the breaker
	// admitted them; they are also in Ignored.
	RateLimited uint64 `json:"rate_limited"`
	// StateChanges counts transitions since creation or the last Reset.
	StateChanges uint64 `json:"state_changes"`
	// ConsecutiveFailures is the failure count towards the threshold in
	// CLOSED; ConsecutiveSuccesses the probe successes towards the success
	// threshold in HALF_OPEN.
	ConsecutiveFailures  int `json:"consecutive_failures"`
	ConsecutiveSuccesses int `json:"consecutive_successes"`
	// ProbesInFlight is the number of HALF_OPEN probes pending.
	ProbesInFlight int `json:"probes_in_flight"`

	// LastFailure is when the last failure was recorded; zero if none. With
	// the real clock it is the wall time at the breaker's creation plus the
	// monotonic time elapsed since (one cheap clock read per failure): it
	// follows the monotonic clock, so it ignores later steps of the wall
	// clock and, on Linux, time the machine spent suspended. LastSuccess is
	// recorded alike.
	LastFailure time.Time `json:"last_failure,omitzero"`
	// OpenedAt is when the breaker last moved to OPEN.
	OpenedAt time.Time `json:"opened_at,omitzero"`
	// NextProbe is when an OPEN breaker admits its next probe; zero
	// otherwise.
	NextProbe time.Time `json:"next_probe,omitzero"`

	// Counted reports whether the registry counts every call
	// ([WithCallCounts]); without it the four fields below are zero.
	Counted     bool      `json:"counted"`
	Calls       uint64    `json:"calls,omitempty"`
	Successes   uint64    `json:"successes,omitempty"`
	Rejections  uint64    `json:"rejections,omitempty"`
	LastSuccess time.Time `json:"last_success,omitzero"`

	// Window names the breaker's window ("100 calls" or "1m0s") when it has
	// one (Config.WindowCalls or WindowPeriod); the window figures after it
	// are in the JSON only then. Rates are fractions, 0..1.
	Window               string  `json:"window,omitempty"`
	WindowCalls          int     `json:"window_calls,omitempty"`
	WindowFailures       int     `json:"window_failures,omitempty"`
	WindowSlow           int     `json:"window_slow,omitempty"`
	FailureRate          float64 `json:"failure_rate,omitempty"`
	FailureRateThreshold float64 `json:"failure_rate_threshold,omitempty"`
	SlowRate             float64 `json:"slow_rate,omitempty"`
	SlowRateThreshold    float64 `json:"slow_rate_threshold,omitempty"`

	// InFlight is how many calls are in flight, when the breaker keeps
	// count (Config.Concurrency or Config.InFlight); Concurrency is the
	// limit. ThrottleProbability is the adaptive throttle's current
	// refusal probability (Config.Throttle). Throttled and BulkheadFull
	// count the calls refused with ErrThrottled and ErrBulkheadFull (a
	// slot wait that the ctx ended included); unlike RateLimited, they are
	// not in Ignored. Such a refusal counts as neither success nor failure.
	InFlight            int     `json:"in_flight,omitempty"`
	Concurrency         int     `json:"concurrency,omitempty"`
	ThrottleProbability float64 `json:"throttle_probability,omitempty"`
	Throttled           uint64  `json:"throttled,omitempty"`
	BulkheadFull        uint64  `json:"bulkhead_full,omitempty"`

	// Status is the health level of State.
	Status Level `json:"status"`
}

// ChainAnswer counts how the calls of generated chains were answered: by
// Source (the breaker name that answered, or "stale") and Kind ("live",
// "fallback", "stale", "hedged" or "none"), since the registry was created.
type ChainAnswer struct {
	Source string `json:"source"`
	Kind   string `json:"kind"`
	Count  uint64 `json:"count"`
}

// ChainAnswers returns the answer counts of every generated chain built on
// the registry, in source and kind order.
func (r *Registry) ChainAnswers() []ChainAnswer {
	return nil // counted once chains record their answers (issue 15/16)
}

// Stats returns a snapshot of the breaker's counters, after making any move
// that time has made due.
func (b *Breaker) Stats() Stats {
	b.advance()
	b.mu.Lock()
	defer b.mu.Unlock()
	s := b.state.Load()
	st := Stats{
		Name:             b.cfg.Name,
		FailureThreshold: b.cfg.FailureThreshold,
		ResetSeconds:     b.cfg.ResetTimeout.Seconds(),
		State:            State(s & stateMask),
		Failures:         b.failures.Load(),
		Ignored:          b.ignored.Load(),
		RateLimited:      b.limited.Load(),
		StateChanges:     b.stateChanges,
		OpenedAt:         b.openedAt,
		NextProbe:        b.nextProbe,
		Counted:          b.count,
		Calls:            b.calls.Load(),
		Successes:        b.successes.Load(),
		Rejections:       b.rejections.Load(),
	}
	st.Status = st.State.Level()
	if st.State == Closed {
		st.ConsecutiveFailures = int(uint32(b.fails.Load()))
	}
	if st.State == HalfOpen {
		st.ConsecutiveSuccesses = b.probeWins
		st.ProbesInFlight = len(b.inflight)
	}
	b.loadStats(&st)
	st.LastFailure = b.stamps.time(b.lastFailure.Load())
	st.LastSuccess = b.stamps.time(b.lastSuccess.Load())
	return st
}

// Health is the health of every breaker of a registry. It marshals to JSON
// as {"status": "ok", "breakers": [{"name": ..., "state": "CLOSED",
// "status": "ok", ...}]}.
type Health struct {
	// Status is the worst level of any breaker; "ok" with no breakers.
	Status Level `json:"status"`
	// DroppedEvents counts the transitions whose log line and hook calls
	// were skipped because the event queue was full (see
	// [EventQueueCapacity] and [Registry.DroppedEvents]); their Events
	// are in the log all the same. Left out of the JSON while zero.
	DroppedEvents uint64 `json:"dropped_events,omitempty"`
	// Breakers are in name order.
	Breakers []Stats `json:"breakers"`
}

// Health returns the health of every breaker, in name order.
func (r *Registry) Health() Health {
	h := Health{Status: LevelOK, Breakers: []Stats{}, DroppedEvents: r.DroppedEvents()}
	for _, b := range r.Breakers() {
		st := b.Stats()
		if st.Status.rank() > h.Status.rank() {
			h.Status = st.Status
		}
		h.Breakers = append(h.Breakers, st)
	}
	return h
}
