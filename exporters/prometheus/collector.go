package prometheus

import (
	"strings"

	"github.com/breakergen/breakergen/internal/failseries"
	"github.com/breakergen/breakergen/internal/labelvalue"
	"github.com/breakergen/breakergen/runtime"
	prom "github.com/prometheus/client_golang/prometheus"
)

// The metric families, as SPEC §10 names them.
var (
	stateDesc = prom.NewDesc("breakergen_breaker_state",
		"The breaker's state: 1 for the current state, 0 for the others of closed, half_open and open; an operator's isolated or bypassed is a series only while the breaker is in it.",
		[]string{"breaker", "state"}, nil)
	callsDesc = prom.NewDesc("breakergen_breaker_calls_total",
		"Calls by outcome since the breaker was created or reset: success only with call counting (runtime.WithCallCounts); ignored is the caller's cancel.",
		[]string{"breaker", "outcome"}, nil)
	transitionsDesc = prom.NewDesc("breakergen_breaker_transitions_total",
		"State transitions by from/to state since the breaker was created or reset.",
		[]string{"breaker", "from", "to"}, nil)
	consecutiveDesc = prom.NewDesc("breakergen_breaker_consecutive_failures",
		"Consecutive failures towards the breaker's threshold (0 unless CLOSED).",
		[]string{"breaker"}, nil)
	failureRateDesc = prom.NewDesc("breakergen_breaker_failure_rate",
		"Failures over calls in the breaker's window, 0..1 (breakers with a window only).",
		[]string{"breaker"}, nil)
	inFlightDesc = prom.NewDesc("breakergen_breaker_in_flight",
		"Calls in flight (breakers with a concurrency limit or an inflight bound only).",
		[]string{"breaker"}, nil)
	chainAnswersDesc = prom.NewDesc("breakergen_chain_answers_total",
		"Answers of generated chains by source (breaker name, a family's name for its keys, or stale) and kind (live, fallback, stale, hedged, none).",
		[]string{"source", "kind"}, nil)

	// A family of per-key breakers (runtime.Family) as one: its keys'
	// totals, those of dropped keys included, and gauges of its keys.
	familyCallsDesc = prom.NewDesc("breakergen_family_calls_total",
		"Calls by outcome summed over the family's keys, dropped keys included: success only with call counting (runtime.WithCallCounts).",
		[]string{"family", "outcome"}, nil)
	familyTransitionsDesc = prom.NewDesc("breakergen_family_transitions_total",
		"State transitions by from/to state summed over the family's keys, dropped keys included.",
		[]string{"family", "from", "to"}, nil)
	familyKeysDesc = prom.NewDesc("breakergen_family_keys",
		"Live per-key breakers of the family.",
		[]string{"family"}, nil)
	familyOpenKeysDesc = prom.NewDesc("breakergen_family_open_keys",
		"Live per-key breakers of the family in the OPEN state.",
		[]string{"family"}, nil)
	familyKeyLimitDesc = prom.NewDesc("breakergen_family_key_limit",
		"How many per-key breakers the family keeps live at once (keys=N).",
		[]string{"family"}, nil)
	familyDroppedDesc = prom.NewDesc("breakergen_family_dropped_keys_total",
		"Per-key breakers dropped to keep the family within its bound.",
		[]string{"family"}, nil)
	familyKeptClosedDesc = prom.NewDesc("breakergen_family_kept_closed_total",
		"Trips of the family's keys that maxopen kept CLOSED.",
		[]string{"family"}, nil)
)

// The outcome label's values.
const (
	outcomeSuccess      = "success"
	outcomeFailure      = "failure"
	outcomeIgnored      = "ignored"
	outcomeRejected     = "rejected"
	outcomeRateLimited  = "rate_limited"
	outcomeThrottled    = "throttled"
	outcomeBulkheadFull = "bulkhead_full"
	outcomeInjected     = "injected" // a fault injected by the settings (runtime.ErrInjected); not in failure
)

// states are the breaker states in the order of their values, the
// operator's modes (SPEC §14) last.
var states = [...]runtime.State{runtime.Closed, runtime.HalfOpen, runtime.Open, runtime.Isolated, runtime.Bypassed}

// shownState reports whether the state gauge has a series for s while the
// breaker is in cur: the three states of SPEC §10 always (1 for the
// current one, 0 for the two others), an operator's mode only while the
// breaker is in it, so that a breaker no operator touched has three
// series, not five.
func shownState(s, cur runtime.State) bool {
	return s == cur || s == runtime.Closed || s == runtime.HalfOpen || s == runtime.Open
}

// own are the transitions a breaker makes by itself; their series are
// reported from the start, at 0, so that rate() sees their first increase.
// Other pairs (a fleet's peer closing an OPEN breaker, an operator's
// mode) appear once counted.
var own = [...][2]runtime.State{
	{runtime.Closed, runtime.Open},
	{runtime.Open, runtime.HalfOpen},
	{runtime.HalfOpen, runtime.Closed},
	{runtime.HalfOpen, runtime.Open},
}

