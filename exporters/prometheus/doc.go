// Package prometheus exports the breakers of a breakergen
// [runtime.Registry] as Prometheus metrics, through a client_golang
// collector that reads the registry when it is scraped: the calls pay
// nothing for it, and breakers created after the collector was registered
// are included. It is its own module, so that the runtime keeps depending
// on the standard library alone.
//
// # Metrics
//
//	breakergen_breaker_state{breaker,state}            gauge: 1 for the current state, 0 for the others of closed, half_open, open; isolated or bypassed only while in it
//	breakergen_breaker_calls_total{breaker,outcome}    counter: success, failure, ignored, rejected, rate_limited, throttled, bulkhead_full, injected
//	breakergen_breaker_transitions_total{breaker,from,to} counter
//	breakergen_breaker_consecutive_failures{breaker}   gauge
//	breakergen_breaker_failure_rate{breaker}           gauge, 0..1: breakers with a window
//	breakergen_breaker_in_flight{breaker}              gauge: breakers with a concurrency limit or an inflight bound
//	breakergen_chain_answers_total{source,kind}        counter: kind live, fallback, stale, hedged or none
//
// A family of per-key breakers ([runtime.Family]) is reported as one, its
// keys left out of the series above, so that the series grow with the
// families and never with their keys:
//
//	breakergen_family_calls_total{family,outcome}      counter: summed over the keys, dropped keys included
//	breakergen_family_transitions_total{family,from,to} counter: likewise
//	breakergen_family_keys{family}                      gauge: live keys
//	breakergen_family_open_keys{family}                 gauge: live keys in OPEN
//	breakergen_family_key_limit{family}                 gauge: the keys bound
//	breakergen_family_dropped_keys_total{family}        counter: keys dropped to stay within it
//	breakergen_family_kept_closed_total{family}         counter: trips maxopen kept CLOSED
//
// [WithPerKey] adds each live key as a breaker, breaker="<family>/<key>".
// A dropped key's counts stay in its family's totals, which never go down.
//
// Label values are made valid UTF-8, each run of invalid bytes replaced
// by U+FFFD, so that no name fails a scrape: client_golang refuses such a
// value, and a key comes from a request and may hold any bytes. Of names
// that become one label value that way, one is reported: the one that
// needed no cleaning, else the first in name order.
//
// Counters are the runtime's totals since the breaker was created, so a
// collector registered late still sees earlier calls and transitions;
// [runtime.Breaker.Reset] shows as a counter reset, which rate() and
// increase() handle. outcome="failure" leaves out injected faults
// ([runtime.Stats].Failures − Injected, two counters a scrape cannot read
// at one instant): it is the most that difference has been since the
// breaker was created or reset, so it never goes back between resets and
// never below 0.
//
// Outcomes are disjoint: ignored is the caller's own cancel
// ([runtime.Stats].Canceled); the limiter's, the throttle's and the
// bulkhead's refusals have their own values. An invalid answer (a `valid`
// func said no), a wait for a token that the caller's context ended, and a
// call a spent budget stopped after its admission are in none of them
// ([runtime.Stats].Ignored counts them all).
//
// A series the runtime does not count is left out, not reported as 0:
// success needs call counting ([runtime.WithCallCounts], off by default
// because it costs the success path a shared write per call; rejected is
// always there); failure_rate needs a window, in_flight a concurrency
// limit or an inflight bound, throttled a throttle and bulkhead_full a
// concurrency limit. The
// transitions a breaker makes by itself (closed→open, open→half_open,
// half_open→closed, half_open→open) are reported from the start, at 0.
//
// # Rules and dashboard
//
// Beside this package: rules.yml, alerting rules (a breaker OPEN for 5
// minutes, a breaker flapping, a chain answering from stale data, half
// of a family's keys OPEN for 5 minutes) with their
// promtool unit tests in rules_test.yml, and grafana.json, a Grafana
// dashboard of these metrics. Tests hold both to what the collector
// exports.
package prometheus
