package runtime

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"time"
)

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

	// The JSON of a Stats (a breaker of the Health JSON) is documented field
	// by field in docs/health.md; a field that does not apply is left out.

	// FailureThreshold and ResetSeconds are the breaker's settings, to put
	// the counters in context ("2/5 consecutive failures"); a
	// FailureThreshold of 0 means none (a window's rates alone trip) and is
	// left out of the JSON.
	FailureThreshold int     `json:"failure_threshold,omitempty"`
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
	// Rejections counts calls the breaker refused (OPEN, HALF_OPEN with
	// every probe slot taken, ISOLATED: [ErrOpen]). It needs no
	// [WithCallCounts]: a refusal's count costs no CLOSED call anything.
	Rejections uint64 `json:"rejections"`
	// Canceled counts calls whose error the breaker classified as ignored
	// (see [Breaker.Release]): the caller's own cancel under the default
	// rule, or a [WithClassifier] verdict. They are also in Ignored, which
	// besides them holds the limiter's refusals (RateLimited), token waits
	// that the caller's context ended, invalid answers, and calls a spent
	// budget stopped after their admission.
	Canceled uint64 `json:"canceled,omitempty"`
	// StateChanges counts transitions since creation or the last Reset.
	StateChanges uint64 `json:"state_changes"`
	// Transitions counts the transitions by state pair,
	// Transitions[from][to] (Transitions[Closed][Open] is how often the
	// breaker tripped), since creation or the last Reset; their sum is
	// StateChanges; the operator's modes count as states (Transitions
	// [Closed][Isolated] is how often the breaker was isolated). Left out
	// of the JSON.
	Transitions [5][5]uint64 `json:"-"`
	// ConsecutiveFailures is the failure count towards the threshold in
	// CLOSED (in BYPASSED, the failures in a row, which trip nothing); ConsecutiveSuccesses the probe successes towards the success
	// threshold in HALF_OPEN.
	ConsecutiveFailures  int `json:"consecutive_failures"`
	ConsecutiveSuccesses int `json:"consecutive_successes,omitempty"`
	// ProbesInFlight is the number of HALF_OPEN probes pending. It and
	// ConsecutiveSuccesses are in the JSON in HALF_OPEN only (then also
	// at zero).
	ProbesInFlight int `json:"probes_in_flight,omitempty"`

	// LastFailure is when the last failure was recorded; zero if none. With
	// the real clock it is the wall time at the breaker's creation plus the
	// monotonic time elapsed since (one cheap clock read per failure): it
	// follows the monotonic clock, so it ignores later steps of the wall
	// clock and, on Linux, time the machine spent suspended. LastSuccess is
	// recorded alike.
	LastFailure time.Time `json:"last_failure,omitzero"`
	// OpenedAt is when the breaker last moved to OPEN; in the JSON only
	// while it is OPEN or HALF_OPEN.
	OpenedAt time.Time `json:"opened_at,omitzero"`
	// NextProbe is when an OPEN breaker admits its next probe; zero
	// otherwise.
	NextProbe time.Time `json:"next_probe,omitzero"`

	// Counted reports whether the registry counts every call
	// ([WithCallCounts]); without it the three fields below are zero. In
	// the JSON "counted" is there only when true (then so are calls and
	// successes, also at zero).
	Counted     bool      `json:"counted,omitempty"`
	Calls       uint64    `json:"calls,omitempty"`
	Successes   uint64    `json:"successes,omitempty"`
	LastSuccess time.Time `json:"last_success,omitzero"`

	// Window names the breaker's window ("100 calls" or "1m0s") when it has
	// one (Config.WindowCalls or WindowPeriod); the window figures after it
	// are in the JSON only then, and then always, zeros included. The
	// window holds calls admitted in CLOSED since the last transition:
	// WindowCalls ended calls, WindowFailures of them failures and
	// WindowSlow slow ones. Rates are fractions, 0..1: FailureRate is
	// WindowFailures/WindowCalls (0 for an empty window), SlowRate
	// WindowSlow/WindowCalls, each beside the threshold that trips the
	// breaker once the window holds Config.MinimumCalls calls
	// (SlowRateThreshold is 0 without Config.SlowCall). SlowSeconds is
	// Config.SlowCall.
	Window               string  `json:"window,omitempty"`
	WindowCalls          int     `json:"window_calls,omitempty"`
	WindowFailures       int     `json:"window_failures,omitempty"`
	WindowSlow           int     `json:"window_slow,omitempty"`
	FailureRate          float64 `json:"failure_rate,omitempty"`
	FailureRateThreshold float64 `json:"failure_rate_threshold,omitempty"`
	SlowRate             float64 `json:"slow_rate,omitempty"`
	SlowRateThreshold    float64 `json:"slow_rate_threshold,omitempty"`
	SlowSeconds          float64 `json:"slow_seconds,omitempty"`

	// InFlight is how many calls are in flight, when the breaker keeps
	// count (Config.Concurrency or Config.InFlight; then it is in the JSON
	// also at zero); Concurrency is the limit. InFlightSeconds is
	// Config.InFlight: with it and no Concurrency, InFlight counts the
	// calls admitted in CLOSED that have not ended, those already counted
	// as overdue included; with Concurrency, the calls holding a slot.
	// Throttle is the adaptive throttle's K (Config.Throttle) while the
	// breaker has one, and ThrottleProbability its current refusal
	// probability (in the JSON whenever Throttle is, zero included).
	// Throttled and BulkheadFull count the calls refused with ErrThrottled
	// and ErrBulkheadFull (a slot wait that the ctx ended included);
	// unlike RateLimited, they are not in Ignored. Such a refusal counts as
	// neither success nor failure.
	InFlight            int     `json:"in_flight,omitempty"`
	InFlightSeconds     float64 `json:"inflight_seconds,omitempty"`
	Concurrency         int     `json:"concurrency,omitempty"`
	Throttle            float64 `json:"throttle,omitempty"`
	ThrottleProbability float64 `json:"throttle_probability,omitempty"`
	Throttled           uint64  `json:"throttled,omitempty"`
	BulkheadFull        uint64  `json:"bulkhead_full,omitempty"`

	// Injected counts the calls failed by fault injection (matching
	// [ErrInjected]; the upstream was not called); they are also in
	// Failures, and Injected is at most Failures. A fault being counted
	// as the snapshot is taken may show in Injected before Failures, so
	// Failures − Injected, the failures that were not injected, may lag
	// behind them for a moment (see docs/rehearse.md).
	// Fault, LatencySeconds and LatencyRate are the injection
	// settings while they are on (Config.Fault, Latency, LatencyRate);
	// all four are left out of the JSON while zero.
	Injected       uint64  `json:"injected,omitempty"`
	Fault          float64 `json:"fault,omitempty"`
	LatencySeconds float64 `json:"latency_seconds,omitempty"`
	LatencyRate    float64 `json:"latency_rate,omitempty"`

	// Status is the health level of State.
	Status Level `json:"status"`
}