// stateLabel returns the label value of s: "closed", "half_open" or
// "open", as resilience4j exports them, or "isolated" or "bypassed".
func stateLabel(s runtime.State) string { return strings.ToLower(s.String()) }

// Collector is a [prom.Collector] of the breakers of one
// [runtime.Registry] and of its generated chains' answers. It reads the
// registry when scraped, so it costs the calls nothing and sees breakers
// created after its registration. A Collector is safe for concurrent use.
type Collector struct {
	reg      *runtime.Registry
	answers  func() []runtime.ChainAnswer // reg.ChainAnswers; a seam for tests
	perKey   bool                         // WithPerKey
	failures failseries.Series            // keeps outcome="failure" from going back
}

// Option configures a [Collector].
type Option func(*Collector)

// WithPerKey makes the Collector report each live key of a family
// (runtime.Family) as a breaker of its own, breaker="<family>/<key>", in
// the breakergen_breaker_* families, besides the family's totals. Without
// it a family's keys are in its breakergen_family_* series only, so that
// the number of series grows with the families, not with their keys; with
// it, by up to keys=N breakers per family.
func WithPerKey() Option { return func(c *Collector) { c.perKey = true } }

var _ prom.Collector = (*Collector)(nil)

// NewCollector returns a Collector of reg; a nil reg is
// [runtime.Default]. Register it with a [prom.Registerer]:
//
//	r := prom.NewRegistry()
//	r.MustRegister(prometheus.NewCollector(reg))
//	http.Handle("/metrics", promhttp.HandlerFor(r, promhttp.HandlerOpts{}))
//
// A family of per-key breakers is reported as one, in the
// breakergen_family_* series labelled family="<name>"; see [WithPerKey]
// for a series per key.
func NewCollector(reg *runtime.Registry, opts ...Option) *Collector {
	if reg == nil {
		reg = runtime.Default()
	}
	c := &Collector{reg: reg, answers: reg.ChainAnswers}
	for _, o := range opts {
		if o != nil {
			o(c)
		}
	}
	return c
}

// Describe sends the descriptors of every family the Collector may report.
func (c *Collector) Describe(ch chan<- *prom.Desc) {
	for _, d := range []*prom.Desc{stateDesc, callsDesc, transitionsDesc, consecutiveDesc,
		failureRateDesc, inFlightDesc, chainAnswersDesc, familyCallsDesc, familyTransitionsDesc, familyKeysDesc,
		familyOpenKeysDesc, familyKeyLimitDesc, familyDroppedDesc, familyKeptClosedDesc} {
		ch <- d
	}
}

// Collect reads every breaker's [runtime.Stats] and the chains' answers
// and sends them as metrics. A series the runtime does not count is left
// out rather than reported as 0: success without
// [runtime.WithCallCounts], failure_rate without a window, in_flight
// without a concurrency limit or an inflight bound, throttled without a
// throttle and bulkhead_full without a concurrency limit.
//
// outcome="failure" is Stats.Failures − Stats.Injected, never less than
// an earlier scrape of the Collector reported unless the breaker was
// reset (see package internal/failseries), so Collect calls read the
// registry one at a time.
//
// No name fails a scrape: label values are made valid UTF-8, which
// client_golang requires of them, with U+FFFD for each run of invalid
// bytes, and a name that becomes another's that way is left out (see
// package internal/labelvalue). A family's keys come from requests (a
// header's value, say), so under [WithPerKey] a client chooses some of
// the names.
func (c *Collector) Collect(ch chan<- prom.Metric) {
	bs := c.reg.PlainBreakers() // a family's keys are in its totals
	if c.perKey {
		bs = c.reg.Breakers()
	}
	fams := c.reg.Families()
	n := c.failures.Read(bs, fams)

	names := make([][]string, len(bs))
	for i := range bs {
		names[i] = []string{n.Stats[i].Name}
	}
	for i, ok := range labelvalue.Clean(names) {
		if ok {
			collectBreaker(ch, names[i][0], n.Stats[i], bs[i].Config(), n.Failures[i])
		}
	}

	names = make([][]string, len(fams))
	for i := range fams {
		names[i] = []string{n.Totals[i].Name}
	}
	for i, ok := range labelvalue.Clean(names) {
		if ok {
			collectFamily(ch, names[i][0], fams[i], n.Totals[i], n.FamilyFailures[i])
		}
	}

	as := c.answers()
	names = make([][]string, len(as))
	for i, a := range as {
		names[i] = []string{a.Source, a.Kind}
	}
	for i, ok := range labelvalue.Clean(names) {
		if ok {
			send(ch, chainAnswersDesc, prom.CounterValue, float64(as[i].Count), names[i]...)
		}
	}
}

