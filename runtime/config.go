package runtime

import (
	"fmt"
	"time"
)

// Defaults for the zero fields of a [Config] and for [NewRegistry], and the
// longest cooldown an error can ask for.
const (
	DefaultFailureThreshold = 5
	DefaultResetTimeout     = 30 * time.Second
	DefaultHalfOpenMax      = 1
	DefaultSuccessThreshold = 1

	// DefaultEventCapacity is how many events a [Registry] keeps unless
	// [WithEventCapacity] says otherwise.
	DefaultEventCapacity = 100

	// EventQueueCapacity is how many transitions a [Registry] lets wait
	// for their log line and hooks (64 KB, allocated at the first
	// transition). When a log handler or a hook is slower than the
	// transitions, the queue fills, and each new transition drops the
	// oldest queued one: its log line and hook calls are skipped and
	// counted in [Health].DroppedEvents, but its [Event] is in
	// [Registry.Events] and the state change itself is never lost.
	EventQueueCapacity = 1024

	// MaxCooldown caps every OPEN period: the one an error's RetryAfter
	// asks for, ResetTimeout and ResetMax.
	MaxCooldown = 24 * time.Hour
)

// Config is the configuration of one named breaker. Zero (or negative)
// fields take the defaults.
type Config struct {
	// Name identifies the breaker in its registry, in logs and in events.
	// Default "default".
	Name string
	// FailureThreshold is how many consecutive failures trip the breaker
	// from CLOSED to OPEN. Default 5 without a window; with one (WindowCalls
	// or WindowPeriod), 0 means no threshold: only the window's rates trip.
	FailureThreshold int
	// ResetTimeout is how long OPEN lasts before a probe is allowed.
	// Default 30s; at most [MaxCooldown] (24h), the longest OPEN period
	// (a fleet shares no longer one): a longer one is cut to it when the
	// breaker is made, with a warning in the registry's log, and refused
	// by [Registry.Update].
	ResetTimeout time.Duration
	// ResetMax backs off a source that stays down (the `reset=30s..10m`
	// key): each failed probe doubles the next OPEN period, from
	// ResetTimeout up to ResetMax, and a close returns to ResetTimeout. A
	// cooldown an error asks for (RetryAfter) still wins when it is
	// longer. Default 0: every OPEN period is ResetTimeout; so is a value
	// not above ResetTimeout. At most [MaxCooldown], as ResetTimeout.
	ResetMax time.Duration
	// ResetJitter (0..1, the `jitter=P%` key) draws each OPEN period made
	// of ResetTimeout (doubled or not) uniformly in [d·(1−ResetJitter), d]
	// from the registry's source ([WithRand]), so that the probes of many
	// processes spread out. Default 0: none (so is NaN); above 1 means 1,
	// with a warning in the registry's log (most often a percentage: 0.1
	// for 10%), as for every fraction of a Config.
	ResetJitter float64
	// HalfOpenMax is how many probe calls HALF_OPEN admits at once.
	// Default 1.
	HalfOpenMax int
	// SuccessThreshold is how many consecutive probe successes close the
	// breaker. Default 1.
	SuccessThreshold int

	// WindowCalls (the last N calls admitted in CLOSED, N >= 10) or
	// WindowPeriod (the calls that ended in the last D, D >= 1s, kept as
	// buckets of D/10 that roll lazily) turns on rate-based tripping; they
	// are one setting, and a layer that sets either replaces the lower
	// layer's window. With a window, FailureThreshold applies only when it
	// is given explicitly; either condition trips. The window is emptied at
	// every transition. Default none. A smaller window is raised to the
	// smallest (10 calls, 1s), a count window is capped at 1<<20 calls, and
	// when both are set WindowCalls wins. A count window reads no clock; a
	// time window reads it at most once as each call ends, and on the real
	// clock not at all for most successes (docs/window.md).
	WindowCalls  int
	WindowPeriod time.Duration
	// FailureRate (0..1) trips the breaker when the window holds at least
	// MinimumCalls ended calls and failures/calls reaches it. Default 0.5,
	// also for a value that is not above 0; above 1 means 1 (only every
	// call failing trips), with a warning. Ignored without a window.
	FailureRate float64
	// MinimumCalls is how many calls the window must hold before a rate
	// applies. Default 20; it is at most WindowCalls. Ignored without a
	// window.
	MinimumCalls int
	// SlowCall makes a call that ends more than this long after its
	// admission a slow one, whatever its outcome; SlowRate (0..1, default
	// 0.5, with FailureRate's rules) trips the breaker when slow/calls in
	// the window reaches it. Default none; ignored without a window. It
	// reads the clock as each call is admitted and as it ends.
	SlowCall time.Duration
	SlowRate float64
	// InFlight counts a call admitted in CLOSED that is still running more
	// than this long after its admission as one failure, for
	// FailureThreshold and the window: at the next admission or look at the
	// state ([Breaker.State], Stats, Health), with no timer, or when it
	// ends, whichever comes first. An admission that finds such a call
	// counts it first, and is refused when that trips the breaker. Its
	// later outcome is ignored. Default none; it works with or without a
	// window and reads the clock as each call is admitted and as it ends.
	// With Concurrency, InFlight and SlowCall run from when the call holds
	// its slot: a call waiting for a slot is not in flight.
	InFlight time.Duration

	// Concurrency is the most calls of this name in flight at once (a
	// bulkhead). A call over the limit waits for a slot, first come first
	// served, up to the route's maxwait or its ctx's deadline, then fails
	// with [ErrBulkheadFull]. Default 0: no limit.
	Concurrency int
	// Throttle is K of adaptive client-side throttling (the Google SRE
	// book's): over the last two minutes, with R requests and A accepted
	// (successes, excluded errors included), a new call is refused with
	// [ErrThrottled] with probability max(0, (R − K·A) / (R + 1)), drawn
	// from the registry's source ([WithRand]); refused calls count in R.
	// Values between 0 and 1 are taken as 1. Default 0: none (so are NaN
	// and infinities).
	Throttle float64

	// Fault, Latency and LatencyRate inject faults and delay to rehearse an
	// outage (see inject.go and docs/rehearse.md); settings only, never
	// annotations. Fault (0..1) is the fraction of admitted calls that fail
	// with an error matching [ErrInjected] without calling the upstream;
	// Latency is a delay added, honouring the ctx, before the upstream is
	// called on a fraction LatencyRate (0..1; 1 when Latency is set alone)
	// of admitted calls; a layer that gives LatencyRate alone changes the
	// rate of a lower layer's Latency. Default 0: none, at no cost. A
	// fraction above 1 means 1, with a warning (Fault: 30 fails every call).
	Fault       float64
	Latency     time.Duration
	LatencyRate float64

	// Off turns settings off, which a zero field cannot say (it keeps
	// the lower layer's value): Off: runtime.SettingWindow given to
	// [Registry.Update] removes the breaker's window, and [WithConfig]
	// removes an annotated one. A field given in the same Config wins
	// over its bit (Update refuses the pair). Default 0: nothing off.
	Off Setting
}

