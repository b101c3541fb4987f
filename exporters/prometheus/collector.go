package prometheus

import (
	"strings"

	"github.com/breakergen/breakergen/runtime"
	prom "github.com/prometheus/client_golang/prometheus"
)

// The metric families, as SPEC §10 names them.
var (
	stateDesc = prom.NewDesc("breakergen_breaker_state",
		"The breaker's state: 1 for the current state (closed, half_open, open, or an operator's isolated or bypassed), 0 for the others.",
		[]string{"breaker", "state"}, nil)
	callsDesc = prom.NewDesc("breakergen_breaker_calls_total",
		"Calls by outcome since the breaker was created or reset: success and rejected only with call counting (runtime.WithCallCounts); ignored is the caller's cancel.",
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
		"Answers of generated chains by source (breaker name, or stale) and kind (live, fallback, stale, hedged, none).",
		[]string{"source", "kind"}, nil)
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
	reg     *runtime.Registry
	answers func() []runtime.ChainAnswer // reg.ChainAnswers; a seam for tests
}

var _ prom.Collector = (*Collector)(nil)

// NewCollector returns a Collector of reg; a nil reg is
// [runtime.Default]. Register it with a [prom.Registerer]:
//
//	r := prom.NewRegistry()
//	r.MustRegister(prometheus.NewCollector(reg))
//	http.Handle("/metrics", promhttp.HandlerFor(r, promhttp.HandlerOpts{}))
func NewCollector(reg *runtime.Registry) *Collector {
	if reg == nil {
		reg = runtime.Default()
	}
	return &Collector{reg: reg, answers: reg.ChainAnswers}
}

// Describe sends the descriptors of every family the Collector may report.
func (c *Collector) Describe(ch chan<- *prom.Desc) {
	for _, d := range []*prom.Desc{stateDesc, callsDesc, transitionsDesc, consecutiveDesc,
		failureRateDesc, inFlightDesc, chainAnswersDesc} {
		ch <- d
	}
}

// Collect reads every breaker's [runtime.Stats] and the chains' answers
// and sends them as metrics. A series the runtime does not count is left
// out rather than reported as 0: success and rejected without
// [runtime.WithCallCounts], failure_rate without a window, in_flight
// without a concurrency limit or an inflight bound, throttled without a
// throttle and bulkhead_full without a concurrency limit.
func (c *Collector) Collect(ch chan<- prom.Metric) {
	for _, b := range c.reg.Breakers() {
		collectBreaker(ch, b.Stats(), b.Config())
	}
	for _, a := range c.answers() {
		ch <- prom.MustNewConstMetric(chainAnswersDesc, prom.CounterValue, float64(a.Count), a.Source, a.Kind)
	}
}

func collectBreaker(ch chan<- prom.Metric, st runtime.Stats, cfg runtime.Config) {
	name := st.Name
	for _, s := range states {
		v := 0.0
		if s == st.State {
			v = 1
		}
		ch <- prom.MustNewConstMetric(stateDesc, prom.GaugeValue, v, name, stateLabel(s))
	}

	calls := func(outcome string, n uint64) {
		ch <- prom.MustNewConstMetric(callsDesc, prom.CounterValue, float64(n), name, outcome)
	}
	if st.Counted {
		calls(outcomeSuccess, st.Successes)
	}
	calls(outcomeFailure, st.Failures-st.Injected) // outcomes are disjoint: an injected fault is "injected"
	calls(outcomeIgnored, st.Canceled)
	if st.Counted {
		calls(outcomeRejected, st.Rejections)
	}
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
			ch <- prom.MustNewConstMetric(transitionsDesc, prom.CounterValue, float64(n),
				name, stateLabel(from), stateLabel(to))
		}
	}

	ch <- prom.MustNewConstMetric(consecutiveDesc, prom.GaugeValue, float64(st.ConsecutiveFailures), name)
	if st.Window != "" || cfg.WindowCalls > 0 || cfg.WindowPeriod > 0 {
		ch <- prom.MustNewConstMetric(failureRateDesc, prom.GaugeValue, st.FailureRate, name)
	}
	if cfg.Concurrency > 0 || cfg.InFlight > 0 {
		ch <- prom.MustNewConstMetric(inFlightDesc, prom.GaugeValue, float64(st.InFlight), name)
	}
}

func isOwn(from, to runtime.State) bool {
	for _, p := range own {
		if p == [2]runtime.State{from, to} {
			return true
		}
	}
	return false
}
