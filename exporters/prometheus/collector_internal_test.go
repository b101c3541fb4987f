package prometheus

import (
	"strings"
	"testing"

	"github.com/breakergen/breakergen/runtime"
	prom "github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"
)

// statsCollector collects one breaker's given Stats and Config.
type statsCollector struct {
	st  runtime.Stats
	cfg runtime.Config
}

func (c statsCollector) Describe(ch chan<- *prom.Desc) { (&Collector{}).Describe(ch) }
func (c statsCollector) Collect(ch chan<- prom.Metric) {
	collectBreaker(ch, c.st.Name, c.st, c.cfg, c.st.Failures-c.st.Injected) // these tests' Stats inject nothing
}

// A pair the breaker does not make by itself (a fleet's peer closing an
// OPEN breaker) is reported once counted; refusals counted without the
// setting that makes them (the setting changed at run time) are reported.
func TestCollectBreakerReportsEveryCountedPair(t *testing.T) {
	st := runtime.Stats{Name: "tdx", State: runtime.Closed, Throttled: 2, BulkheadFull: 3}
	st.Transitions[runtime.Closed][runtime.Open] = 1
	st.Transitions[runtime.Open][runtime.Closed] = 1
	want := `
# HELP breakergen_breaker_transitions_total State transitions by from/to state since the breaker was created or reset.
# TYPE breakergen_breaker_transitions_total counter
breakergen_breaker_transitions_total{breaker="tdx",from="closed",to="open"} 1
breakergen_breaker_transitions_total{breaker="tdx",from="half_open",to="closed"} 0
breakergen_breaker_transitions_total{breaker="tdx",from="half_open",to="open"} 0
breakergen_breaker_transitions_total{breaker="tdx",from="open",to="closed"} 1
breakergen_breaker_transitions_total{breaker="tdx",from="open",to="half_open"} 0
# HELP breakergen_breaker_calls_total Calls by outcome since the breaker was created or reset: success only with call counting (runtime.WithCallCounts); ignored is the caller's cancel.
# TYPE breakergen_breaker_calls_total counter
breakergen_breaker_calls_total{breaker="tdx",outcome="bulkhead_full"} 3
breakergen_breaker_calls_total{breaker="tdx",outcome="failure"} 0
breakergen_breaker_calls_total{breaker="tdx",outcome="ignored"} 0
breakergen_breaker_calls_total{breaker="tdx",outcome="rate_limited"} 0
breakergen_breaker_calls_total{breaker="tdx",outcome="rejected"} 0
breakergen_breaker_calls_total{breaker="tdx",outcome="throttled"} 2
`
	require.NoError(t, testutil.CollectAndCompare(statsCollector{st: st}, strings.NewReader(want),
		"breakergen_breaker_transitions_total", "breakergen_breaker_calls_total"))
}