// Setting names settings of a [Config] that Config.Off turns off; the
// constants combine with |.
type Setting uint16

const (
	// SettingThreshold: no FailureThreshold (only with a window, whose
	// rates then trip alone).
	SettingThreshold Setting = 1 << iota
	// SettingBackoff: no ResetMax, every OPEN period is ResetTimeout.
	SettingBackoff
	// SettingJitter: no ResetJitter.
	SettingJitter
	// SettingWindow: no WindowCalls or WindowPeriod (and so no
	// FailureRate, MinimumCalls, SlowCall or SlowRate).
	SettingWindow
	// SettingSlowCall: no SlowCall (and so no SlowRate).
	SettingSlowCall
	// SettingInFlight: no InFlight.
	SettingInFlight
	// SettingConcurrency: no Concurrency limit.
	SettingConcurrency
	// SettingThrottle: no Throttle.
	SettingThrottle
)

// settingNames are the Setting bits in the words of the annotation keys,
// in bit order.
var settingNames = [...]string{"threshold", "reset..max", "jitter", "window", "slow", "inflight", "concurrency", "throttle"}

// String returns the annotation keys of the bits of s, joined by "|":
// "window|concurrency"; "none" for 0.
func (s Setting) String() string {
	if s == 0 {
		return "none"
	}
	out := ""
	for i, name := range settingNames {
		if s&(1<<i) == 0 {
			continue
		}
		if out != "" {
			out += "|"
		}
		out += name
	}
	if rest := s >> len(settingNames); rest != 0 {
		if out != "" {
			out += "|"
		}
		out += fmt.Sprintf("Setting(%d)", uint16(rest<<len(settingNames)))
	}
	return out
}

func (c Config) withDefaults() Config {
	if c.Name == "" {
		c.Name = "default"
	}
	c = c.windowDefaults()
	switch {
	case c.FailureThreshold > 0:
	case c.windowed():
		c.FailureThreshold = 0 // not given: the window's rates alone trip
	default:
		c.FailureThreshold = DefaultFailureThreshold
	}
	if c.ResetTimeout <= 0 {
		c.ResetTimeout = DefaultResetTimeout
	}
	// No OPEN period is longer than MaxCooldown: a fleet's peers ignore a
	// note that asks for more (SPEC §11), so a longer one would trip this
	// process alone.
	c.ResetTimeout, c.ResetMax = min(c.ResetTimeout, MaxCooldown), min(c.ResetMax, MaxCooldown)
	if c.ResetMax <= c.ResetTimeout {
		c.ResetMax = 0
	}
	switch {
	case !(c.ResetJitter > 0): // NaN too
		c.ResetJitter = 0
	case c.ResetJitter > 1:
		c.ResetJitter = 1
	}
	if c.HalfOpenMax <= 0 {
		c.HalfOpenMax = DefaultHalfOpenMax
	}
	if c.SuccessThreshold <= 0 {
		c.SuccessThreshold = DefaultSuccessThreshold
	}
	c.Concurrency = max(c.Concurrency, 0) // none, as 0
	if !(c.Throttle > 0 && c.Throttle <= maxThrottleK) {
		c.Throttle = 0 // none; a NaN would make the Config unequal to itself
	}
	c.Off = 0 // applied by the layers (see override.apply)
	return c.injectDefaults()
}