// send sends a metric of d, or nothing when d refuses it: one series is
// never worth a failed scrape. After labelvalue.Clean the only refusal left
// is a label count that does not match d's, which the tests catch.
func send(ch chan<- prom.Metric, d *prom.Desc, t prom.ValueType, v float64, labels ...string) {
	if m, err := prom.NewConstMetric(d, t, v, labels...); err == nil {
		ch <- m
	}
}

// collectBreaker reports one breaker's series, labelled breaker=name
// (its name cleaned by labelvalue.Clean); failures is its
// outcome="failure" (see package internal/failseries).
func collectBreaker(ch chan<- prom.Metric, name string, st runtime.Stats, cfg runtime.Config, failures uint64) {
	for _, s := range states {
		if !shownState(s, st.State) {
			continue
		}
		v := 0.0
		if s == st.State {
			v = 1
		}
		send(ch, stateDesc, prom.GaugeValue, v, name, stateLabel(s))
	}

	calls := func(outcome string, n uint64) {
		send(ch, callsDesc, prom.CounterValue, float64(n), name, outcome)
	}
	if st.Counted {
		calls(outcomeSuccess, st.Successes)
	}
	calls(outcomeFailure, failures) // outcomes are disjoint: an injected fault is "injected"
	calls(outcomeIgnored, st.Canceled)
	calls(outcomeRejected, st.Rejections)
	calls(outcomeRateLimited, st.RateLimited)
	if cfg.Throttle > 0 || st.Throttled > 0 {
		calls(outcomeThrottled, st.Throttled)
	}
	if cfg.Concurrency > 0 || st.BulkheadFull > 0 {
		calls(outcomeBulkheadFull, st.BulkheadFull)
	}
	if cfg.Fault > 0 || st.Injected > 0 {
		calls(outcomeInjected, st.Injected)
	}

	for _, from := range states {
		for _, to := range states {
			n := st.Transitions[from][to]
			if from == to || n == 0 && !isOwn(from, to) {
				continue
			}
			send(ch, transitionsDesc, prom.CounterValue, float64(n),
				name, stateLabel(from), stateLabel(to))
		}
	}

	send(ch, consecutiveDesc, prom.GaugeValue, float64(st.ConsecutiveFailures), name)
	if st.Window != "" || cfg.WindowCalls > 0 || cfg.WindowPeriod > 0 {
		send(ch, failureRateDesc, prom.GaugeValue, st.FailureRate, name)
	}
	if cfg.Concurrency > 0 || cfg.InFlight > 0 {
		send(ch, inFlightDesc, prom.GaugeValue, float64(st.InFlight), name)
	}
}

// collectFamily reports a family's totals t and the gauges of its keys,
// labelled family=name (its name cleaned by labelvalue.Clean); failures is
// its outcome="failure" (see package internal/failseries).
func collectFamily(ch chan<- prom.Metric, name string, f *runtime.Family, t runtime.FamilyTotals, failures uint64) {
	h, cfg := f.Health(), f.Config()
	calls := func(outcome string, n uint64) {
		send(ch, familyCallsDesc, prom.CounterValue, float64(n), name, outcome)
	}
	if t.Counted {
		calls(outcomeSuccess, t.Successes)
	}
	calls(outcomeFailure, failures)
	calls(outcomeIgnored, t.Canceled)
	calls(outcomeRejected, t.Rejections)
	calls(outcomeRateLimited, t.RateLimited)
	if cfg.Throttle > 0 || t.Throttled > 0 {
		calls(outcomeThrottled, t.Throttled)
	}
	if cfg.Concurrency > 0 || t.BulkheadFull > 0 {
		calls(outcomeBulkheadFull, t.BulkheadFull)
	}
	if cfg.Fault > 0 || t.Injected > 0 {
		calls(outcomeInjected, t.Injected)
	}
	for _, from := range states {
		for _, to := range states {
			n := t.Transitions[from][to]
			if from == to || n == 0 && !isOwn(from, to) {
				continue
			}
			send(ch, familyTransitionsDesc, prom.CounterValue, float64(n),
				name, stateLabel(from), stateLabel(to))
		}
	}
	send(ch, familyKeysDesc, prom.GaugeValue, float64(t.Keys), name)
	send(ch, familyOpenKeysDesc, prom.GaugeValue, float64(t.ByState[runtime.Open]), name)
	send(ch, familyKeyLimitDesc, prom.GaugeValue, float64(h.Limit), name)
	send(ch, familyDroppedDesc, prom.CounterValue, float64(h.Dropped), name)
	send(ch, familyKeptClosedDesc, prom.CounterValue, float64(h.KeptShut), name)
}

func isOwn(from, to runtime.State) bool {
	for _, p := range own {
		if p == [2]runtime.State{from, to} {
			return true
		}
	}
	return false
}