// Stats returns a snapshot of the breaker's counters, after making any move
// that time has made due.
func (b *Breaker) Stats() Stats {
	b.advance()
	b.mu.Lock()
	defer b.mu.Unlock()
	s := b.state.Load()
	// Failures, then at once Injected, which an injected fault counts
	// first: see injectStats.
	failures := b.failures.Load()
	injected := b.injected.Load()
	st := Stats{
		Name:             b.cfg().Name,
		FailureThreshold: b.cfg().FailureThreshold,
		ResetSeconds:     b.cfg().ResetTimeout.Seconds(),
		State:            State(s & stateMask),
		Failures:         failures,
		Ignored:          b.ignored.Load(),
		RateLimited:      b.limited.Load(),
		Canceled:         b.canceled.Load(),
		StateChanges:     b.stateChanges,
		Transitions:      b.transitions,
		OpenedAt:         b.openedAt,
		NextProbe:        b.nextProbe,
		Counted:          b.count,
		Calls:            b.calls.Load(),
		Successes:        b.successes.Load(),
		Rejections:       b.rejections.Load(),
	}
	st.Status = st.State.Level()
	if st.State == Closed || st.State == Bypassed {
		st.ConsecutiveFailures = int(uint32(b.fails.Load()))
	}
	if st.State == HalfOpen {
		st.ConsecutiveSuccesses = b.probeWins
		st.ProbesInFlight = len(b.inflight)
	}
	b.loadStats(&st)
	st.LastFailure = b.stamps.time(b.lastFailure.Load())
	st.LastSuccess = b.stamps.time(b.lastSuccess.Load())
	b.windowStats(&st)
	b.injectStats(&st, injected)
	return st
}

// MarshalJSON encodes s with the field names of its tags, leaving out the
// fields that do not apply (docs/health.md): those whose tag says omitempty
// or omitzero while they are zero, opened_at unless OPEN or HALF_OPEN. Some are
// there whenever they apply, zeros included: the window figures when s
// has a window (Window is set), in_flight when the breaker counts calls in
// flight (InFlightSeconds or Concurrency is set), the probe figures in
// HALF_OPEN, and the call totals when Counted.
func (s Stats) MarshalJSON() ([]byte, error) {
	type plain Stats // the fields and tags of Stats, without this method
	p := plain(s)
	if s.State != Open && s.State != HalfOpen {
		p.OpenedAt = time.Time{} // CLOSED, or an operator's mode: no OPEN period runs
	}
	half := s.State == HalfOpen
	if s.Window == "" && s.InFlightSeconds == 0 && s.Concurrency == 0 && s.Throttle == 0 && !half && !s.Counted {
		return json.Marshal(p)
	}
	// Fields of the outer struct hide the embedded ones of the same JSON
	// name and come after them, so the window figures are grouped and
	// "status" stays last; a non-nil pointer is encoded even when it
	// points to zero.
	out := struct {
		plain
		ConsecutiveSuccesses *int     `json:"consecutive_successes,omitempty"`
		ProbesInFlight       *int     `json:"probes_in_flight,omitempty"`
		Calls                *uint64  `json:"calls,omitempty"`
		Successes            *uint64  `json:"successes,omitempty"`
		Window               string   `json:"window,omitempty"`
		WindowCalls          *int     `json:"window_calls,omitempty"`
		WindowFailures       *int     `json:"window_failures,omitempty"`
		WindowSlow           *int     `json:"window_slow,omitempty"`
		FailureRate          *float64 `json:"failure_rate,omitempty"`
		FailureRateThreshold *float64 `json:"failure_rate_threshold,omitempty"`
		SlowRate             *float64 `json:"slow_rate,omitempty"`
		SlowRateThreshold    *float64 `json:"slow_rate_threshold,omitempty"`
		SlowSeconds          float64  `json:"slow_seconds,omitempty"`
		InFlight             *int     `json:"in_flight,omitempty"`
		InFlightSeconds      float64  `json:"inflight_seconds,omitempty"`
		ThrottleProbability  *float64 `json:"throttle_probability,omitempty"`
		Status               Level    `json:"status"`
	}{plain: p, Window: s.Window, SlowSeconds: s.SlowSeconds, InFlightSeconds: s.InFlightSeconds, Status: s.Status}
	if half {
		out.ConsecutiveSuccesses, out.ProbesInFlight = &s.ConsecutiveSuccesses, &s.ProbesInFlight
	}
	if s.Counted {
		out.Calls, out.Successes = &s.Calls, &s.Successes
	}
	if s.Window != "" {
		out.WindowCalls, out.WindowFailures, out.WindowSlow = &s.WindowCalls, &s.WindowFailures, &s.WindowSlow
		// Every field SPEC §8 lists, whenever there is a window: a rate
		// with no threshold (no SlowCall) shows as 0 with a threshold of 0.
		out.FailureRate, out.FailureRateThreshold = &s.FailureRate, &s.FailureRateThreshold
		out.SlowRate, out.SlowRateThreshold = &s.SlowRate, &s.SlowRateThreshold
	}
	if s.InFlightSeconds > 0 || s.Concurrency > 0 || s.InFlight != 0 {
		out.InFlight = &s.InFlight
	}
	if s.Throttle > 0 || s.ThrottleProbability > 0 {
		out.ThrottleProbability = &s.ThrottleProbability
	}
	return json.Marshal(out)
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
	// Fleet is whether the registry's shared state is live (see
	// [Registry.Share]); nil, and left out of the JSON, when no fleet is
	// attached.
	Fleet *FleetHealth `json:"fleet,omitempty"`
	// Recording is the state of the registry's recording (see
	// [WithRecorder]): calls recorded and dropped; nil, and left out of
	// the JSON, when it records nothing.
	Recording *RecordingHealth `json:"recording,omitempty"`
	// Families are the registry's families of per-key breakers, in name
	// order (see [Family]); left out of the JSON when there are none.
	Families []FamilyHealth `json:"families,omitempty"`
	// Unmatched lists the run-time settings that name no breaker, family
	// or limiter of the registry (yet): BREAKER_<NAME>_* variables, as
	// "BREAKER_<NAME>_*", and WithConfig, WithRateLimit and WithClassifier
	// names, quoted, and so are the names whose limiters a fleet shares
	// ([LimitSharer], such as redisstate.WithSharedLimits) that no
	// limiter has.
	// A typo in a name is otherwise silent: the setting applies to a
	// breaker that never exists. Sorted; left out of the JSON when empty.
	Unmatched []string `json:"unmatched_settings,omitempty"`
	// Breakers are in name order.
	Breakers []Stats `json:"breakers"`
}

// Health returns the health of every breaker, in name order.
func (r *Registry) Health() Health {
	h := Health{Status: LevelOK, Breakers: []Stats{}, DroppedEvents: r.DroppedEvents(), Fleet: r.Fleet(), Recording: r.recordingHealth(), Families: r.familiesHealth(), Unmatched: r.Unmatched()}
	for _, b := range r.Breakers() {
		st := b.Stats()
		if st.Status.rank() > h.Status.rank() {
			h.Status = st.Status
		}
		h.Breakers = append(h.Breakers, st)
	}
	return h
}

// Unmatched returns the run-time settings that name nothing the registry
// holds, as [Health].Unmatched lists them, without the counters of every
// breaker that Health reads: the dashboard's pages carry it. A name is
// looked up where it can be; the breakers (a family's keys among them) are
// walked only while a variable is left unmatched, and then until none is.
// Nil when every setting matches, and at once when there are none.
func (r *Registry) Unmatched() []string {
	var shared []string
	if s, ok := r.sharer().(LimitSharer); ok {
		shared = s.SharedLimits()
	}
	if len(r.env) == 0 && len(r.code) == 0 && len(r.classifiers) == 0 && len(shared) == 0 {
		return nil
	}
	var out []string
	pending := map[string]bool{} // variables' names not matched yet
	for n := range r.env {
		pending[n] = true
	}
	r.mu.RLock()
	family := func(name string) bool {
		for _, f := range r.families {
			if f.name == name {
				return true
			}
		}
		return false
	}
	for n := range r.code {
		fam, _, keyed := strings.Cut(n, "/")
		if r.breakers[n] == nil && r.limiters[n] == nil && !family(n) && !(keyed && family(fam)) { // a key's own settings match its family
			out = append(out, strconv.Quote(n))
		}
	}
	for n := range r.classifiers {
		if _, coded := r.code[n]; !coded && r.breakers[n] == nil && !family(n) && r.keyFamilyLocked(n) == "" {
			out = append(out, strconv.Quote(n))
		}
	}
	for _, n := range shared {
		if r.limiters[n] == nil {
			out = append(out, strconv.Quote(n))
		}
	}
	for _, f := range r.families {
		e := envName(f.name)
		delete(pending, e)
		for n := range pending {
			if strings.HasPrefix(n, e+"/") { // a key's own variables match its family, as its WithConfig does
				delete(pending, n)
			}
		}
	}
	for n := range r.limiters {
		delete(pending, envName(n))
	}
	for n := range r.breakers {
		if len(pending) == 0 {
			break
		}
		delete(pending, envName(n))
	}
	r.mu.RUnlock()
	for n := range pending {
		out = append(out, "BREAKER_"+n+"_*")
	}
	slices.Sort(out)
	return slices.Compact(out) // a name both set and shared is listed once
}
